"""/v1/execute, /v1/execute.npy and /v1/compare: semantics, backends, transports, limits."""

from __future__ import annotations

import io
import json
import math
import re
import threading
import urllib.parse

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clipbridge.api.models import CompareResponse, ExecuteResponse

F32_RELU6 = {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "min": 0, "max": 6}
I8_CROSSED = {"dialect": "onnx", "opset": 13, "elem_type": "INT8", "min": 5, "max": 2}
DML_I8 = {"dialect": "directml", "feature_level": "2_1",
          "desc": {"InputTensor": {"DataType": "INT8", "Sizes": [1, 1, 1, 4]},
                   "OutputTensor": {"DataType": "INT8", "Sizes": [1, 1, 1, 4]}, "Min": 0.5, "Max": 2.5}}


def execute(client, **body):
    r = client.post("/v1/execute", json=body)
    json.loads(r.text, parse_constant=lambda c: pytest.fail(f"bare {c}"))
    return r


@pytest.mark.parametrize("spec,semantics,data,expected,status", [
    pytest.param(F32_RELU6, None, ["nan", "-inf", -1, 3, 9], ["nan", 0.0, 0.0, 3.0, 6.0], 200, id="onnx-own"),
    pytest.param(I8_CROSSED, None, [-128, 3, 127], [2, 2, 2], 200, id="onnx-crossed-gives-max"),
    pytest.param(I8_CROSSED, "openvino", [-128, 3, 127], None, 422, id="openvino-rejects-crossed"),
    pytest.param(I8_CROSSED, "directml", [-128, 3, 127], [5, 5, 5], 200, id="directml-ambiguous-current-doc"),
    pytest.param(DML_I8, None, [0, 1, 2, 3], [0, 1, 2, 2], 200, id="directml-truncates"),
    pytest.param(DML_I8, "openvino", [0, 1, 2, 3], [1, 1, 2, 2], 200, id="openvino-ceils-literal"),
    pytest.param(DML_I8, {"dialect": "onnx", "opset": 11}, [0, 1], None, 422, id="clip11-no-int8"),
])
def test_execute_semantics(client, spec, semantics, data, expected, status):
    dtype = "float32" if "FLOAT" in json.dumps(spec) else "int8"
    r = execute(client, spec=spec, input={"dtype": dtype, "shape": [len(data)], "data": data}, semantics=semantics)
    assert r.status_code == status, r.text
    if status == 200:
        body = ExecuteResponse.model_validate(r.json())
        assert body.output.data == expected
    else:
        assert r.headers["content-type"].startswith("application/problem+json")


def test_ambiguous_reading_is_selectable_and_reported(client):
    for reading, want in (("current-doc", [5, 5]), ("2022-doc", [2, 2])):
        r = execute(client, spec=I8_CROSSED, input={"dtype": "int8", "shape": [2], "data": [0, 9]},
                    semantics="directml", reading=reading)
        assert r.json()["output"]["data"] == want
        assert r.json()["reading"].startswith(reading)


def test_engine_backends_agree_with_numpy_except_engine_behaviour(client):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("openvino")
    data = ["nan", "-inf", "inf", -1, -0.0, 0.5, 5.999, 6, 1e30]
    inp = {"dtype": "float32", "shape": [len(data)], "data": data}
    ort = execute(client, spec=F32_RELU6, input=inp, backend="onnxruntime").json()["output"]["data"]
    emu = execute(client, spec=F32_RELU6, input=inp).json()["output"]["data"]
    assert ort == emu
    ov_spec = {"dialect": "openvino", "element_type": "f32", "min": 0, "max": 6}
    ov = execute(client, spec=ov_spec, input=inp, backend="openvino").json()["output"]["data"]
    emu_ov = execute(client, spec=ov_spec, input=inp).json()["output"]["data"]
    assert ov[1:] == emu_ov[1:]
    # engine-behaviour: the OpenVINO CPU plugin clamps NaN to min where the spec propagates it.
    assert emu_ov[0] == "nan" and ov[0] == 0.0


def test_backend_for_another_dialect_is_a_clear_4xx(client):
    r = execute(client, spec=F32_RELU6, input={"dtype": "float32", "shape": [1], "data": [1]}, backend="openvino")
    assert r.status_code == 422 and "openvino semantics" in r.json()["detail"]


def test_cupy_backend_without_gpu_is_a_clear_4xx(client):
    from clipbridge.service.execute import cupy_available
    if cupy_available():
        pytest.skip("a CUDA device is present: the GPU tests cover it")
    r = execute(client, spec=F32_RELU6, input={"dtype": "float32", "shape": [1], "data": [1]}, backend="cupy")
    assert r.status_code == 422 and "CuPy" in r.json()["detail"]
    r = execute(client, spec=F32_RELU6, input={"dtype": "float32", "shape": [1], "data": [1]}, backend="auto")
    assert r.status_code == 200 and r.json()["backend"] == "numpy"


def npy_bytes(arr: np.ndarray) -> bytes:
    b = io.BytesIO()
    np.save(b, arr, allow_pickle=False)
    return b.getvalue()


def post_npy(client, options: dict, body: bytes, ctype: str = "application/x-npy"):
    q = urllib.parse.quote(json.dumps(options))
    return client.post(f"/v1/execute.npy?request={q}", content=body, headers={"content-type": ctype})


@pytest.mark.parametrize("dtype,spec", [
    pytest.param("float32", F32_RELU6, id="f32"),
    pytest.param("float16", dict(F32_RELU6, elem_type="FLOAT16"), id="f16"),
    pytest.param("int8", DML_I8, id="dml-int8"),
    pytest.param("uint64", {"dialect": "onnx", "opset": 13, "elem_type": "UINT64", "min": 3,
                            "max": "18446744073709551000"}, id="u64-big"),
])
@pytest.mark.parametrize("order", ["C", "F"])
def test_binary_and_json_transports_agree(client, dtype, spec, order):
    rng = np.random.default_rng(7)
    if dtype.startswith("float"):
        x = rng.normal(0, 8, (3, 5)).astype(dtype)
        x[0, 0], x[1, 1] = np.nan, -np.inf
    else:
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, (3, 5), dtype=dtype, endpoint=True)
    x = np.asarray(x, order=order)
    r = post_npy(client, {"spec": spec}, npy_bytes(x))
    assert r.status_code == 200, r.text
    y_bin = np.load(io.BytesIO(r.content), allow_pickle=False)
    from clipbridge.core.tensors import json_values
    from clipbridge.core.dtypes import BY_NAME
    inp = {"dtype": dtype, "shape": list(x.shape), "data": json_values(x, BY_NAME[dtype])}
    y_json = execute(client, spec=spec, input=inp).json()["output"]
    assert y_json["data"] == json_values(y_bin, BY_NAME[dtype])
    assert y_bin.shape == x.shape


@pytest.mark.parametrize("body,ctype,status,fragment", [
    pytest.param(b"not npy at all", "application/x-npy", 422, "magic", id="not-npy"),
    pytest.param(npy_bytes(np.zeros(3, np.float64)), "application/x-npy", 422, "does not match", id="dtype-mismatch"),
    pytest.param(npy_bytes(np.zeros(3, np.float32))[:-4], "application/x-npy", 422, "needs", id="truncated"),
    pytest.param(npy_bytes(np.zeros(3, ">f4")), "application/x-npy", 422, "little-endian", id="big-endian"),
    pytest.param(npy_bytes(np.zeros(3, np.float32)), "application/json", 415, "x-npy", id="wrong-content-type"),
])
def test_bad_npy(client, body, ctype, status, fragment):
    r = post_npy(client, {"spec": F32_RELU6}, body, ctype)
    assert r.status_code == status, r.text
    assert fragment in r.json()["detail"]


def test_pickled_npy_is_refused_without_unpickling(client, tmp_path):
    marker = tmp_path / "pwned"
    payload = io.BytesIO()
    np.save(payload, np.array([object()], dtype=object), allow_pickle=True)
    r = post_npy(client, {"spec": F32_RELU6}, payload.getvalue())
    assert r.status_code == 422 and "pickle" in r.json()["detail"]
    assert not marker.exists()


def test_limits_413_422_503():
    from fastapi.testclient import TestClient

    from clipbridge.main import create_app
    from clipbridge.core.settings import Settings
    c = TestClient(create_app(Settings(max_json_elements=10, max_npy_bytes=1000, max_concurrent_executions=1)))
    r = c.post("/v1/execute", json={"spec": F32_RELU6, "input": {"dtype": "float32", "shape": [11],
                                                                  "data": [0] * 11}})
    assert r.status_code == 413
    r = post_npy(c, {"spec": F32_RELU6}, npy_bytes(np.zeros(1000, np.float32)))
    assert r.status_code == 413
    r = c.post("/v1/execute", json={"spec": F32_RELU6, "input": {"dtype": "int8", "shape": [1], "data": [0]}})
    assert r.status_code == 422 and "float32" in r.json()["detail"]
    slot = c.app.state.slots
    assert slot._sem.acquire(blocking=False)  # hold the only slot, as a running execution would
    try:
        r = c.post("/v1/execute", json={"spec": F32_RELU6, "input": {"dtype": "float32", "shape": [1],
                                                                      "data": [1]}})
        assert r.status_code == 503 and r.headers["retry-after"] == "1"
        assert r.headers["content-type"].startswith("application/problem+json")
    finally:
        slot._sem.release()


def test_compare_default_all_three_and_pairs(client):
    r = client.post("/v1/compare", json={"spec": DML_I8, "input": {"dtype": "int8", "shape": [4],
                                                                  "data": [0, 1, 2, 3]}})
    assert r.status_code == 200, r.text
    body = CompareResponse.model_validate(r.json())
    outs = {o.semantics: o.output.data for o in body.outputs}
    assert outs == {"onnx": [0, 1, 2, 2], "openvino": [1, 1, 2, 2], "directml": [0, 1, 2, 2]}
    pair = next(p for p in body.pairs if (p.a, p.b) == ("onnx", "openvino"))
    assert pair.differing == 1 and pair.first[0].index == [0]
    assert (pair.first[0].input, pair.first[0].a_output, pair.first[0].b_output) == (0, 0, 1)


def test_compare_reports_a_rejecting_semantics_and_keeps_the_rest(client):
    r = client.post("/v1/compare", json={"spec": I8_CROSSED, "input": {"dtype": "int8", "shape": [1], "data": [0]}})
    body = r.json()
    ov = next(o for o in body["outputs"] if o["semantics"] == "openvino")
    assert ov["output"] is None and "m_min <= m_max" in ov["error"]
    assert {p["a"] + "/" + p["b"] for p in body["pairs"]} == {"onnx/directml"}


def test_onnx_backend_clip_node_tests_through_execute(client):
    from onnx import numpy_helper
    from onnx.backend.test.case.node import collect_testcases
    cases = [t for t in collect_testcases(None) if t.name.startswith("test_clip") and "expanded" not in t.name]
    assert cases
    ran = 0
    for case in cases:
        model = case.model
        opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
        names = [i.name for i in model.graph.input]
        for inputs, outputs in case.data_sets:
            x = inputs[0]
            bounds = dict(zip(names[1:], inputs[1:]))
            clip = model.graph.node[0]
            spec = {"dialect": "onnx", "opset": opset,
                    "elem_type": {np.float32: "FLOAT", np.int8: "INT8"}[x.dtype.type]}
            for pos, side in ((1, "min"), (2, "max")):
                if len(clip.input) > pos and clip.input[pos]:
                    v = bounds[clip.input[pos]].item()
                    spec[side] = v
            from clipbridge.core.dtypes import BY_NUMPY
            from clipbridge.core.tensors import json_values
            dt = BY_NUMPY[x.dtype]
            r = execute(client, spec=spec, input={"dtype": dt.name, "shape": list(x.shape),
                                                  "data": json_values(x, dt)})
            assert r.status_code == 200, (case.name, r.text)
            assert r.json()["output"]["data"] == json_values(outputs[0], dt), case.name
            ran += 1
    assert ran >= 10


# --- every witness that translate returns reproduces through /v1/compare ----------------------------------

DTYPES = {"onnx": ["FLOAT", "FLOAT16", "INT8", "UINT8", "INT32", "INT64", "UINT16"],
          "openvino": ["f32", "f16", "i8", "u8", "i32", "i64", "u16"]}
BOUND = st.one_of(st.integers(-300, 300), st.floats(-300, 300, allow_nan=False, width=32),
                  st.sampled_from([0.5, -0.5, 2.5, 1e10, -1e10, 65504.0, 70000.0, "inf", "-inf"]))


@st.composite
def source_specs(draw):
    kind = draw(st.sampled_from(["onnx", "openvino", "directml"]))
    lo, hi = draw(BOUND), draw(BOUND)
    if kind == "onnx":
        et = draw(st.sampled_from(DTYPES["onnx"]))
        opset = draw(st.sampled_from([6, 11, 12, 13])) if et in ("FLOAT", "FLOAT16") else draw(st.sampled_from([12, 13]))
        spec = {"dialect": "onnx", "opset": opset, "elem_type": et}
        if "FLOAT" not in et:
            # typed integer bounds must be values of the type
            info = np.iinfo({"INT8": np.int8, "UINT8": np.uint8, "INT32": np.int32, "INT64": np.int64,
                             "UINT16": np.uint16}[et])
            lo = draw(st.integers(int(info.min), int(info.max)))
            hi = draw(st.integers(int(info.min), int(info.max)))
        if draw(st.booleans()):
            spec["min"] = lo
        if draw(st.booleans()):
            spec["max"] = hi
        return spec
    if kind == "openvino":
        fl = [float(v) if not isinstance(v, str) else v for v in (lo, hi)]
        if not isinstance(fl[0], str) and not isinstance(fl[1], str) and fl[0] > fl[1]:
            fl.reverse()
        if fl[0] == "inf" or fl[1] == "-inf":
            fl = ["-inf", "inf"]
        return {"dialect": "openvino", "element_type": draw(st.sampled_from(DTYPES["openvino"])),
                "min": fl[0], "max": fl[1]}
    dt = draw(st.sampled_from(["FLOAT32", "FLOAT16", "INT8", "UINT8", "INT32", "UINT16"]))
    if "FLOAT" not in dt and (isinstance(lo, str) or isinstance(hi, str)):
        lo, hi = -3.5, 7.25
    t = {"DataType": dt, "Sizes": [1, 1, 1, 2]}
    return {"dialect": "directml", "feature_level": "3_0",
            "desc": {"InputTensor": t, "OutputTensor": t, "Min": lo, "Max": hi}}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(spec=source_specs(), mode=st.sampled_from(["preserve", "literal"]))
def test_every_witness_reproduces_through_compare(client, spec, mode):
    r = client.post("/v1/translate", json={"source": spec, "mode": mode})
    if r.status_code == 422:
        return  # a source its own framework refuses has no translations to witness
    assert r.status_code == 200, r.text
    body = r.json()
    dtype = body["meaning"]["dtype"]
    for t in body["translations"]:
        if t["target"] is None:
            continue
        for f in t["findings"]:
            w = f["witness"]
            if not w:
                continue
            # A finding "under the 2022-doc reading: ..." has its witness under that reading (Meaning.alternates).
            named = re.match(r"under the (\S+) reading: ", f["message"])
            c = client.post("/v1/compare", json={"spec": spec, "mode": mode, "input": {
                "dtype": dtype, "shape": [1], "data": [w["input"]]}, "semantics": [
                body["source"]["dialect"], t["target"]["dialect"]], "reading": named and named.group(1)})
            assert c.status_code == 200, c.text
            outs = c.json()["outputs"]
            assert outs[0]["output"]["data"] == [w["source_output"]], (spec, t["target"], f)
            assert outs[1]["output"] is not None, outs[1]
            assert outs[1]["output"]["data"] == [w["target_output"]], (spec, t["target"], f)
            assert c.json()["pairs"][0]["differing"] == 1, (spec, f)


I8 = {"dialect": "onnx", "opset": 13, "elem_type": "INT8", "min": 0, "max": 6}


@pytest.mark.parametrize("spec,dtype,data,loc", [
    pytest.param(I8, "int8", [{"a": 1}, 2], "input.data[0]", id="int-object"),
    pytest.param(I8, "int8", [[1], 2], "input.data[0]", id="int-nested-list"),
    pytest.param(I8, "int8", [None, 2], "input.data[0]", id="int-null"),
    pytest.param(F32_RELU6, "float32", [None, 2], "input.data[0]", id="float-null-not-nan"),
    pytest.param(F32_RELU6, "float32", [1, [2]], "input.data[1]", id="float-nested-list"),
    pytest.param(I8, "int8", [True, 2], "input.data[0]", id="bool"),
    pytest.param(I8, "int8", ["1e400", 2], "input.data[0]", id="int-from-inf-string"),
    pytest.param(I8, "int8", [1.5, 2], "input.data[0]", id="int-fraction"),
    pytest.param(I8, "int8", [300, 2], "input.data[0]", id="int-out-of-range"),
    pytest.param(F32_RELU6, "float32", [1, 2, 3], "input.data", id="count-mismatch"),
])
def test_bad_json_tensors_are_422_naming_the_element(client, spec, dtype, data, loc):
    r = execute(client, spec=spec, input={"dtype": dtype, "shape": [2], "data": data})
    assert r.status_code == 422, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    assert any(e["loc"] == loc for e in r.json()["errors"]), r.json()
