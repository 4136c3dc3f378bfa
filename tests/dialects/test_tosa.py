"""TOSA 1.0 CLAMP: resolve() (typed attributes, ERROR_IF rejections, nan_mode), the section 4.5 witnesses of
../shared/reference/more-dialects.md, translations, the MLIR and flatbuffer artifacts, and the TOSA reference model
(tosa-tools) against the meaning in a differential sweep; the spec's apply_clip_s pseudocode is the oracle."""

from __future__ import annotations

import base64
import json
import math
import os
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clipbridge.dialects import tosa
from clipbridge.dialects.tosa import (catalogue as tosa_catalogue, engine as tosa_engine, flatbuffer as tosa_flatbuffer,
                               meaning as tosa_meaning, mlir as tosa_mlir, spec as tosa_spec)
from clipbridge.dialects.kit.common import Mode
from clipbridge.core.drift import critical_points
from clipbridge.core.errors import SpecError
from clipbridge.core.findings import Code
from clipbridge.core.evaluate import evaluate
from clipbridge.core.meaning import NanBound, NanInput, Order, State, same_outputs
from clipbridge.dialects.onnx.spec import OnnxSpec
from clipbridge.service.translate import translate
from tests.dialects._readings import default_status, under


def spec(dtype: str, mn, mx, nan_mode: str = "PROPAGATE", shape=None, version: str = "1.0") -> tosa_spec.TosaSpec:
    return tosa_spec.TosaSpec(dialect="tosa", version=version, dtype=dtype, min_val=mn, max_val=mx, nan_mode=nan_mode,
                              shape=shape)


def _codes(tr) -> set[Code]:
    return {f.code for f in tr.findings}


# --- the spec's pseudocode, literally (pseudocode/library/arithmetic_helpers.tosac), as the oracle ---------------

def is_a_nan(v) -> bool:
    return isinstance(v, float) and math.isnan(v)


def compare_nan(a, b, nan_mode: str):
    assert is_a_nan(a) or is_a_nan(b)  # REQUIRE
    if nan_mode == "PROPAGATE":
        return math.nan
    return b if is_a_nan(a) else a


def apply_max_s(a, b, is_float: bool, nan_mode: str):
    if is_float:
        if is_a_nan(a) or is_a_nan(b):
            return compare_nan(a, b, nan_mode)
        return a if a >= b else b
    return a if a >= b else b


def apply_min_s(a, b, is_float: bool, nan_mode: str):
    # The mirror of apply_max_s ("if (a >= b) return a; else return b"): a strict a < b, so a tie returns b. The
    # reference quotes only apply_max_s; the reference model's signed zeros below confirm this form bitwise.
    if is_float:
        if is_a_nan(a) or is_a_nan(b):
            return compare_nan(a, b, nan_mode)
        return a if a < b else b
    return a if a < b else b


def apply_clip_s(value, min_val, max_val, is_float: bool, nan_mode: str):
    if is_float:
        assert min_val <= max_val and not is_a_nan(min_val) and not is_a_nan(max_val)  # REQUIRE
    else:
        assert min_val <= max_val
    value = apply_max_s(value, min_val, is_float, nan_mode)
    return apply_min_s(value, max_val, is_float, nan_mode)


def oracle(m, x: np.ndarray, nan_mode: str) -> np.ndarray:
    f = m.dtype.is_float
    out = [apply_clip_s(m.dtype.to_python(v), m.lo, m.hi, f, nan_mode) for v in x]
    return m.dtype.array(out)


# --- resolve ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(tosa_spec.DTYPES))
def test_every_clamp_type(name):
    m = tosa_meaning.resolve(spec(name, 0, 1))
    assert m.state is State.DEFINED and m.dtype is tosa_spec.DTYPES[name]
    assert m.order is Order.REJECTED and m.nan_bound is NanBound.REJECTED


@pytest.mark.parametrize("name", ["int32", "int64", "fp64"])
def test_types_outside_typesupport_are_rejected(name):
    m = tosa_meaning.resolve(spec(name, 0, 1))
    assert m.state is State.REJECTED and "i8_t, i16_t, fp16_t, bf16_t, fp32_t" in m.reason


@pytest.mark.parametrize("name,msg", [
    pytest.param("float32", "Did you mean 'fp32'", id="clipbridge-name"),
    pytest.param("uint8", "Unknown TOSA dtype", id="no-unsigned"),
    pytest.param("int48", "no int48 dtype", id="tosa-type-unmodelled"),
])
def test_unknown_types(name, msg):
    with pytest.raises(SpecError, match=msg) as exc:
        tosa_meaning.resolve(spec(name, 0, 1))
    assert exc.value.loc == "dtype"


@pytest.mark.parametrize("dtype,mn,mx,field,msg", [
    pytest.param("fp32", 0.1, 6, "min_val", "Nearest fp32 values: below 0.09999999403953552, above 0.10000000149011612",
                 id="fp32-0.1-not-a-value"),
    pytest.param("fp16", 0, 65519, "max_val", "Nearest fp16 values: below 65504.0 \\(max_val\\)", id="fp16-65519"),
    pytest.param("bf16", 0, 1.001, "max_val", "must be a bf16 value", id="bf16-not-a-value"),
    pytest.param("int8", 0.5, 6, "min_val", "an integer", id="int8-fraction"),
    pytest.param("int8", 0, 200, "max_val", r"in \[-128, 127\]", id="int8-out-of-range"),
    pytest.param("int16", "-inf", 1, "min_val", "an integer", id="int16-inf"),
])
def test_attribute_must_be_a_value_of_in_out_t(dtype, mn, mx, field, msg):
    with pytest.raises(SpecError, match=msg) as exc:
        tosa_meaning.resolve(spec(dtype, mn, mx))
    assert exc.value.loc == field


@pytest.mark.parametrize("dtype,mn,mx,lo,hi", [
    pytest.param("fp32", "0x1.99999ap-4", 6, float(np.float32(0.1)), 6.0, id="hex-exact"),
    pytest.param("fp32", "-inf", "inf", -math.inf, math.inf, id="infinite-attributes"),
    pytest.param("fp16", -65504, 65504, -65504.0, 65504.0, id="fp16-range"),
    pytest.param("int16", -32768, 32767, -32768, 32767, id="int16-range"),
])
def test_typed_bounds(dtype, mn, mx, lo, hi):
    m = tosa_meaning.resolve(spec(dtype, mn, mx))
    assert (m.lo, m.hi) == (lo, hi)


@pytest.mark.parametrize("dtype,mn,mx,order,nan", [
    pytest.param("fp32", 3, 1, True, False, id="max-below-min"),
    pytest.param("int8", 5, -5, True, False, id="int8-max-below-min"),
    pytest.param("fp32", "nan", 6, False, True, id="nan-min"),
    pytest.param("bf16", 0, "nan", False, True, id="nan-max"),
])
def test_error_if_rejections(dtype, mn, mx, order, nan):
    m = tosa_meaning.resolve(spec(dtype, mn, mx))
    assert m.state is State.REJECTED and m.order is Order.REJECTED and m.nan_bound is NanBound.REJECTED
    assert (tosa_catalogue.ERROR_ORDER in m.reason) is order and (tosa_catalogue.ERROR_NAN in m.reason) is nan
    assert m.describe().startswith("rejected: ERROR_IF(")


def test_signed_zero_bounds_are_not_crossed():
    """'The sign of a zero is ignored': max_val = -0.0 < min_val = +0.0 is false, so no ERROR_IF."""
    m = tosa_meaning.resolve(spec("fp32", 0.0, -0.0))
    assert m.state is State.DEFINED


@pytest.mark.parametrize("dtype,mode,want", [
    pytest.param("fp32", "PROPAGATE", NanInput.PROPAGATE, id="propagate"),
    pytest.param("fp16", "ignore", NanInput.TO_LOWER, id="ignore-case-insensitive"),
    pytest.param("int8", "IGNORE", NanInput.PROPAGATE, id="ignored-by-integers"),
])
def test_nan_mode(dtype, mode, want):
    assert tosa_meaning.resolve(spec(dtype, 0, 6, mode)).nan_input is want


@pytest.mark.parametrize("text,loc,msg", [
    pytest.param("PROPAGATES", "nan_mode", "Did you mean 'PROPAGATE'", id="nan-mode-typo"),
    pytest.param("0.80", "version", "min_int/max_int", id="pre-1.0"),
    pytest.param("2.0", "version", "Unknown TOSA version", id="unknown-version"),
])
def test_bad_nan_mode_and_version(text, loc, msg):
    s = spec("fp32", 0, 6, text) if loc == "nan_mode" else spec("fp32", 0, 6, version=text)
    with pytest.raises(SpecError, match=msg) as exc:
        tosa_meaning.resolve(s)
    assert exc.value.loc == loc


def test_versions():
    assert [tosa_meaning.version_tosa(v) for v in ("1", "1.0", "v1.0", "1.0.0")] == ["1.0"] * 4


# --- section 4.5 of the reference: TOSA drift vs ONNX Clip-13, one witness each ---------------------------------

ONNX = dict(dialect="onnx", opset=13, elem_type="FLOAT")


@pytest.mark.parametrize("source,mode,status,code", [
    pytest.param(OnnxSpec(**ONNX, min=3, max=1), Mode.LITERAL, "unsupported", Code.MIN_GREATER_THAN_MAX,
                 id="4.5-min-gt-max-onnx-all-1-tosa-error"),
    pytest.param(OnnxSpec(**ONNX, min=3, max=1), Mode.PRESERVE, "exact", Code.MIN_GREATER_THAN_MAX,
                 id="4.5-min-gt-max-preserved-as-min-eq-max"),
    pytest.param(OnnxSpec(**ONNX, min="nan", max=6), Mode.LITERAL, "unsupported", Code.NAN_BOUND,
                 id="4.5-nan-bound-tosa-error"),
    pytest.param(OnnxSpec(**ONNX, min="nan", max=6), Mode.PRESERVE, "unsupported", Code.NAN_BOUND,
                 id="4.5-nan-bound-all-nan-not-expressible"),
    pytest.param(OnnxSpec(**ONNX, max=6), Mode.LITERAL, "exact", Code.DEFAULT_BOUND,
                 id="4.5-defaults-materialised"),
    pytest.param(OnnxSpec(dialect="onnx", opset=13, elem_type="INT32", min=0, max=6), Mode.PRESERVE, "unsupported",
                 Code.DTYPE_UNSUPPORTED, id="4.5-int32-not-expressible"),
    pytest.param(OnnxSpec(dialect="onnx", opset=13, elem_type="INT64", min=0, max=6), Mode.PRESERVE, "unsupported",
                 Code.DTYPE_UNSUPPORTED, id="4.5-int64-not-expressible"),
    pytest.param(OnnxSpec(dialect="onnx", opset=13, elem_type="UINT8", min=0, max=6), Mode.PRESERVE, "unsupported",
                 Code.DTYPE_UNSUPPORTED, id="4.5-uint8-not-expressible"),
    pytest.param(OnnxSpec(dialect="onnx", opset=13, elem_type="DOUBLE", min=0, max=6), Mode.PRESERVE,
                 "unsupported", Code.DTYPE_UNSUPPORTED, id="4.5-float64-not-expressible"),
    pytest.param(OnnxSpec(dialect="onnx", opset=13, elem_type="INT8", min=-128, max=127), Mode.PRESERVE, "exact",
                 None, id="4.5-quantized-relu-zp-minus-128"),
    pytest.param(OnnxSpec(dialect="onnx", opset=6, elem_type="FLOAT16", min=0, max=65519), Mode.LITERAL, "exact",
                 Code.BOUND_PRECISION, id="4.5-fp16-bound-precision"),
])
def test_onnx_into_tosa(source, mode, status, code):
    tr = translate(source, ["tosa"], mode).translations[0]
    assert tr.status == status, [f.to_json() for f in tr.findings]
    if code is not None:
        assert code in _codes(tr)


@pytest.mark.parametrize("dtype,mn,mx,mode,x,want", [
    pytest.param("fp32", 0, 6, "IGNORE", [math.nan], [0.0], id="4.5-nan-input-ignore-gives-min"),
    pytest.param("fp32", 0, 6, "PROPAGATE", [math.nan], [math.nan], id="4.5-nan-input-propagate"),
    pytest.param("fp32", 0.0, 1, "PROPAGATE", [-0.0], [0.0], id="4.5-signed-zero-either-sign"),
    pytest.param("fp32", -1, 1, "PROPAGATE", [1e-40], [1e-40], id="4.5-subnormal-kept-by-the-meaning"),
    pytest.param("int8", -128, 127, "PROPAGATE", [-128, 0, 127], [-128, 0, 127], id="4.5-int8-zp-relu"),
    pytest.param("fp32", 0, 6, "IGNORE", [math.inf, -math.inf, 7.0], [6.0, 0.0, 6.0], id="infinities"),
])
def test_evaluate_witnesses(dtype, mn, mx, mode, x, want):
    m = tosa_meaning.resolve(spec(dtype, mn, mx, mode))
    got = evaluate(m, np.asarray(x, dtype=m.dtype.np_dtype))
    assert same_outputs(got, np.asarray(want, dtype=m.dtype.np_dtype)).all()


def test_latitude_is_a_rule_not_drift():
    """Signed zero and subnormal flushing are modelled as rules; ONNX -> TOSA stays exact."""
    m = tosa_meaning.resolve(spec("fp32", 0, 6))
    assert any("either sign permitted" in r for r in m.rules) and any("flushed to zero" in r for r in m.rules)
    tr = translate(OnnxSpec(**ONNX, min=0.0, max=6), ["tosa"]).translations[0]
    assert tr.status == "exact" and not tr.findings


@settings(derandomize=True, max_examples=300, deadline=None)
@given(x=st.floats(width=32) | st.sampled_from([math.nan, -0.0, 1e-40, -1e-45]),
       lo=st.floats(-10, 10, width=32), width=st.floats(0, 10, width=32),
       mode=st.sampled_from(tosa_spec.NAN_MODES))
def test_to_lower_is_apply_clip_s_with_compare_nan(x, lo, width, mode):
    """NanInput.TO_LOWER (IGNORE) and propagate equal the pseudocode's apply_clip_s on fp32, NaN included."""
    hi = float(np.float32(lo + width))
    if hi < lo:
        hi = lo
    m = tosa_meaning.resolve(spec("fp32", lo, hi, mode))
    xs = np.asarray([x], dtype=np.float32)
    assert same_outputs(evaluate(m, xs), oracle(m, xs, mode)).all()


@pytest.mark.parametrize("dtype", ["int8", "int16", "fp16", "bf16"])
@pytest.mark.parametrize("mode", tosa_spec.NAN_MODES)
def test_every_8_and_16_bit_value_matches_the_oracle(dtype, mode):
    dt = tosa_spec.DTYPES[dtype]
    m = tosa_meaning.resolve(spec(dtype, -3, 5, mode))
    x = dt.all_values()
    assert same_outputs(evaluate(m, x), oracle(m, x, mode)).all()


# --- translations to and from the other dialects ----------------------------------------------------------------

@pytest.mark.parametrize("target,status,code,default_nan", [
    pytest.param("onnx", "drift", Code.NAN_INPUT, None, id="ignore-to-onnx-nan-drift"),
    pytest.param("stablehlo", "drift", Code.NAN_INPUT, None, id="ignore-to-stablehlo-nan-drift"),
    pytest.param("tensorrt", "drift", None, "warning", id="ignore-to-tensorrt-header-undocumented"),
])
def test_translate_from_tosa_ignore(target, status, code, default_nan):
    """status: under the default readings (TensorRT: the header, the specification, NaN undocumented: a warning
    without a witness); TensorRT's observed reading (NaN -> alpha = min, as IGNORE) adds nothing: both give min."""
    tr = translate(spec("fp32", 0, 6, "IGNORE"), [target]).translations[0]
    assert default_status(tr) == status, [f.to_json() for f in tr.findings]
    assert under(tr, "observed") == []
    nan = [(f.severity.value, f.witness) for f in tr.findings if f.code is Code.NAN_INPUT and f.reading is None]
    if default_nan is not None:
        assert nan == [(default_nan, None)]
    if code is not None:
        w = next(f.witness for f in tr.findings if f.code is code)
        assert math.isnan(w.input) and w.source_output == 0.0


@pytest.mark.parametrize("target", ["onnx", "openvino", "stablehlo"])
def test_translate_from_tosa_propagate_is_exact(target):
    tr = translate(spec("int16", -3, 100), [target]).translations[0]
    assert tr.status == "exact", [f.to_json() for f in tr.findings]


def test_rejected_source_is_refused():
    from clipbridge.core.errors import RejectedSpec
    with pytest.raises(RejectedSpec, match=r"ERROR_IF\(max_val < min_val\)"):
        translate(spec("fp32", 3, 1), ["onnx"])


# --- artifacts --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype,mn,mx,mode,want", [
    pytest.param("fp32", "-inf", 6, "IGNORE", "min_val = 0xFF800000 : f32, max_val = 6.0 : f32, nan_mode = IGNORE",
                 id="fp32-inf-hex"),
    pytest.param("int8", -3, 100, "PROPAGATE", "min_val = -3 : i8, max_val = 100 : i8, nan_mode = PROPAGATE",
                 id="int8"),
    pytest.param("bf16", "1e38", "inf", "PROPAGATE", "min_val = 9.969209968386869e+37 : bf16, max_val = 0x7F80 : bf16",
                 id="bf16-exact-decimal"),
])
def test_mlir_text(dtype, mn, mx, mode, want):
    if dtype == "bf16":
        mn = tosa_spec.DTYPES["bf16"].round(1e38)
    s = spec(dtype, mn, mx, mode, shape=[2, "N"])
    text = tosa_mlir.mlir_text(s, tosa_meaning.resolve(s))
    assert want in text and f"tensor<2x?x{tosa_mlir.MLIR_TYPE[dtype]}>" in text


def _tosa_bin(name: str) -> Path:
    pytest.importorskip("tosa_serializer")
    from importlib import metadata
    p = Path(str(metadata.distribution("tosa-tools").locate_file(f"bin/{name}")))
    if not p.is_file():
        pytest.skip(f"tosa-tools ships no {name} here")
    return p


@pytest.mark.parametrize("dtype,mn,mx,mode", [
    pytest.param("fp32", 0, 6, "IGNORE", id="fp32-ignore"),
    pytest.param("fp16", "-inf", 1, "PROPAGATE", id="fp16-inf"),
    pytest.param("int8", -3, 100, "PROPAGATE", id="int8"),
])
def test_mlir_parses_with_shipped_tosa_opt_and_runs(dtype, mn, mx, mode):
    """The MLIR artifact parses with the wheel's tosa-opt, serializes to a flatbuffer, and that graph computes the
    meaning on the reference model."""
    opt = _tosa_bin("tosa-opt")
    m = tosa_meaning.resolve(spec(dtype, mn, mx, mode))
    x = critical_points(m.dtype, [m])
    s = spec(dtype, mn, mx, mode, shape=[len(x)])
    with tempfile.TemporaryDirectory() as d:
        Path(d, "a.mlir").write_text(tosa_mlir.mlir_text(s, m))
        p = subprocess.run([str(opt), f"--tosa-serialize=tosa-flatbuffer-filename={d}/a.tosa", f"{d}/a.mlir"],
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        graph = Path(d, "a.tosa").read_bytes()
    got = tosa_engine.run_flatbuffer(graph, x, dtype)
    assert same_outputs(got, evaluate(m, x)).all()


def test_quoted_nan_mode_is_not_the_1_0_syntax():
    """The shipped tosa-opt (LLVM 24git) reads nan_mode as an enum: the quoted string form of older TosaOps.td is
    dropped, so the emitter writes the bare keyword."""
    opt = _tosa_bin("tosa-opt")
    s = spec("fp32", 0, 6, "IGNORE", shape=[2])
    text = tosa_mlir.mlir_text(s, tosa_meaning.resolve(s))
    with tempfile.TemporaryDirectory() as d:
        for name, body in (("enum", text), ("quoted", text.replace("nan_mode = IGNORE", 'nan_mode = "IGNORE"'))):
            Path(d, name).write_text(body)
        enum = subprocess.run([str(opt), f"{d}/enum"], capture_output=True, text=True, timeout=60).stdout
        quoted = subprocess.run([str(opt), f"{d}/quoted"], capture_output=True, text=True, timeout=60).stdout
    assert "nan_mode = IGNORE" in enum and "nan_mode" not in quoted


# --- the reference model: differential sweep --------------------------------------------------------------------

def _engine():
    pytest.importorskip("tosa_serializer")
    if tosa_engine.reference_model_path() is None:
        pytest.skip("tosa_reference_model not found")
    return tosa_engine


SWEEP = [
    pytest.param("fp32", 0, 6, id="fp32-relu6"),
    pytest.param("fp32", -1, 1, id="fp32-unit"),
    pytest.param("fp32", "-inf", "inf", id="fp32-open"),
    pytest.param("fp32", 0.0, 0.0, id="fp32-zero-width"),
    pytest.param("fp32", "0x1p-149", "0x1p-126", id="fp32-subnormal-bounds"),
    pytest.param("fp16", -1, 1, id="fp16-unit"),
    pytest.param("fp16", -65504, "0x1p-24", id="fp16-subnormal-max"),
    pytest.param("bf16", -0.5, 0.5, id="bf16"),
    pytest.param("bf16", "-inf", 3.0, id="bf16-inf-min"),
    pytest.param("int8", -3, 100, id="int8"),
    pytest.param("int8", -128, 127, id="int8-full"),
    pytest.param("int16", -300, 300, id="int16"),
    pytest.param("int16", 7, 7, id="int16-equal"),
]


@pytest.mark.parametrize("mode", tosa_spec.NAN_MODES)
@pytest.mark.parametrize("dtype,mn,mx", SWEEP)
def test_reference_model_agrees_with_the_meaning(dtype, mn, mx, mode):
    """Critical points (NaN, +-inf, +-0, subnormals, the bounds and their neighbours) through the reference model:
    its outputs equal evaluate() (+-0 compared equal: either sign is permitted)."""
    engine = _engine()
    m = tosa_meaning.resolve(spec(dtype, mn, mx, mode))
    x = critical_points(m.dtype, [m])
    if m.dtype.is_float:
        x = np.concatenate([x, np.asarray([math.nan, -0.0, 0.0], dtype=m.dtype.np_dtype)])
    from clipbridge.service.execute import Semantics, run
    got = run(Semantics("tosa", m, tosa_meaning.normalize(spec(dtype, mn, mx, mode))), x, tosa_engine.ENGINE, None)
    want = evaluate(m, x)
    assert got.dtype == m.dtype.np_dtype
    bad = ~same_outputs(got, want)
    assert not bad.any(), list(zip(x[bad], got[bad], want[bad]))
    assert same_outputs(got, oracle(m, x, mode)).all()


@pytest.mark.parametrize("dtype,mn,mx,condition", [
    pytest.param("fp32", 6.0, 0.0, "max < min", id="fp32-crossed"),
    pytest.param("int8", 5, -5, "max < min", id="int8-crossed"),
    pytest.param("fp16", math.nan, 1.0, "isnan", id="nan-min"),
    pytest.param("bf16", 0.0, math.nan, "isnan", id="nan-max"),
])
def test_reference_model_refuses_what_the_meaning_rejects(dtype, mn, mx, condition):
    """ERROR_IF: the reference model refuses the graph, as resolve() rejects the spec."""
    engine = _engine()
    m = tosa_meaning.resolve(spec(dtype, mn if not isinstance(mn, float) or not math.isnan(mn) else "nan",
                                  mx if not isinstance(mx, float) or not math.isnan(mx) else "nan"))
    assert m.state is State.REJECTED
    graph = tosa_flatbuffer.flatbuffer(dtype, [3], mn, mx, "PROPAGATE")
    with pytest.raises(engine.TosaRefused) as exc:
        engine.run_flatbuffer(graph, np.zeros(3, dtype=tosa_spec.DTYPES[dtype].np_dtype), dtype)
    assert condition in exc.value.condition


def test_flatbuffer_artifact_runs():
    """The base64 artifact of a translation is a TOSA 1.0 graph the reference model runs."""
    engine = _engine()
    tr = translate(OnnxSpec(**ONNX, min=-1, max=1, shape=[5]), ["tosa"]).translations[0]
    graph = base64.b64decode(tr.artifacts["tosa_flatbuffer"])
    assert graph[4:8] == b"TOSA"
    x = np.asarray([math.nan, -5, -0.5, 0.5, 5], dtype=np.float32)
    got = engine.run_flatbuffer(graph, x, "fp32")
    assert same_outputs(got, evaluate(tr.meaning, x)).all()


def test_execute_api_on_the_reference_model(client):
    _engine()
    body = {"spec": {"dialect": "tosa", "dtype": "fp32", "min_val": 0, "max_val": 6, "nan_mode": "IGNORE"},
            "input": {"dtype": "float32", "shape": [4], "data": [-1, 3, 9, "nan"]}, "backend": "tosa-reference"}
    r = client.post("/v1/execute", json=body)
    assert r.status_code == 200, r.text
    assert r.json()["output"]["data"] == [0.0, 3.0, 6.0, 0.0]
    body["spec"]["max_val"] = -1
    r = client.post("/v1/execute", json=body)
    assert r.status_code == 422 and "max < min" in r.text  # the reference model's own refusal


def test_translate_api_names_tosa(client):
    r = client.post("/v1/translate", json={"source": {"dialect": "onnx", "opset": 13, "elem_type": "INT8",
                                                      "min": -3, "max": 5}, "targets": ["tosa"]})
    assert r.status_code == 200, r.text
    tr = r.json()["translations"][0]
    assert tr["status"] == "exact" and "tosa.clamp" in tr["artifacts"]["tosa_mlir"]
    r = client.post("/v1/translate", json={"source": {"dialect": "tosa", "dtype": "fp32", "min_val": 0.1,
                                                      "max_val": 1}})
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == "spec.min_val"


def test_dialects_lists_tosa_and_tensorrt(client):
    r = client.get("/v1/dialects")
    assert r.status_code == 200, r.text
    rows = {d["dialect"]: d for d in r.json()["dialects"]}
    assert rows["tosa"]["versions"][0]["dtypes"] == list(tosa_spec.DTYPES)
    assert any("ERROR_IF(max_val < min_val)" in rule for rule in rows["tosa"]["versions"][0]["rules"])
    assert any(rule.startswith("reading observed") for rule in rows["tensorrt"]["versions"][0]["rules"])


LEAVES = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(),
                   st.sampled_from(list(tosa_spec.DTYPES) + ["int32", "fp64", "int48", "float32", "kHALF", "int8",
                                                             "IGNORE", "PROPAGATE", "ignore", "observed", "header",
                                                             "nan", "-inf", "inf", "0x1p-149", "1.0", "0.80", "10",
                                                             ""]),
                   st.text(max_size=6), st.lists(st.integers(-1, 2**32), max_size=3))


@st.composite
def bodies(draw):
    dialect = draw(st.sampled_from(["tosa", "tensorrt"]))
    keys = (["dtype", "shape", "min_val", "max_val", "nan_mode", "version"] if dialect == "tosa" else
            ["dtype", "shape", "alpha", "beta", "reading", "version"])
    spec = {"dialect": dialect, **draw(st.dictionaries(st.sampled_from(keys), LEAVES, max_size=6))}
    path = draw(st.sampled_from(["/v1/translate", "/v1/execute", "/v1/compare"]))
    if path == "/v1/translate":
        return path, {"source": spec, "targets": draw(st.sampled_from([None, ["tosa"], ["tensorrt"], ["onnx"]])),
                      "mode": draw(st.sampled_from(["preserve", "literal"]))}
    return path, {"spec": spec, "backend": draw(st.sampled_from(["numpy", "tosa-reference"])),
                  "semantics": draw(st.sampled_from([None, "tosa", "tensorrt", "onnx"])),
                  "input": {"dtype": draw(st.sampled_from(["float32", "int8", "float16", "bfloat16"])),
                            "shape": [2], "data": draw(st.lists(LEAVES, min_size=2, max_size=2))}}


@settings(max_examples=int(os.environ.get("CLIPBRIDGE_FUZZ_EXAMPLES", "120")), derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=bodies())
def test_tosa_and_tensorrt_bodies_never_5xx(client, case):
    path, body = case
    r = client.post(path, content=json.dumps(body).encode(), headers={"content-type": "application/json"})
    assert r.status_code < 500, (path, body, r.text[:500])


@pytest.mark.parametrize("source", [
    pytest.param(OnnxSpec(**ONNX, min=0, max=6, shape=[2**31]), id="onnx-dim-beyond-int32"),
])
def test_dimension_beyond_int32_is_unsupported(source):
    tr = translate(source, ["tosa"]).translations[0]
    assert tr.status == "unsupported" and Code.RANK_UNSUPPORTED in _codes(tr)
    with pytest.raises(SpecError, match="int32") as exc:
        tosa_meaning.resolve(spec("fp32", 0, 6, shape=[2**31]))
    assert exc.value.loc == "shape"


@pytest.mark.parametrize("lo,hi,x,bits", [
    pytest.param(0.0, 6.0, -0.0, 0x80000000, id="x-minus-0-min-plus-0-keeps-x"),
    pytest.param(-0.0, 6.0, 0.0, 0x00000000, id="x-plus-0-min-minus-0-keeps-x"),
    pytest.param(-1.0, -0.0, 0.0, 0x80000000, id="x-plus-0-max-minus-0-gives-max"),
    pytest.param(-1.0, 0.0, -0.0, 0x00000000, id="x-minus-0-max-plus-0-gives-max"),
])
def test_reference_model_signed_zeros_follow_the_pseudocode(lo, hi, x, bits):
    """'either sign permitted': the reference model picks the sign apply_clip_s's comparisons give, bit for bit;
    evaluate() may give the other sign, which same_outputs (and the spec) accept."""
    engine = _engine()
    m = tosa_meaning.resolve(spec("fp32", lo, hi))
    xs = np.asarray([x], dtype=np.float32)
    got = engine.run_flatbuffer(tosa_flatbuffer.flatbuffer("fp32", [1], lo, hi, "PROPAGATE"), xs, "fp32")
    assert int(got.view(np.uint32)[0]) == bits == int(oracle(m, xs, "PROPAGATE").view(np.uint32)[0])
    assert same_outputs(got, evaluate(m, xs)).all()


@pytest.mark.parametrize("name", list(tosa_catalogue.EXAMPLES))
def test_examples_and_rule_texts(name):
    m = tosa_meaning.resolve(tosa_spec.TosaSpec.model_validate(tosa_catalogue.EXAMPLES[name]))
    assert (m.state is State.REJECTED) is (name == "crossed-rejected")
    assert set(tosa.DIALECT.rule_texts) <= {c.value for c in Code}


@pytest.mark.parametrize("mode", tosa_spec.NAN_MODES)
@pytest.mark.parametrize("dtype,mn,mx", [
    pytest.param("int8", -100, 5, id="int8"),
    pytest.param("int16", -7, 30000, id="int16"),
    pytest.param("fp16", "-0x1p-14", 1000, id="fp16"),
    pytest.param("bf16", -3.0, "0x1p-126", id="bf16"),
])
def test_reference_model_on_every_value(dtype, mn, mx, mode):
    """Every bit pattern of the 8- and 16-bit CLAMP types (NaNs, infinities, subnormals, both zeros) through the
    reference model: equal to evaluate() everywhere."""
    engine = _engine()
    m = tosa_meaning.resolve(spec(dtype, mn, mx, mode))
    x = m.dtype.all_values()
    got = engine.run_flatbuffer(tosa_flatbuffer.flatbuffer(dtype, [len(x)], m.lo, m.hi, mode), x, dtype)
    bad = ~same_outputs(got, evaluate(m, x))
    assert not bad.any(), list(zip(x[bad][:5], got[bad][:5]))
