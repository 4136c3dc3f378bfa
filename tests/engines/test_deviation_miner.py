"""The deviation miner: every difference between an installed engine and a dialect's spec meaning is recorded.

tests.engines.sweep.mine() runs every artifact the engines can run (per the runtime support table) on the critical
inputs and lists each input where the engine's output differs from app.meaning.evaluate(). A deviation is
*recorded* when the meaning carries an engine note whose model below reproduces the engine's output at that
input (or, for notes that say the result is garbage, covers that input). Anything else fails
test_miner_finds_no_unrecorded_deviation. Each recorded deviation also keeps a strict xfail (engine == spec) in
RECORDED, so a fixed engine shows up as an XPASS.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("openvino")

from app import exact  # noqa: E402
from app.dialects import onnx as d_onnx  # noqa: E402
from app.dialects import openvino as d_ov  # noqa: E402
from app.dtypes import FLOAT32, DType  # noqa: E402
from app.meaning import EngineNote, Meaning, evaluate, same_outputs  # noqa: E402
from app.specs import OnnxSpec, OpenVinoSpec  # noqa: E402
from tests.engines import sweep  # noqa: E402

pytestmark = pytest.mark.engines
INT32 = (-(2**31), 2**31 - 1)
FLT_MAX = float(np.finfo(np.float32).max)


# --- models of the engine notes: does the note explain the engine's output at x? ------------------------------------

def _clamp(dt: DType, x: Any, lo: Any, hi: Any) -> Any:
    """min(max(x, lo), hi) in the tensor type (NaN propagates), as a Python value."""
    arr = np.asarray([x], dtype=dt.np_dtype)
    with np.errstate(all="ignore"):
        y = np.minimum(np.maximum(arr, np.asarray(lo, dtype=dt.np_dtype)), np.asarray(hi, dtype=dt.np_dtype))
    return dt.to_python(y[0])


def _eq(dt: DType, a: Any, b: Any) -> bool:
    return bool(same_outputs(np.asarray([a], dtype=dt.np_dtype), np.asarray([b], dtype=dt.np_dtype))[0])


def _doubles(a: sweep.Artifact) -> tuple[float, float]:
    return exact.to_double(a.spec.min), exact.to_double(a.spec.max)


def _sat32(v: float) -> float:
    return FLOAT32.round(min(max(v, -FLT_MAX), FLT_MAX))


def _int_bounds(dt: DType, lo: float, hi: float) -> tuple[int, int]:
    return dt.saturate(math.ceil(lo)), dt.saturate(math.floor(hi))


Model = Callable[[Meaning, sweep.Artifact, Any, Any, Any], bool]


def nan_to_min(m: Meaning, a: sweep.Artifact, x: Any, want: Any, got: Any) -> bool:
    lo = m.lo if m.dtype.name != "bfloat16" else d_ov.bf16_truncated_openvino(_doubles(a)[0])
    return isinstance(x, float) and math.isnan(x) and (_eq(m.dtype, got, lo) or _eq(m.dtype, got, _sat32(m.lo)))


def f64_in_f32(m: Meaning, a: sweep.Artifact, x: Any, want: Any, got: Any) -> bool:
    lo, hi = _sat32(m.lo), _sat32(m.hi)
    x32 = FLOAT32.round(x) if not math.isnan(x) else x
    y = lo if math.isnan(x32) else min(max(x32, lo), hi)
    return _eq(m.dtype, got, y)


def int_32bit(m: Meaning, a: sweep.Artifact, x: Any, want: Any, got: Any) -> bool:
    dmin, dmax = _doubles(a)
    outside = [v for v in (x, m.lo, m.hi) if not INT32[0] <= v <= INT32[1]]
    return bool(outside) or any(not INT32[0] <= d <= INT32[1] for d in (dmin, dmax) if math.isfinite(d))


def u32_as_i32(m: Meaning, a: sweep.Artifact, x: Any, want: Any, got: Any) -> bool:
    return any(v > INT32[1] for v in (x, m.lo, m.hi))


def int_bounds_wrap(m: Meaning, a: sweep.Artifact, x: Any, want: Any, got: Any) -> bool:
    return any(not INT32[0] <= FLOAT32.round(d) < 2**31 for d in _doubles(a) if math.isfinite(d))


def int_bounds_f32(m: Meaning, a: sweep.Artifact, x: Any, want: Any, got: Any) -> bool:
    lo, hi = _int_bounds(m.dtype, *(FLOAT32.round(d) for d in _doubles(a)))
    return _eq(m.dtype, got, _clamp(m.dtype, x, lo, hi))


def static_trunc(m: Meaning, a: sweep.Artifact, x: Any, want: Any, got: Any) -> bool:
    dmin, _ = _doubles(a)
    return bool(a.spec.shape) and _eq(m.dtype, got, _clamp(m.dtype, x, m.dtype.saturate(math.trunc(dmin)), m.hi))


def bf16_flush(m: Meaning, a: sweep.Artifact, x: Any, want: Any, got: Any) -> bool:
    return x != 0 and abs(x) < 2.0**-126 and _eq(m.dtype, got, _clamp(m.dtype, 0.0, m.lo, m.hi))


def bf16_bound_trunc(m: Meaning, a: sweep.Artifact, x: Any, want: Any, got: Any) -> bool:
    lo, hi = (d_ov.bf16_truncated_openvino(d) for d in _doubles(a))
    return _eq(m.dtype, got, _clamp(m.dtype, x, lo, hi))


def range_wrap(m: Meaning, a: sweep.Artifact, x: Any, want: Any, got: Any) -> bool:
    return bool(m.lower.saturated or m.upper.saturated)  # the wrapped bounds make any output possible


def f16_double_rounding(m: Meaning, a: sweep.Artifact, x: Any, want: Any, got: Any) -> bool:
    lo, hi = (m.dtype.round(FLOAT32.round(d)) for d in _doubles(a))
    return _eq(m.dtype, got, _clamp(m.dtype, x, lo, hi))


def ort_nan_bound_ignored(m: Meaning, a: sweep.Artifact, x: Any, want: Any, got: Any) -> bool:
    lo = -math.inf if m.lower.is_nan else m.lo
    hi = math.inf if m.upper.is_nan else m.hi
    return _eq(m.dtype, got, _clamp(m.dtype, x, lo, hi))


def ort_f16_default_keeps_inf(m: Meaning, a: sweep.Artifact, x: Any, want: Any, got: Any) -> bool:
    return isinstance(x, float) and math.isinf(x) and got == x


MODELS: dict[EngineNote, Model] = {
    d_ov.ENGINE_NOTES_ALL[0]: nan_to_min,
    d_ov.NOTE_F64: f64_in_f32,
    d_ov.ENGINE_NOTES_INT64[0]: int_32bit,
    d_ov.NOTE_U32: u32_as_i32,
    d_ov.NOTE_INT_WRAP: int_bounds_wrap,
    d_ov.NOTE_INT_F32: int_bounds_f32,
    d_ov.NOTE_STATIC_TRUNC: static_trunc,
    d_ov.NOTE_BF16_FLUSH: bf16_flush,
    d_ov.NOTE_BF16_TRUNC: bf16_bound_trunc,
    d_ov.NOTE_RANGE_WRAP: range_wrap,
    d_ov.NOTE_F16_ROUNDING: f16_double_rounding,
    d_onnx.NOTE_F16_DEFAULT_ORT[0]: ort_f16_default_keeps_inf,
    d_onnx.NOTE_NAN_BOUND_ORT[0]: ort_nan_bound_ignored,
}


def unexplained(d: sweep.Deviation) -> list[str]:
    """The inputs of a deviation that no engine note of its meaning reproduces."""
    m, a = d.meaning, d.artifact
    assert m is not None and a is not None
    models = [MODELS[n] for n in m.engine_notes if n in MODELS]
    return [f"x={x!r}: engine {g!r}, spec {w!r}" for x, w, g in zip(d.inputs, d.expected, d.got, strict=True)
            if not any(model(m, a, x, w, g) for model in models)]


# --- the miner ----------------------------------------------------------------------------------------------------

def test_miner_finds_no_unrecorded_deviation():
    start = time.monotonic()
    devs = sweep.mine()
    elapsed = time.monotonic() - start
    problems = [f"{d.line()}\n    unrecorded: {'; '.join(u[:3])}" for d in devs if (u := unexplained(d))]
    assert not problems, (f"{len(problems)} deviations with no engine note that explains them (record each in the "
                          "dialect's engine notes, with a model in MODELS and a case in RECORDED):\n"
                          + "\n".join(problems))
    assert devs, "the miner found no deviation at all: the engines or the sweep changed"
    assert elapsed < 60, f"the miner took {elapsed:.0f} s"


def test_every_model_is_for_a_note_the_dialects_attach():
    """A model without a note (or a note without a model) means the table above is stale."""
    ov_notes = {n for n in vars(d_ov).values() if isinstance(n, EngineNote)}
    ov_notes |= {n for v in vars(d_ov).values() if isinstance(v, tuple) for n in v if isinstance(n, EngineNote)}
    assert set(MODELS) - ov_notes - set(d_onnx.NOTE_F16_DEFAULT_ORT) - set(d_onnx.NOTE_NAN_BOUND_ORT) == set()


# --- each recorded deviation, pinned: strict xfails (engine == spec) ----------------------------------------------

def _ov(et: str, lo: Any, hi: Any, shape: list | None = None) -> OpenVinoSpec:
    return OpenVinoSpec(dialect="openvino", version="opset16", element_type=et, min=lo, max=hi, shape=shape)


RECORDED = [
    # id, spec, inputs, the engine note (by its model) that records it
    ("openvino-u16-negative-bounds-wrap", _ov("u16", -100.7, -1), [0, 1, 65535], range_wrap),
    ("openvino-i16-bounds-above-range-wrap", _ov("i16", 32767.5, 33767.5), [-32768, 0, 32767], range_wrap),
    ("openvino-u64-negative-bounds-wrap", _ov("u64", -100.7, -1), [0, 1], range_wrap),
    ("openvino-bf16-bound-truncated", _ov("bf16", -1.25, 2.7), [3.0, 100.0], bf16_bound_trunc),
    ("openvino-nan-input-becomes-min", _ov("f32", 0.0, 6.0), [math.nan], nan_to_min),
    ("openvino-f64-computed-in-f32", _ov("f64", -1.25, 2.7), [100.0, 5e-324], f64_in_f32),
    ("openvino-i64-in-32-bits", _ov("i64", -6, 6), [-(2**63), 2**63 - 1], int_32bit),
    ("openvino-u32-as-i32", _ov("u32", 0, 6), [2**32 - 1], u32_as_i32),
    ("openvino-i32-bound-beyond-int32-wraps", _ov("i32", 2147483647.5, 2147484647.5), [0, -5], int_bounds_wrap),
    ("openvino-u8-static-shape-truncates-min", _ov("u8", 1.5, 4.5, [1]), [0, 1], static_trunc),
    ("onnxruntime-nan-bound-ignored", OnnxSpec(dialect="onnx", opset=13, elem_type="FLOAT", min="nan", max=6.0),
     [-5.0, 3.0], ort_nan_bound_ignored),
    ("onnxruntime-clip11-f16-absent-bounds-keep-inf", OnnxSpec(dialect="onnx", opset=11, elem_type="FLOAT16"),
     [math.inf, -math.inf], ort_f16_default_keeps_inf),
]


def _resolve(spec: OnnxSpec | OpenVinoSpec) -> Meaning:
    return d_onnx.resolve(spec) if isinstance(spec, OnnxSpec) else d_ov.resolve(spec)


@pytest.mark.parametrize("spec, inputs, model", [pytest.param(s, i, m, id=n) for n, s, i, m in RECORDED])
def test_recorded_deviation_is_noted(spec, inputs, model):
    """The meaning carries the engine note that records the deviation, and the note's model reproduces it."""
    m = _resolve(spec)
    assert model in [MODELS[n] for n in m.engine_notes if n in MODELS], [n.text for n in m.engine_notes]
    x = m.dtype.array(inputs)
    got = _run(spec, x)
    with np.errstate(all="ignore"):
        want = evaluate(m, x)
    a = sweep.Artifact("", "", m.dtype, "both", spec)
    for i in range(len(x)):
        xi, wi, gi = (m.dtype.to_python(v) for v in (x[i], want[i], got.reshape(-1)[i]))
        assert _eq(m.dtype, gi, wi) or model(m, a, xi, wi, gi), (xi, wi, gi)


def _run(spec: OnnxSpec | OpenVinoSpec, x: np.ndarray) -> np.ndarray:
    if isinstance(spec, OnnxSpec):
        return sweep.run_onnx(spec, x)
    if spec.shape:
        return np.concatenate([sweep.run_openvino(spec, x[i:i + 1]) for i in range(len(x))])
    return sweep.run_openvino(spec, x)


@pytest.mark.parametrize("spec, inputs, model", [
    pytest.param(spec, inputs, model, id=name, marks=pytest.mark.xfail(
        strict=True, reason=f"recorded engine deviation ({model.__name__}): the engine departs from the spec here"))
    for name, spec, inputs, model in RECORDED])
def test_recorded_deviation_engine_follows_spec(spec, inputs, model):
    m = _resolve(spec)
    x = m.dtype.array(inputs)
    got = _run(spec, x)
    with np.errstate(all="ignore"):
        want = evaluate(m, x)
    assert same_outputs(want, got.reshape(want.shape)).all(), f"engine {got.tolist()}, spec {want.tolist()}"
