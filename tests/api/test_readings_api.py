"""`reading` on /v1/execute, /v1/execute.npy, /v1/compare and the per-reading findings of /v1/translate, for the
dialects whose readings share the general mechanism (Dialect.readings, Meaning.alternates): TensorRT (header, the
default as every dialect's specification is; observed, its engine as reported) and TFLite (xnnpack, builtin),
beside WebNN's and DirectML's (tests/dialects/test_webnn.py)."""

from __future__ import annotations

import io
import json
import math
import urllib.parse

import numpy as np
import pytest

from clipbridge.api.models import CompareResponse, ExecuteResponse

TRT = {"dialect": "tensorrt", "dtype": "float32", "alpha": 0, "beta": 6}
TRT_HEADER = {**TRT, "reading": "header"}  # the spec names the default, header, as its meaning's own reading
TRT_OBSERVED = {**TRT, "reading": "observed"}  # the spec pins observed as its meaning's own reading
TFL_MM = {"dialect": "tflite", "op": "MINIMUM_MAXIMUM", "dtype": "float32", "min": 0, "max": 5}
TFL_CROSSED = {**TFL_MM, "min": 6, "max": 4}
TFL_NAN_MAX = {**TFL_MM, "max": "nan"}
TFL_NAN_MIN = {**TFL_MM, "min": "nan"}
TFL_I8 = {"dialect": "tflite", "op": "RELU6", "dtype": "int8", "quantization": {"scale": 0.07, "zero_point": 0}}
ONNX_F32 = {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "min": 0, "max": 5}
X = ["nan", -1, 3, 9]
NAN = "nan"


def _litert():
    pytest.importorskip("ai_edge_litert.interpreter")
    pytest.importorskip("tflite")


def execute(client, spec, data, dtype="float32", **extra):
    body = {"spec": spec, "input": {"dtype": dtype, "shape": [len(data)], "data": data}, **extra}
    r = client.post("/v1/execute", json={k: v for k, v in body.items() if v is not None})
    json.loads(r.text, parse_constant=lambda c: pytest.fail(f"bare {c}"))
    return r


# spec, semantics, reading, backend, output, reported reading
EXECUTE = [
    pytest.param(TRT, None, None, "numpy", [NAN, 0.0, 3.0, 6.0], "header", id="tensorrt-default-header"),
    pytest.param(TRT, None, "observed", "numpy", [0.0, 0.0, 3.0, 6.0], "observed", id="tensorrt-observed"),
    pytest.param(TRT, None, "header", "numpy", [NAN, 0.0, 3.0, 6.0], "header", id="tensorrt-header-propagates"),
    pytest.param(TRT_HEADER, None, None, "numpy", [NAN, 0.0, 3.0, 6.0], "header", id="tensorrt-spec-pins-header"),
    pytest.param(TRT_HEADER, None, "observed", "numpy", [0.0, 0.0, 3.0, 6.0], "observed",
                 id="tensorrt-request-overrides-spec"),
    pytest.param(TRT_OBSERVED, None, None, "numpy", [0.0, 0.0, 3.0, 6.0], "observed",
                 id="tensorrt-spec-pins-observed"),
    pytest.param(TRT_OBSERVED, None, "header", "numpy", [NAN, 0.0, 3.0, 6.0], "header",
                 id="tensorrt-request-overrides-pinned-observed"),
    pytest.param(ONNX_F32, "tensorrt", "header", "numpy", [NAN, 0.0, 3.0, 5.0], "header",
                 id="onnx-under-tensorrt-header"),
    pytest.param(ONNX_F32, "tensorrt", None, "numpy", [NAN, 0.0, 3.0, 5.0], "header",
                 id="onnx-under-tensorrt-default-header"),
    pytest.param(ONNX_F32, "tensorrt", "observed", "numpy", [0.0, 0.0, 3.0, 5.0], "observed",
                 id="onnx-under-tensorrt-observed"),
    pytest.param(TFL_MM, None, None, "numpy", [NAN, 0.0, 3.0, 5.0], "xnnpack", id="tflite-default-xnnpack"),
    pytest.param(TFL_MM, None, "builtin", "numpy", [5.0, 0.0, 3.0, 5.0], "builtin", id="tflite-builtin-nan-is-max"),
    pytest.param(TFL_CROSSED, None, "builtin", "numpy", [6.0, 6.0, 6.0, 6.0], "builtin",
                 id="tflite-builtin-crossed-gives-min"),
    pytest.param(TFL_NAN_MAX, None, "builtin", "numpy", [0.0, 0.0, 0.0, 0.0], "builtin",
                 id="tflite-builtin-nan-max-gives-min"),
    pytest.param(TFL_NAN_MIN, None, "builtin", "numpy", [NAN] * 4, "builtin", id="tflite-builtin-nan-min-all-nan"),
    pytest.param(ONNX_F32, "tflite", "builtin", "numpy", [5.0, 0.0, 3.0, 5.0], "builtin",
                 id="onnx-under-tflite-builtin"),
    pytest.param(TFL_MM, None, None, "litert", [NAN, 0.0, 3.0, 5.0], "xnnpack", id="litert-default-xnnpack"),
    pytest.param(TFL_MM, None, "xnnpack", "litert", [NAN, 0.0, 3.0, 5.0], "xnnpack", id="litert-xnnpack"),
    pytest.param(TFL_MM, None, "builtin", "litert", [5.0, 0.0, 3.0, 5.0], "builtin",
                 id="litert-builtin-runs-the-builtin-kernels"),
    pytest.param(TFL_CROSSED, None, "builtin", "litert", [6.0, 6.0, 6.0, 6.0], "builtin",
                 id="litert-builtin-crossed"),
    pytest.param(TFL_NAN_MAX, None, "builtin", "litert", [0.0, 0.0, 0.0, 0.0], "builtin",
                 id="litert-builtin-nan-max"),
    pytest.param(TFL_NAN_MIN, None, "builtin", "litert", [NAN] * 4, "builtin", id="litert-builtin-nan-min"),
    pytest.param(ONNX_F32, "tflite", "builtin", "litert", [5.0, 0.0, 3.0, 5.0], "builtin",
                 id="litert-onnx-under-tflite-builtin"),
]


@pytest.mark.parametrize("spec,semantics,reading,backend,want,reported", EXECUTE)
def test_execute_reading(client, spec, semantics, reading, backend, want, reported):
    if backend == "litert":
        _litert()
    r = execute(client, spec, X, semantics=semantics, reading=reading, backend=backend)
    assert r.status_code == 200, r.text
    body = ExecuteResponse.model_validate(r.json())
    assert body.output.data == want and body.reading == reported


@pytest.mark.parametrize("reading,reported", [pytest.param(None, "xnnpack", id="default"),
                                              pytest.param("builtin", "builtin", id="builtin")])
@pytest.mark.parametrize("backend", ["numpy", "litert"])
def test_execute_quantized_reads_the_same_under_both(client, reading, reported, backend):
    """RELU6 int8, scale 0.07: bounds 0 and roundf(6 / 0.07) = 86 on either path."""
    if backend == "litert":
        _litert()
    r = execute(client, TFL_I8, [-128, 50, 127], dtype="int8", reading=reading, backend=backend)
    assert r.status_code == 200, r.text
    assert (r.json()["output"]["data"], r.json()["reading"]) == ([0, 50, 86], reported)


def _npy(arr: np.ndarray) -> bytes:
    b = io.BytesIO()
    np.save(b, arr, allow_pickle=False)
    return b.getvalue()


@pytest.mark.parametrize("reading,header,kept", [
    pytest.param(None, None, False, id="xnnpack-flushes-subnormals"),
    pytest.param("xnnpack", "xnnpack", False, id="xnnpack-named"),
    pytest.param("builtin", "builtin", True, id="builtin-keeps-subnormals"),
])
def test_execute_npy_litert_runs_the_readings_setup(client, reading, header, kept):
    """The engine, not just the meaning, follows the reading: XNNPACK flushes a float32 subnormal input of RELU6
    (tflite NOTE_FTZ), the builtin kernels keep it."""
    _litert()
    x = np.array([1e-40, -1.0, 7.0], np.float32)
    opts = {"spec": {"dialect": "tflite", "op": "RELU6", "dtype": "float32"}, "backend": "litert",
            **({"reading": reading} if reading else {})}
    r = client.post(f"/v1/execute.npy?request={urllib.parse.quote(json.dumps(opts))}", content=_npy(x),
                    headers={"content-type": "application/x-npy"})
    assert r.status_code == 200, r.text
    y = np.load(io.BytesIO(r.content))
    assert y[0] == (np.float32(1e-40) if kept else 0.0) and list(y[1:]) == [0.0, 6.0]
    assert r.headers.get("X-Clipbridge-Reading") == (header or "xnnpack")


def test_execute_npy_tensorrt_header(client):
    x = np.array([math.nan, 7.0], np.float32)
    opts = {"spec": TRT, "reading": "header"}
    r = client.post(f"/v1/execute.npy?request={urllib.parse.quote(json.dumps(opts))}", content=_npy(x),
                    headers={"content-type": "application/x-npy"})
    assert r.status_code == 200, r.text
    y = np.load(io.BytesIO(r.content))
    assert math.isnan(y[0]) and y[1] == 6.0 and r.headers["X-Clipbridge-Reading"] == "header"


# --- compare -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("semantics,reading,want", [
    pytest.param(["onnx", "tensorrt"], "header", {"onnx": (NAN, None), "tensorrt": (NAN, "header")},
                 id="tensorrt-header"),
    pytest.param(["onnx", "tensorrt"], None, {"onnx": (NAN, None), "tensorrt": (NAN, "header")},
                 id="tensorrt-default"),
    pytest.param(["onnx", "tensorrt"], "observed", {"onnx": (NAN, None), "tensorrt": (0.0, "observed")},
                 id="tensorrt-observed"),
    pytest.param(["onnx", "tflite"], "builtin", {"onnx": (NAN, None), "tflite": (5.0, "builtin")},
                 id="tflite-builtin"),
    pytest.param(["tflite", "tensorrt"], "builtin", {"tflite": (5.0, "builtin"), "tensorrt": (NAN, "header")},
                 id="builtin-applies-to-tflite-only"),
    pytest.param(["tensorrt", "webnn"], "header", {"tensorrt": (NAN, "header"), "webnn": (NAN, "spec")},
                 id="header-beside-webnn-default"),
])
def test_compare_reading(client, semantics, reading, want):
    body = {"spec": ONNX_F32, "input": {"dtype": "float32", "shape": [2], "data": [NAN, 9]}, "semantics": semantics,
            **({"reading": reading} if reading else {})}
    r = client.post("/v1/compare", json=body)
    assert r.status_code == 200, r.text
    outs = {o.semantics: o for o in CompareResponse.model_validate(r.json()).outputs}
    got = {k: (o.output.data[0] if o.output.data[0] == NAN else float(o.output.data[0]), o.reading)
           for k, o in outs.items()}
    assert got == want


def test_compare_reading_reaches_the_engine(client):
    """backend litert: the builtin reading runs the builtin kernels (NaN -> max), the default XNNPACK (NaN)."""
    _litert()
    base = {"spec": TFL_MM, "input": {"dtype": "float32", "shape": [1], "data": [NAN]}, "semantics": ["tflite"],
            "backend": "litert"}
    outs = [client.post("/v1/compare", json={**base, **extra}).json()["outputs"][0] for extra in
            ({}, {"reading": "builtin"})]
    assert [(o["output"]["data"], o["reading"]) for o in outs] == [([NAN], "xnnpack"), ([5.0], "builtin")]


# --- a reading the semantics does not take: 400 naming `reading` ---------------------------------------------

@pytest.mark.parametrize("path,spec,semantics,reading,valid", [
    pytest.param("/v1/execute", TRT, None, "builtin", "header, observed", id="tflite-reading-for-tensorrt"),
    pytest.param("/v1/execute", TFL_MM, None, "header", "xnnpack, builtin", id="tensorrt-reading-for-tflite"),
    pytest.param("/v1/execute", ONNX_F32, "tflite", "chromium", "xnnpack, builtin", id="webnn-reading-for-tflite"),
    pytest.param("/v1/execute", ONNX_F32, None, "observed", "take none", id="tensorrt-reading-for-onnx"),
    pytest.param("/v1/compare", ONNX_F32, ["onnx", "tensorrt"], "builtin", "header, observed",
                 id="compare-no-semantics-takes-it"),
    pytest.param("/v1/compare", ONNX_F32, ["onnx", "stablehlo"], "header", "take none", id="compare-none-take-any"),
])
def test_unknown_reading_for_the_semantics_is_400(client, path, spec, semantics, reading, valid):
    body = {"spec": spec, "input": {"dtype": "float32", "shape": [1], "data": [0]}, "reading": reading}
    if semantics:
        body["semantics"] = semantics
    r = client.post(path, json=body)
    assert r.status_code == 400, r.text
    assert r.json()["errors"][0]["loc"] == "reading" and valid in r.json()["detail"]


def test_npy_unknown_reading_for_the_semantics_is_400(client):
    opts = {"spec": TRT, "reading": "xnnpack"}
    r = client.post(f"/v1/execute.npy?request={urllib.parse.quote(json.dumps(opts))}",
                    content=_npy(np.zeros(1, np.float32)), headers={"content-type": "application/x-npy"})
    assert r.status_code == 400 and r.json()["errors"][0]["loc"] == "request.reading" and "header, observed" in r.text


def test_reading_name_no_dialect_has_is_a_schema_error(client):
    r = execute(client, TRT, [0], reading="headers")
    assert r.status_code == 422 and "reading" in r.text


# --- translate: findings under the non-default reading -------------------------------------------------------

@pytest.mark.parametrize("source,target,reading,code,witness", [
    pytest.param(ONNX_F32, "tflite", "builtin", "nan-input", [NAN, NAN, 5.0], id="onnx-to-tflite-builtin-nan-max"),
    pytest.param(TFL_CROSSED, "onnx", "builtin", "nan-input", [NAN, 6.0, NAN], id="tflite-builtin-to-onnx"),
    pytest.param({"dialect": "tosa", "dtype": "fp32", "min_val": 0, "max_val": 6}, "tensorrt", "observed",
                 "nan-input", [NAN, NAN, 0.0], id="tosa-propagate-to-tensorrt-observed-nan-to-alpha"),
    pytest.param(TRT, "tosa", "observed", "nan-input", [NAN, 0.0, NAN], id="default-spec-under-observed"),
    pytest.param(TRT_HEADER, "tosa", "observed", "nan-input", [NAN, 0.0, NAN], id="header-spec-under-observed"),
    pytest.param(TRT_OBSERVED, "tosa", "header", "nan-input", None, id="observed-spec-under-header-undocumented"),
])
def test_translate_reports_the_other_reading(client, source, target, reading, code, witness):
    r = client.post("/v1/translate", json={"source": source, "targets": [target], "mode": "preserve"})
    assert r.status_code == 200, r.text
    tr = r.json()["translations"][0]
    hits = [f for f in tr["findings"] if f["message"].startswith(f"under the {reading} reading:")
            and f["code"] == code and f["severity"] != "info"]
    assert hits and tr["status"] == "drift", tr["findings"]
    w = hits[0]["witness"]
    assert (None if w is None else [w["input"], w["source_output"], w["target_output"]]) == witness
    assert hits[0]["reading"] == reading and (w is None or w["reading"] == reading)
