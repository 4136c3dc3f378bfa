"""The deviation miner: every difference between an installed engine and a dialect's spec meaning is recorded.

tests.engines.sweep.mine() runs every artifact the engines can run (per the runtime support table) on the critical
inputs and lists each input where the engine's output differs from clipbridge.core.evaluate.evaluate(). A deviation is
*recorded* when an engine note of its meaning, on some recorded host variant (OpenVINO's bf16 kernels differ by
CPU: app/clipbridge/engines/config.openvino_bf16_variant), has a model below that predicts the engine's output at that input
from the inputs alone. Anything else fails test_miner_finds_no_unrecorded_deviation; a second test checks that
the notes attached on this host explain what the engines do here. Each recorded deviation also keeps a strict
xfail (engine == spec) in RECORDED, strict on the host variants it occurs on, so a fixed engine shows up as an
XPASS; test_recorded_xfail_can_flip shows each can. docs/host-differences.md says how to run other variants.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("openvino")

from clipbridge.engines import config as engine_config
from clipbridge.core import exact  # noqa: E402
from clipbridge.dialects.onnx.meaning import NOTE_F16_DEFAULT_ORT, NOTE_NAN_BOUND_ORT, resolve  # noqa: E402
from clipbridge.dialects.openvino import meaning as ov_meaning, notes as d_ov  # noqa: E402
from clipbridge.core.dtypes import FLOAT32, DType  # noqa: E402
from clipbridge.core.evaluate import evaluate  # noqa: E402
from clipbridge.core.meaning import EngineNote, Meaning, same_outputs  # noqa: E402
from clipbridge.dialects.onnx.spec import OnnxSpec  # noqa: E402
from clipbridge.dialects.openvino.spec import OpenVinoSpec  # noqa: E402
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


# Each model predicts the engine's output at x from the inputs alone (a list of candidates: the readings the note
# allows), and explains a deviation only when the engine produced one of them.
Predict = Callable[[Meaning, sweep.Artifact, Any], list[Any]]


def nan_to_min(m: Meaning, a: sweep.Artifact, x: Any) -> list[Any]:
    if not (isinstance(x, float) and math.isnan(x)):
        return []
    los = [m.lo, _sat32(m.lo)]
    if m.dtype.name == "bfloat16":  # the bound as each host's bf16 kernels convert it
        los += [d_ov.bf16_truncated_openvino(_doubles(a)[0]), _flush(m.dtype, m.lo)]
    return los


def f64_in_f32(m: Meaning, a: sweep.Artifact, x: Any) -> list[Any]:
    lo, hi = _sat32(m.lo), _sat32(m.hi)
    x32 = FLOAT32.round(x) if not math.isnan(x) else x
    return [lo if math.isnan(x32) else min(max(x32, lo), hi)]


def _wrap(v: int, bits: int, signed: bool) -> int:
    """v modulo 2^bits, read as a signed or unsigned integer of that width."""
    v &= (1 << bits) - 1
    return v - (1 << bits) if signed and v >= 1 << (bits - 1) else v


def _int32_bound_readings(d: float, up: bool) -> set[int]:
    """The int32 values a double bound can become on the CPU plugin's 32-bit integer path: ceil/floor taken, then
    wrapped modulo 2^32, through float32 and wrapped, saturated, or the conversion's overflow value INT32_MIN."""
    if not math.isfinite(d):
        return {INT32[0], INT32[1]}
    r = math.ceil(d) if up else math.floor(d)
    f = int(FLOAT32.round(float(r))) if abs(r) < 2**128 else r
    out = {_wrap(r, 32, True), _wrap(f, 32, True), min(max(r, INT32[0]), INT32[1])}
    if not INT32[0] <= f < 2**31:
        out.add(INT32[0])
    return out


def int32_datapath(m: Meaning, a: sweep.Artifact, x: Any) -> list[Any]:
    """The CPU plugin's integer Clamp on 16-, 32- and 64-bit types: the input wrapped to int32, clamped in int32
    with the bounds read one of the ways above, and the result wrapped back to the element type."""
    dmin, dmax = _doubles(a)
    signed = m.dtype.lowest() != 0
    x32 = _wrap(int(x), 32, True)
    out = set()
    for lo in _int32_bound_readings(dmin, True):
        for hi in _int32_bound_readings(dmax, False):
            y = min(max(x32, lo), hi)
            out.add(y if signed and m.dtype.bits >= 32 else _wrap(y, m.dtype.bits, signed))
    return sorted(out)


def int_32bit(m: Meaning, a: sweep.Artifact, x: Any) -> list[Any]:
    return int32_datapath(m, a, x) if m.dtype.name in ("int64", "uint64") else []


def u32_as_i32(m: Meaning, a: sweep.Artifact, x: Any) -> list[Any]:
    return int32_datapath(m, a, x) if m.dtype.name == "uint32" else []


def int_bounds_wrap(m: Meaning, a: sweep.Artifact, x: Any) -> list[Any]:
    return int32_datapath(m, a, x) if any(not INT32[0] <= FLOAT32.round(d) < 2**31
                                          for d in _doubles(a) if math.isfinite(d)) else []


def range_wrap(m: Meaning, a: sweep.Artifact, x: Any) -> list[Any]:
    return int32_datapath(m, a, x) if m.lower.saturated or m.upper.saturated else []


def int_bounds_f32(m: Meaning, a: sweep.Artifact, x: Any) -> list[Any]:
    lo, hi = _int_bounds(m.dtype, *(FLOAT32.round(d) for d in _doubles(a)))
    return [_clamp(m.dtype, x, lo, hi)]


def static_trunc(m: Meaning, a: sweep.Artifact, x: Any) -> list[Any]:
    dmin, _ = _doubles(a)
    return [_clamp(m.dtype, x, m.dtype.saturate(math.trunc(dmin)), m.hi)] if a.spec.shape else []


def _flush(dt: DType, v: Any) -> Any:
    """A bf16 subnormal flushed to a zero of its sign (avx512_bf16 kernels); other values unchanged."""
    return math.copysign(0.0, v) if isinstance(v, float) and v != 0 and abs(v) < 2.0**-126 else v


def bf16_flush(m: Meaning, a: sweep.Artifact, x: Any) -> list[Any]:
    """Subnormal input and bounds flushed to zero, then min(max(x, lo), hi)."""
    return [_clamp(m.dtype, _flush(m.dtype, x), _flush(m.dtype, m.lo), _flush(m.dtype, m.hi))]


def bf16_bound_trunc(m: Meaning, a: sweep.Artifact, x: Any) -> list[Any]:
    lo, hi = (d_ov.bf16_truncated_openvino(d) for d in _doubles(a))
    return [_clamp(m.dtype, x, lo, hi)]


def f16_double_rounding(m: Meaning, a: sweep.Artifact, x: Any) -> list[Any]:
    lo, hi = (m.dtype.round(FLOAT32.round(d)) for d in _doubles(a))
    return [_clamp(m.dtype, x, lo, hi)]


def ort_nan_bound_ignored(m: Meaning, a: sweep.Artifact, x: Any) -> list[Any]:
    lo = -math.inf if m.lower.is_nan else m.lo
    hi = math.inf if m.upper.is_nan else m.hi
    return [_clamp(m.dtype, x, lo, hi)]


def ort_f16_default_keeps_inf(m: Meaning, a: sweep.Artifact, x: Any) -> list[Any]:
    return [x] if isinstance(x, float) and math.isinf(x) else []


def explains(model: Predict, m: Meaning, a: sweep.Artifact, x: Any, got: Any) -> bool:
    """The engine's output at x is one the model predicts."""
    return any(_eq(m.dtype, got, p) for p in model(m, a, x))


Model = Predict
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
    NOTE_F16_DEFAULT_ORT[0]: ort_f16_default_keeps_inf,
    NOTE_NAN_BOUND_ORT[0]: ort_nan_bound_ignored,
}


def variant_notes(m: Meaning, a: sweep.Artifact) -> dict[str, tuple[EngineNote, ...]]:
    """The engine notes the artifact's meaning carries on each recorded host variant (OpenVINO's bf16 notes depend
    on the CPU; engine_config.openvino_bf16_variant says which variant this host is)."""
    if a.runtime != "openvino":
        return {"any": m.engine_notes}
    host = d_ov.cpu_notes_openvino(m.dtype, *_doubles(a))
    rest = tuple(n for n in m.engine_notes if n not in host)
    return {v: rest + d_ov.cpu_notes_openvino(m.dtype, *_doubles(a), variant=v) for v in d_ov.BF16_NOTES}


def unexplained(d: sweep.Deviation, variants: tuple[str, ...] | None = None) -> list[str]:
    """The inputs of a deviation that no engine note reproduces, on any recorded host variant (or those given)."""
    m, a = d.meaning, d.artifact
    assert m is not None and a is not None
    notes = {n for v, ns in variant_notes(m, a).items() if variants is None or v in variants or v == "any"
             for n in ns}
    models = [MODELS[n] for n in notes if n in MODELS]
    return [f"x={x!r}: engine {g!r}, spec {w!r}" for x, w, g in zip(d.inputs, d.expected, d.got, strict=True)
                if not any(explains(model, m, a, x, g) for model in models)]


# --- the miner ----------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def mined() -> list[sweep.Deviation]:
    return sweep.mine()


def test_miner_finds_no_unrecorded_deviation(mined):
    """Every deviation is explained by the notes of some recorded host variant (the engines' bf16 kernels differ
    by CPU: docs/host-differences.md)."""
    problems = [f"{d.line()}\n    unrecorded: {'; '.join(u[:3])}" for d in mined if (u := unexplained(d))]
    assert not problems, (f"{len(problems)} deviations with no engine note that explains them (record each in the "
                          "dialect's engine notes, with a model in MODELS and a case in RECORDED):\n"
                          + "\n".join(problems))
    assert mined, "the miner found no deviation at all: the engines or the sweep changed"


def test_this_hosts_notes_explain_its_deviations(mined):
    """The notes attached on this host (by engine_config's detection) explain what the engines do here."""
    if HOST == engine_config.BF16_UNKNOWN:
        pytest.skip(f"this host ({engine_config.cpu_isa()}) is none of the measured CPU variants")
    problems = [f"{d.line()}\n    not explained on {HOST}: {'; '.join(u[:3])}" for d in mined
                if (u := unexplained(d, (HOST,)))]
    assert not problems, f"host detection says {HOST}, but:\n" + "\n".join(problems)


def test_every_model_is_for_a_note_the_dialects_attach():
    """A model without a note (or a note without a model) means the table above is stale."""
    ov_notes = {n for n in vars(d_ov).values() if isinstance(n, EngineNote)}
    ov_notes |= {n for v in vars(d_ov).values() if isinstance(v, tuple) for n in v if isinstance(n, EngineNote)}
    assert set(MODELS) - ov_notes - set(NOTE_F16_DEFAULT_ORT) - set(NOTE_NAN_BOUND_ORT) == set()


# --- each recorded deviation, pinned: strict xfails (engine == spec) ----------------------------------------------

def _ov(et: str, lo: Any, hi: Any, shape: list | None = None) -> OpenVinoSpec:
    return OpenVinoSpec(dialect="openvino", version="opset16", element_type=et, min=lo, max=hi, shape=shape)


HOST = engine_config.openvino_bf16_variant()
NATIVE, AVX2 = frozenset({engine_config.BF16_NATIVE}), frozenset({engine_config.BF16_AVX2})

RECORDED = [
    # id, spec, inputs, the engine note (by its model) that records it, the host variants it occurs on (None: all)
    ("openvino-u16-negative-bounds-wrap", _ov("u16", -100.7, -1), [0, 1, 65535], range_wrap, None),
    ("openvino-i16-bounds-above-range-wrap", _ov("i16", 32767.5, 33767.5), [-32768, 0, 32767], range_wrap, None),
    ("openvino-u64-negative-bounds-wrap", _ov("u64", -100.7, -1), [0, 1], range_wrap, None),
    ("openvino-bf16-bound-truncated", _ov("bf16", -1.25, 2.7), [3.0, 100.0], bf16_bound_trunc, AVX2),
    ("openvino-bf16-subnormal-bound-flushed", _ov("bf16", -(2.0**-130), 2.0**-130), [-math.inf, 1.0], bf16_flush,
     NATIVE),
    ("openvino-nan-input-becomes-min", _ov("f32", 0.0, 6.0), [math.nan], nan_to_min, None),
    ("openvino-f64-computed-in-f32", _ov("f64", -1.25, 2.7), [100.0, 5e-324], f64_in_f32, None),
    ("openvino-i64-in-32-bits", _ov("i64", -6, 6), [-(2**63), 2**63 - 1], int_32bit, None),
    ("openvino-u32-as-i32", _ov("u32", 0, 6), [2**32 - 1], u32_as_i32, None),
    ("openvino-i32-bound-beyond-int32-wraps", _ov("i32", 2147483647.5, 2147484647.5), [0, -5], int_bounds_wrap,
     None),
    ("openvino-u8-static-shape-truncates-min", _ov("u8", 1.5, 4.5, [1]), [0, 1], static_trunc, None),
    ("onnxruntime-nan-bound-ignored", OnnxSpec(dialect="onnx", opset=13, elem_type="FLOAT", min="nan", max=6.0),
     [-5.0, 3.0], ort_nan_bound_ignored, None),
    ("onnxruntime-clip11-f16-absent-bounds-keep-inf", OnnxSpec(dialect="onnx", opset=11, elem_type="FLOAT16"),
     [math.inf, -math.inf], ort_f16_default_keeps_inf, None),
]


def _on_host(hosts: frozenset | None) -> bool:
    """Whether a recorded deviation occurs on this host (derived from the same detection the notes use)."""
    if hosts is not None and HOST == engine_config.BF16_UNKNOWN:
        pytest.skip(f"this host ({engine_config.cpu_isa()}) is none of the measured CPU variants")
    return hosts is None or HOST in hosts


def _resolve(spec: OnnxSpec | OpenVinoSpec) -> Meaning:
    return resolve(spec) if isinstance(spec, OnnxSpec) else ov_meaning.resolve(spec)


def _case(spec: OnnxSpec | OpenVinoSpec, inputs: list) -> tuple[Meaning, sweep.Artifact, np.ndarray, np.ndarray,
                                                                 np.ndarray]:
    """(meaning, artifact, x, spec output, engine output) of a recorded case."""
    m = _resolve(spec)
    x = m.dtype.array(inputs)
    got = _run(spec, x).reshape(-1)
    with np.errstate(all="ignore"):
        want = evaluate(m, x)
    return m, sweep.Artifact("", "", m.dtype, "both", spec), x, want, got


@pytest.mark.parametrize("spec, inputs, model, hosts", [pytest.param(*r[1:], id=r[0]) for r in RECORDED])
def test_recorded_deviation_is_noted(spec, inputs, model, hosts):
    """On the hosts it occurs on, the meaning carries the note and the note's model predicts the engine's output
    at every input where it departs from the spec; elsewhere the note is absent and the engine follows the spec."""
    m, a, x, want, got = _case(spec, inputs)
    attached = model in [MODELS[n] for n in m.engine_notes if n in MODELS]
    if not _on_host(hosts):
        assert not attached, f"{model.__name__} is attached on a {HOST} host, where it does not occur"
        assert same_outputs(want, got).all(), f"engine {got.tolist()}, spec {want.tolist()} on a {HOST} host"
        return
    assert attached, [n.text for n in m.engine_notes]
    deviating = 0
    for i in range(len(x)):
        xi, wi, gi = (m.dtype.to_python(v) for v in (x[i], want[i], got[i]))
        if not _eq(m.dtype, gi, wi):
            deviating += 1
            assert explains(model, m, a, xi, gi), (xi, wi, gi, model(m, a, xi))
    assert deviating, "the engine follows the spec at every input: the deviation is gone (or the inputs miss it)"


def _run(spec: OnnxSpec | OpenVinoSpec, x: np.ndarray) -> np.ndarray:
    if isinstance(spec, OnnxSpec):
        return sweep.run_onnx(spec, x)
    if spec.shape:
        return np.concatenate([sweep.run_openvino(spec, x[i:i + 1]) for i in range(len(x))])
    return sweep.run_openvino(spec, x)


def _follows(m: Meaning, got: np.ndarray, expected: np.ndarray) -> None:
    """The check every strict xfail below runs: the engine's output is the expected one (NaN = NaN)."""
    assert same_outputs(expected, got.reshape(expected.shape).astype(expected.dtype)).all(), \
        f"engine {got.tolist()}, expected {expected.tolist()}"


def _inverted(dt: DType, v: Any) -> Any:
    """A value of the type that is not v: the deliberately wrong expectation of the flip check."""
    if dt.is_float:
        return 1.0 if math.isnan(v) or v == 0 else -v
    return v + 1 if dt.contains(v + 1) else v - 1


@pytest.mark.parametrize("spec, inputs, model, hosts", [
    pytest.param(*r[1:], id=r[0], marks=pytest.mark.xfail(
        condition=r[4] is None or HOST in r[4], strict=True,
        reason=f"recorded engine deviation ({r[3].__name__}) on "
               f"{'every host' if r[4] is None else ', '.join(sorted(r[4]))}: the engine departs from the spec"))
    for r in RECORDED])
def test_recorded_deviation_engine_follows_spec(spec, inputs, model, hosts):
    m, _, _, want, got = _case(spec, inputs)
    _follows(m, got, want)


@pytest.mark.parametrize("spec, inputs, model, hosts", [pytest.param(*r[1:], id=r[0]) for r in RECORDED])
def test_recorded_xfail_can_flip(spec, inputs, model, hosts):
    """Each strict xfail above can flip: its check passes against the model's prediction of the engine (so the
    xfail turns into an XPASS the day the engine follows the spec) and fails against an inverted prediction."""
    if not _on_host(hosts):
        pytest.skip(f"the deviation does not occur on this {HOST} host; the check there is a plain pass")
    m, a, x, want, got = _case(spec, inputs)
    predicted = want.copy()
    for i in range(len(x)):
        xi, wi, gi = (m.dtype.to_python(v) for v in (x[i], want[i], got[i]))
        if not _eq(m.dtype, gi, wi):
            cands = model(m, a, xi)
            assert cands, f"{model.__name__} predicts nothing at x={xi!r}"
            # The model's reading the engine took (a note may allow a few readings; the first when none matches).
            predicted[i] = next((c for c in cands if _eq(m.dtype, gi, c)), cands[0])
    _follows(m, got, predicted)
    wrong = m.dtype.array([_inverted(m.dtype, m.dtype.to_python(v)) for v in predicted])
    with pytest.raises(AssertionError):
        _follows(m, got, wrong)
