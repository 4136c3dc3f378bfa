"""One answer per question about NaN (issue 37): /v1/execute and /v1/compare say in `shows` what each output is
(the specification, an observed engine modelled on NumPy, an engine run), take `basis` to ask every dialect the
same question, and with `"basis": "engine"` agree with the real engine, which is what `clipbridge diff`
measures (OpenVINO's CPU plugin: NaN -> min). Without `basis` every dialect runs its specification, the default
reading that /v1/translate's default witnesses use (TensorRT: the header, NaN undocumented, executed as
propagate); an observed engine is a reading one asks for (`basis: engine`, or `reading`), and `shows` says so."""

from __future__ import annotations

import importlib.util

import pytest

from clipbridge.dialects import registry

NAN = "nan"
ONNX = {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "min": 2, "max": 6}
TRT = {"dialect": "tensorrt", "dtype": "float32", "alpha": 2, "beta": 6}
OV = {"dialect": "openvino", "element_type": "f32", "min": 2, "max": 6}
X = {"dtype": "float32", "shape": [3], "data": [-1, 9, NAN]}
HAS_OPENVINO = importlib.util.find_spec("openvino") is not None


def _execute(client, spec, **extra):
    r = client.post("/v1/execute", json={"spec": spec, "input": X, **extra})
    assert r.status_code == 200, r.text
    return r.json()


@pytest.mark.parametrize("spec,basis,data,shows", [
    pytest.param(TRT, None, [2.0, 6.0, NAN], "specification", id="tensorrt-default-is-the-specification"),
    pytest.param(TRT, "specification", [2.0, 6.0, NAN], "specification", id="tensorrt-specification"),
    pytest.param(TRT, "engine", [2.0, 6.0, 2.0], "observed-engine", id="tensorrt-engine-nan-to-alpha"),
    pytest.param(OV, None, [2.0, 6.0, NAN], "specification", id="openvino-default-is-the-specification"),
    pytest.param(OV, "engine", [2.0, 6.0, 2.0], "observed-engine", id="openvino-engine-nan-to-min"),
    pytest.param(ONNX, "engine", [2.0, 6.0, NAN], "specification", id="onnx-has-no-recorded-deviation"),
    pytest.param({**TRT, "reading": "observed"}, None, [2.0, 6.0, 2.0], "observed-engine",
                 id="tensorrt-spec-pinning-observed-says-so"),
    pytest.param({**TRT, "reading": "observed"}, "specification", [2.0, 6.0, NAN], "specification",
                 id="tensorrt-pinned-observed-asked-for-the-specification"),
])
def test_execute_says_what_it_shows(client, spec, basis, data, shows):
    body = _execute(client, spec, **({"basis": basis} if basis else {}))
    assert body["output"]["data"] == data and body["shows"] == shows


def test_a_reading_named_in_the_request_wins(client):
    body = _execute(client, TRT, reading="observed")
    assert body["output"]["data"] == [2.0, 6.0, 2.0] and body["shows"] == "observed-engine"


def test_basis_specification_asks_every_dialect_the_same(client):
    """`"basis": "specification"`: each output of a compare over every dialect is the specification."""
    r = client.post("/v1/compare", json={"spec": ONNX, "input": X, "targets": "all", "basis": "specification"})
    assert r.status_code == 200, r.text
    outs = [o for o in r.json()["outputs"] if o["error"] is None]
    assert {o["semantics"] for o in outs} >= {"openvino", "tensorrt", "directml"}
    assert all(o["shows"] == "specification" for o in outs), [(o["semantics"], o["shows"]) for o in outs]
    assert len(registry.names()) >= len(outs)


def test_without_basis_every_dialect_shows_its_specification(client):
    """The default is the same for every dialect: the specification, output for output the same as asking for it."""
    plain = client.post("/v1/compare", json={"spec": ONNX, "input": X, "targets": "all"}).json()["outputs"]
    asked = client.post("/v1/compare", json={"spec": ONNX, "input": X, "targets": "all",
                                             "basis": "specification"}).json()["outputs"]
    shows = {o["semantics"]: o["shows"] for o in plain if o["error"] is None}
    assert {"tensorrt", "openvino", "webnn"} <= shows.keys()
    assert set(shows.values()) == {"specification"}, shows
    assert [(o["semantics"], o["output"], o["reading"]) for o in plain] == \
        [(o["semantics"], o["output"], o["reading"]) for o in asked]


def test_basis_engine_runs_each_dialects_engine_reading(client):
    """`"basis": "engine"`: every dialect with a recorded engine reading or rule says observed-engine; the rest
    show their specification (nothing recorded to differ)."""
    r = client.post("/v1/compare", json={"spec": ONNX, "input": X, "targets": "all", "basis": "engine"})
    outs = {o["semantics"]: o for o in r.json()["outputs"] if o["error"] is None}
    recorded = {n for n, d in registry.DIALECTS.items() if d.engine_reading or d.engine_nan_input}
    assert {"tensorrt", "openvino", "webnn"} <= recorded
    for name, o in outs.items():
        assert o["shows"] == ("observed-engine" if name in recorded else "specification"), (name, o)
    assert outs["tensorrt"]["reading"] == "observed" and outs["tensorrt"]["output"]["data"] == [2.0, 6.0, 2.0]
    assert outs["webnn"]["reading"] == "chromium"


@pytest.mark.skipif(not HAS_OPENVINO, reason="needs the openvino engine ([diff] extra)")
@pytest.mark.parametrize("dtype,element_type,bounds", [
    pytest.param("float32", "f32", {}, id="f32"),
    pytest.param("float16", "f16", {}, id="f16"),
    pytest.param("float16", "f16", {"min": 3, "max": 3}, id="f16-min-eq-max"),
    pytest.param("float16", "f16", {"min": -0.1, "max": 0.3}, id="f16-bounds-rounded"),
])
def test_the_engine_basis_agrees_with_the_real_openvino(client, dtype, element_type, bounds):
    """The oracle is OpenVINO itself (the openvino backend, the engine diff runs), not clipbridge's model."""
    spec = {**OV, "element_type": element_type, **bounds}
    x = {**X, "dtype": dtype, "shape": [7], "data": [-1, 9, NAN, 0.25, 4, "-inf", "inf"]}
    modelled = client.post("/v1/execute", json={"spec": spec, "input": x, "basis": "engine"}).json()
    ran = client.post("/v1/execute", json={"spec": spec, "input": x, "backend": "openvino"}).json()
    assert ran["shows"] == "engine" and modelled["shows"] == "observed-engine"
    assert modelled["output"]["data"] == ran["output"]["data"]


@pytest.mark.skipif(not HAS_OPENVINO, reason="needs the openvino engine ([diff] extra)")
@pytest.mark.parametrize("dtype,element_type", [pytest.param("float32", "f32", id="f32"),
                                                pytest.param("float16", "f16", id="f16")])
def test_min_gt_max_the_engine_basis_refuses_as_openvino_does(client, dtype, element_type):
    """Clamp-1 with min > max: OpenVINO refuses to build it (m_min <= m_max), and so does every basis; no
    output is invented for it."""
    spec = {**OV, "element_type": element_type, "min": 6, "max": 2}
    x = {**X, "dtype": dtype}
    ran = client.post("/v1/execute", json={"spec": spec, "input": x, "backend": "openvino"})
    assert ran.status_code == 422, ran.text
    for basis in ("engine", "specification"):
        modelled = client.post("/v1/execute", json={"spec": spec, "input": x, "basis": basis})
        assert modelled.status_code == 422 and modelled.json()["title"] == "Rejected by the framework", modelled.text


def test_the_npy_route_says_what_it_shows(client):
    import io
    import json

    import numpy as np
    buf = io.BytesIO()
    np.save(buf, np.array([-1, 9, np.nan], dtype=np.float32))
    r = client.post("/v1/execute.npy", params={"request": json.dumps({"spec": OV, "basis": "engine"})},
                    content=buf.getvalue(), headers={"content-type": "application/x-npy"})
    assert r.status_code == 200, r.text
    assert r.headers["x-clipbridge-shows"] == "observed-engine"
    assert np.load(io.BytesIO(r.content)).tolist() == [2.0, 6.0, 2.0]
