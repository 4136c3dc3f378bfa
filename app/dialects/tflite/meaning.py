"""TensorFlow Lite / LiteRT clips: RELU6, RELU_N1_TO_1, RELU_0_TO_1, RELU, or MINIMUM then MAXIMUM.

TFLite has no general clip op. Its fixed-range activations clamp to (0, 6), (-1, 1), (0, 1) and (0, inf)
(tensorflow/lite/kernels/activations.cc); any other range is MINIMUM(x, max) then MAXIMUM(., min), the order the
converter gives tf.clip_by_value (tensorflow/python/ops/clip_ops.py), so min > max gives min. Quantized tensors
(uint8, int8, int16) hold integers q with x = scale * (q - zero_point); the fixed ranges become integer bounds by
QuantizedReluX's rule, and MINIMUM_MAXIMUM's constants are stored integers. The emitted .tflite bytes are written
here (graph_of, model_bytes); the runtime engine (ai-edge-litert's Interpreter, with its default XNNPACK delegate)
is tflite_engine.invoke.

Measured on ai-edge-litert 2.3.0 (tests/dialects/test_tflite.py): the float ops propagate a NaN input on every
path (default delegate, builtin kernels, reference kernels); the reference's inference that the RELU6 loop
`std::min(std::max(0.f, x), 6.f)` maps NaN to 0 is not what this build does.

Two readings (Dialect.readings; the first is the default), both measured, since no document states either:
- `xnnpack`: what `Interpreter()` computes (its default op resolver applies the XNNPACK delegate): the default,
  because it is what a user running a model gets. Float NaN inputs propagate; subnormals flush (an engine note).
- `builtin`: the builtin kernels without default delegates (OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES):
  subnormals kept; float MINIMUM/MAXIMUM are maximum_minimum.cc's ternaries, so a NaN input gives the clip of max
  (NanInput.TO_UPPER), a NaN min gives all NaN and a NaN max gives min everywhere (rule `builtin_tflite`).
The resolved Meaning is the xnnpack reading's; `Meaning.alternates` holds ("builtin", its meaning), so
/v1/execute and /v1/compare take `"reading": "builtin"` (the `litert` backend then runs the builtin kernels) and
translations report drift "under the builtin reading".
"""

from __future__ import annotations

import base64
import math
from dataclasses import replace
from fractions import Fraction
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import StrictInt, StringConstraints

from app.engines import config as engine_config
from app.core import exact
from app.dialects import tflite_engine
from app.dialects.kit.base import Dialect, source_resolver
from app.dialects.kit.common import (Emitted, LazyArtifacts, Mode, TypeWords, default_made_explicit, literal_integer_cast,
                                 rounded_float_bound)
from app.dialects.kit.spec_base import Shape, WireNumber, _Strict, spec_json
from app.core.dtypes import FLOAT32, INT8, INT16, INT32, INT64, UINT8, DType
from app.core.errors import RejectedSpec, SpecError
from app.core.findings import Code, Finding, Notes, Severity
from app.core.meaning import Bound, EngineNote, Meaning, NanBound, NanInput, Order, State
from app.core.numbers import Number, format_number
from app.dialects.tflite_flatbuffer import Graph, build_model
from app.core.suggest import one_of

NAME = "tflite"
SRC = "tensorflow/lite/kernels/activations.cc"
MM_SRC = "tensorflow/lite/kernels/maximum_minimum.cc; tensorflow/python/ops/clip_ops.py (tf.clip_by_value)"
MINMAX = "MINIMUM_MAXIMUM"
# op -> (real lower, real upper): the fixed ranges of the activation kernels.
FIXED: dict[str, tuple[float, float]] = {"RELU6": (0.0, 6.0), "RELU_N1_TO_1": (-1.0, 1.0),
                                         "RELU_0_TO_1": (0.0, 1.0), "RELU": (0.0, math.inf)}
OPS = (*FIXED, MINMAX)
DTYPES: dict[str, DType] = {"float32": FLOAT32, "uint8": UINT8, "int8": INT8, "int16": INT16,
                            "int32": INT32, "int64": INT64}
QUANTIZED = ("uint8", "int8", "int16")
# The kernels' type checks (activations.cc Relu1Eval / Relu0to1Eval error text, observed on ai-edge-litert 2.3.0).
OP_DTYPES: dict[str, tuple[str, ...]] = {"RELU6": ("float32", "uint8", "int8", "int16"),
                                         "RELU": ("float32", "uint8", "int8", "int16"),
                                         "RELU_N1_TO_1": ("float32", "uint8", "int8"),
                                         "RELU_0_TO_1": ("float32", "uint8", "int8"),
                                         MINMAX: tuple(DTYPES)}
REJECT_INT16 = "Only float32, uint8, int8 supported currently, got INT16."
REJECT_INT16_ZP = "input->params.zero_point != 0"  # activations.cc: int16 activations are symmetric
# Runtime versions (TensorFlow numbering, tflite op-version table): RELU_0_TO_1 v1 is "2.10.0".
VERSIONS = ("1.5", "2.10", "2.18")
RELU_0_TO_1_SINCE = (2, 10)
INT32_MAX = 2**31 - 1  # Tensor.shape is [int] (int32) in schema.fbs
LITERT = "ai-edge-litert 2.3.0 (XNNPACK delegate)"
NOTE_FTZ = EngineNote(LITERT, "Subnormal float32 inputs (and MINIMUM/MAXIMUM constants) are read as zero (sign "
                              "kept) by RELU6, RELU_N1_TO_1, RELU and MINIMUM/MAXIMUM under the default XNNPACK "
                              "delegate; the builtin kernels and RELU_0_TO_1 (not delegated) keep them.")
NOTE_MM_NAN_BUILTIN = EngineNote("ai-edge-litert 2.3.0 (builtin kernels)", (
    "Without the default delegate (OpResolverType BUILTIN_WITHOUT_DEFAULT_DELEGATES or BUILTIN_REF), MINIMUM is "
    "`el1 < el2 ? el1 : el2`: MINIMUM(NaN, max) = max, so a NaN input gives the clip of +inf (max; min when "
    "min > max). The default interpreter (XNNPACK) propagates it."))
NOTE_MM_NAN_BOUND = EngineNote(LITERT, (
    "A NaN constant: MAXIMUM(t, NaN) under XNNPACK leaves x unclipped on both sides (observed identity); the builtin "
    "kernels give all NaN. MINIMUM(x, NaN) gives min for every non-NaN input on both paths."))
READING_XNNPACK = "xnnpack"
READING_BUILTIN = "builtin"
READINGS = {
    READING_XNNPACK: "Interpreter() default: the XNNPACK delegate runs float32 RELU6/RELU_N1_TO_1/RELU/MINIMUM/"
                     "MAXIMUM; NaN inputs propagate, subnormals flush (ai-edge-litert 2.3.0, measured)",
    READING_BUILTIN: "OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES / BUILTIN_REF: maximum_minimum.cc's ternaries "
                     "(MINIMUM(NaN, max) = max), subnormals kept (measured)",
}

READING_LINES = tuple(f"{k}: {v}" for k, v in READINGS.items())


class TfliteQuantization(_Strict):
    """Per-tensor quantization of a uint8/int8/int16 tensor: real = scale * (q - zero_point)."""

    scale: WireNumber
    zero_point: StrictInt = 0


class TfliteSpec(_Strict):
    """A TFLite clip: `op` (RELU6, RELU_N1_TO_1, RELU_0_TO_1, RELU, MINIMUM_MAXIMUM with `min`/`max`), `dtype`,
    optional `quantization` for uint8/int8/int16, `shape`."""

    dialect: Literal["tflite"]
    op: Annotated[str, StringConstraints(max_length=32)]
    dtype: Annotated[str, StringConstraints(max_length=16)] = "float32"
    min: WireNumber | None = None
    max: WireNumber | None = None
    quantization: TfliteQuantization | None = None
    shape: Shape | None = None


class TfliteTarget(_Strict):
    dialect: Literal["tflite"]
    version: Annotated[str, StringConstraints(max_length=16)] | None = None


def version_tflite(text: str, loc: str = "version") -> str:
    """A TFLite runtime version "major.minor" (TensorFlow numbering, as the op-version table writes it)."""
    parts = text.strip().lstrip("v").split(".")
    try:
        major, minor = int(parts[0]), int(parts[1]) if len(parts) > 1 else 0
    except ValueError:
        raise SpecError(one_of("Unknown TFLite runtime version", text, VERSIONS), loc) from None
    if (major, minor) < (1, 5) or major > 2:
        raise SpecError(one_of("Unknown TFLite runtime version", text, VERSIONS), loc)
    return f"{major}.{minor}"


def op_tflite(name: str, loc: str = "op") -> str:
    """The builtin operators that clip (schema.fbs BuiltinOperator), or MINIMUM_MAXIMUM for the pair."""
    key = name.strip().upper()
    if key not in OPS:
        raise SpecError(one_of("Unknown TFLite clip op", name, OPS), loc)
    return key


def dtype_tflite(name: str, op: str, loc: str = "dtype") -> DType:
    """The tensor types the op's kernel takes (MINIMUM/MAXIMUM also int32 and int64)."""
    key = name.strip().lower()
    if key not in DTYPES:
        raise SpecError(one_of("Unknown TFLite dtype", name, DTYPES), loc)
    if key not in OP_DTYPES[op] and key != "int16":  # int16 RELU_N1_TO_1/RELU_0_TO_1 builds, then fails Prepare
        raise SpecError(f"{op} has no {key} kernel (it takes {', '.join(OP_DTYPES[op])}). Got: {name}", loc)
    return DTYPES[key]


def round_half_away_tflite(value: Number) -> int:
    """TfLiteRound / roundf (C99 7.12.9.6): the nearest integer, halfway cases away from zero."""
    mag = abs(Fraction(value))
    r = exact.floor_exact(mag)
    if mag - r >= Fraction(1, 2):
        r += 1
    return -r if value < 0 else r


def scale_tflite(q: TfliteQuantization) -> float:
    """QuantizationParameters.scale is a float32 (schema.fbs): the given scale rounded once; finite and > 0."""
    s = exact.to_float32(q.scale)
    if not (math.isfinite(s) and s > 0):
        raise SpecError(f"scale must be a finite float32 > 0 (the kernels divide by it). Got: "
                        f"{format_number(q.scale)}", "quantization.scale")
    return s


def quantized_bound_tflite(act: float, scale: float, zp: int, dt: DType, side: str) -> Bound:
    """QuantizedReluX: zero_point + (int32)roundf(act / scale), the quotient a float32 (two roundings: the division,
    then roundf), then max(qmin, .) for the lower bound and min(qmax, .) for the upper; act_max = inf gives qmax
    (activations.cc)."""
    if math.isinf(act):
        return Bound(dt.highest(), None, (f"{side}: act_max = inf gives qmax = {dt.highest()}",))
    quotient = exact.to_float32(Fraction(act) / Fraction(scale))  # float / float: one IEEE rounding to float32
    r = round_half_away_tflite(quotient) if math.isfinite(quotient) else 2**31
    if not -(2**31) <= zp + r < 2**31 or not -(2**31) <= r < 2**31:
        raise SpecError(f"{format_number(act)} / scale = {format_number(quotient)} is outside int32: the kernel's "
                        "float-to-int32 cast is undefined there. Got: scale "
                        f"{format_number(scale)}", "quantization.scale")
    q = zp + r
    v = max(dt.lowest(), q) if side == "min" else min(dt.highest(), q)
    steps = (f"{side}: {format_number(act)} / {format_number(scale)} = {format_number(quotient)} in float32, "
             f"roundf -> {r}, + zero_point {zp} = {q}" + (f", clamped to {v}" if v != q else ""),)
    return Bound(v, None, steps, rounded=not exact.is_integral(quotient), saturated=v != q)


def typed_bound_tflite(value: Number, dt: DType, side: str) -> Bound:
    """MINIMUM_MAXIMUM's constant: a float32 constant (one rounding) or a stored integer of the tensor type."""
    if dt.is_float:  # float32 is TFLite's only float dtype here
        return rounded_float_bound(value, dt, side, "as a float32 constant")
    if not exact.is_integral(value) or not dt.contains(value):
        raise SpecError(f"{side} must be a stored {dt.name} value (an integer in [{dt.lowest()}, {dt.highest()}]"
                        f"; quantized constants are stored integers). Got: {format_number(value)}", side)
    return Bound(int(value), value)


def _quantization(spec: TfliteSpec, op: str, dt: DType) -> tuple[float, int] | None:
    """Per-tensor quantization: required by the fixed-range ops on integer types, refused on float32/int32/int64."""
    q = spec.quantization
    if q is None:
        if op != MINMAX and not dt.is_float:
            raise SpecError(f"{op} on {dt.name} needs `quantization` (scale, zero_point): its bounds are "
                            "quantized from the real range", "quantization")
        return None
    if dt.name not in QUANTIZED:
        raise SpecError(f"quantization applies to uint8, int8 and int16 tensors. Got: {dt.name}", "quantization")
    if not dt.contains(q.zero_point):
        raise SpecError(f"zero_point must be a {dt.name} value. Got: {q.zero_point}", "quantization.zero_point")
    return scale_tflite(q), q.zero_point


def resolve(spec: TfliteSpec) -> Meaning:
    """The xnnpack reading's meaning (the default), with the builtin reading's kept in `alternates`."""
    m = resolve_xnnpack(spec)
    if m.state is State.REJECTED:
        return m  # both paths refuse it in Prepare/Eval
    return replace(m, readings=READING_LINES, alternates=((READING_BUILTIN, builtin_tflite(m)),))


def builtin_tflite(m: Meaning) -> Meaning:
    """The builtin kernels (no default delegate): subnormals kept (NOTE_FTZ is XNNPACK's); float MINIMUM/MAXIMUM
    are maximum_minimum.cc's `el1 < el2 ? el1 : el2` / `el1 > el2 ? el1 : el2` with the tensor as el1: MINIMUM(NaN,
    max) = max (a NaN input is read as max, then clipped), MAXIMUM(t, NaN) = NaN (a NaN min: all NaN)."""
    notes = tuple(n for n in m.engine_notes if n not in (NOTE_FTZ, NOTE_MM_NAN_BUILTIN, NOTE_MM_NAN_BOUND))
    rules = m.rules + (f"builtin reading: {READINGS[READING_BUILTIN]}",)
    if m.version != MINMAX or not m.dtype.is_float:
        return replace(m, engine_notes=notes, rules=rules)
    assert m.upper is not None
    return replace(m, upper=nan_max_builtin_tflite(m.upper), nan_input=NanInput.TO_UPPER,
                   nan_bound=NanBound.PROPAGATE, engine_notes=notes, rules=rules)


def nan_max_builtin_tflite(upper: Bound) -> Bound:
    """A NaN max on the builtin kernels: MINIMUM(x, NaN) = `x < NaN ? x : NaN` = NaN, then MAXIMUM(NaN, min) = min
    for every input (maximum_minimum.cc): the same function as max = -inf under min-wins."""
    if not upper.is_nan:
        return upper
    return replace(upper, value=-math.inf, steps=upper.steps + (
        "max NaN (builtin kernels): MINIMUM(x, NaN) = NaN, then MAXIMUM(NaN, min) = min for every input: read as "
        "max = -inf, so min > max gives min",))


def resolve_xnnpack(spec: TfliteSpec) -> Meaning:
    """The function the op computes on the stored values (quantized integers for uint8/int8/int16)."""
    op = op_tflite(spec.op)
    dt = dtype_tflite(spec.dtype, op)
    quant = _quantization(spec, op, dt)
    has_bounds = spec.min is not None or spec.max is not None
    if op == MINMAX:
        if spec.min is None or spec.max is None:
            raise SpecError("MINIMUM_MAXIMUM needs both `min` and `max` (the MAXIMUM and MINIMUM constants)",
                            "min" if spec.min is None else "max")
        return _resolve_minmax(spec, dt)
    if has_bounds:
        raise SpecError(f"{op} has a fixed range {FIXED[op]}; `min`/`max` belong to MINIMUM_MAXIMUM",
                        "min" if spec.min is not None else "max")
    rules = (f"TFLite {op}: clamp to [{format_number(FIXED[op][0])}, {format_number(FIXED[op][1])}] ({SRC})",
             "NaN input propagates (measured on the default delegate, the builtin and the reference kernels)")
    if dt.is_float:
        lo, hi = (Bound(v, v) for v in FIXED[op])
        notes = (NOTE_FTZ,) if op != "RELU_0_TO_1" else ()
        return Meaning(NAME, op, dt, lo, hi, order=Order.MAX_WINS, nan_input=NanInput.PROPAGATE,
                       nan_bound=NanBound.PROPAGATE, rules=rules, engine_notes=notes)
    assert quant is not None
    scale, zp = quant
    if dt is INT16 and op not in ("RELU6", "RELU"):
        return _rejected(op, dt, REJECT_INT16)
    if dt is INT16 and zp != 0:
        return _rejected(op, dt, f"{REJECT_INT16_ZP} ({zp} != 0): int16 activations are symmetric")
    lo = quantized_bound_tflite(FIXED[op][0], scale, zp, dt, "min")
    hi = quantized_bound_tflite(FIXED[op][1], scale, zp, dt, "max")
    rules += ("quantized bounds: zero_point + roundf(act / scale) in float32 (half away from zero), clamped to "
              "the type (QuantizedReluX)",
              f"values are the stored {dt.name} integers q (real = {format_number(scale)} * (q - {zp})); input and "
              "output share the quantization, so the kernel's rescale is the identity",)
    return Meaning(NAME, op, dt, lo, hi, order=Order.MAX_WINS, nan_input=NanInput.PROPAGATE,
                   nan_bound=NanBound.PROPAGATE, rules=rules)


def _rejected(op: str, dt: DType, reason: str) -> Meaning:
    return Meaning(NAME, op, dt, None, None, state=State.REJECTED, reason=f"{op} on {dt.name}: {reason}",
                   rules=(f"the kernel's Prepare/Eval refuses it ({SRC})",))


def _resolve_minmax(spec: TfliteSpec, dt: DType) -> Meaning:
    """MINIMUM(x, max) then MAXIMUM(., min): min > max gives min; NaN constants are order-dependent."""
    assert spec.min is not None and spec.max is not None
    lo = typed_bound_tflite(spec.min, dt, "min")
    hi = typed_bound_tflite(spec.max, dt, "max")
    rules = (f"TFLite MINIMUM(x, max) then MAXIMUM(., min): max(min, min(x, max)), min > max gives min ({MM_SRC})",
             "NaN input propagates under the default XNNPACK delegate (measured); the builtin kernels give max",
             "a NaN constant: `el1 > el2 ? el1 : el2` is order-dependent, no documented rule")
    notes: tuple[EngineNote, ...] = ()
    if dt.is_float:
        notes = (NOTE_FTZ, NOTE_MM_NAN_BUILTIN) + ((NOTE_MM_NAN_BOUND,) if lo.is_nan or hi.is_nan else ())
    return Meaning(NAME, MINMAX, dt, lo, hi, order=Order.MIN_WINS, nan_input=NanInput.PROPAGATE,
                   nan_bound=NanBound.UNDOCUMENTED, rules=rules, engine_notes=notes)


def normalize(spec: TfliteSpec) -> dict:
    out = spec_json(spec)
    out["op"] = spec.op.strip().upper()
    out["dtype"] = spec.dtype.strip().lower()
    return out


resolve_source = source_resolver(NAME, resolve, normalize)


# --- emit -----------------------------------------------------------------------------------------------------

def fixed_op_tflite(lo: Number, hi: Number, version: str) -> str | None:
    """The converter's matching: a float32 clip to exactly (0, 6), (-1, 1), (0, 1) or (0, inf) is that op."""
    since = tuple(int(p) for p in version.split("."))
    for op, (a, b) in FIXED.items():
        if op == "RELU_0_TO_1" and since < RELU_0_TO_1_SINCE:
            continue  # RELU_0_TO_1 v1 needs runtime 2.10 (op-version table)
        if not (exact.is_nan(lo) or exact.is_nan(hi)) and lo == a and hi == b:
            return op
    return None


def _literal(bound: Bound, dt: DType, side: str, notes: Notes) -> Number:
    """Literal mode: the source's number as written (one rounding to float32, or a C cast to the integer type)."""
    if default_made_explicit(bound, side, "MINIMUM_MAXIMUM", notes):
        return bound.value
    if dt.is_float:
        return bound.given
    return literal_integer_cast(bound.given, dt, side, notes,
                                TypeWords(f"a {dt.name} constant", dt.name, f"a {dt.name}", dt.name))


def _preserve(src: Meaning, notes: Notes) -> list[Number]:
    """Preserve mode: the source's effective bounds; an ignored or zero NaN bound and max-wins order rewritten."""
    assert src.lower is not None and src.upper is not None
    values: list[Number] = [src.lower.value, src.upper.value]
    for i, side in enumerate(("min", "max")):
        if exact.is_nan(values[i]) and src.nan_bound in (NanBound.IGNORE, NanBound.ZERO):
            values[i] = 0.0 if src.nan_bound is NanBound.ZERO else (-math.inf if i == 0 else math.inf)
            notes.add(Code.NAN_BOUND, Severity.INFO, f"The source reads a NaN {side} as "
                      f"{format_number(values[i])}; TFLite's MINIMUM/MAXIMUM are order-dependent on NaN: wrote "
                      f"{format_number(values[i])}")
    if src.crossed and src.order is Order.MAX_WINS:
        values = [values[1], values[1]]
        notes.add(Code.MIN_GREATER_THAN_MAX, Severity.INFO, "The source gives max when min > max; MINIMUM then "
                  "MAXIMUM gives min: emitted min = max = max")
    return values


def _unsupported(code: Code, message: str, src: Meaning) -> Emitted:
    return Emitted(None, None, [Finding(code, Severity.ERROR, message, src.describe(), "not expressible")],
                   unsupported=True)


def emit(src: Meaning, target: TfliteTarget, mode: Mode, shape: list | None) -> Emitted:
    """A TFLite clip (compact spec and .tflite bytes) computing `src`: a fixed-range op when the bounds are
    exactly its range, else MINIMUM then MAXIMUM."""
    version = version_tflite(target.version or VERSIONS[-1])
    dt = src.dtype
    if src.scale_bias is not None:
        return _unsupported(Code.SCALE_BIAS, "ScaleBias is not expressed in the TFLite artifact (MUL and ADD before "
                            "the clip would be needed)", src)
    if src.has_tensor_bounds:
        return _unsupported(Code.TENSOR_BOUNDS, "Per-element bounds are not emitted for TFLite yet (MINIMUM/MAXIMUM "
                            "with broadcast constant tensors would take them)", src)
    if src.result_dtype not in (None, dt):
        return _unsupported(Code.DTYPE_PROMOTION, "The source promotes its output dtype; a TFLite clip keeps the "
                            "input's", src)
    if dt.name not in DTYPES:
        return _unsupported(Code.DTYPE_UNSUPPORTED, f"TFLite has no {dt.name} clip (MINIMUM/MAXIMUM take "
                            f"{', '.join(DTYPES)})", src)
    notes = Notes()
    assert src.lower is not None and src.upper is not None
    if mode is Mode.LITERAL:
        values = [_literal(src.lower, dt, "min", notes), _literal(src.upper, dt, "max", notes)]
    else:
        values = _preserve(src, notes)
    op = fixed_op_tflite(exact.to_float32(values[0]), exact.to_float32(values[1]), version) \
        if dt.is_float else None
    if op is None:
        notes.add(Code.TENSOR_BOUNDS, Severity.INFO, f"No single TFLite op clips to [{format_number(values[0])}, "
                  f"{format_number(values[1])}]: emitted MINIMUM(x, max) then MAXIMUM(., min) with constant "
                  "tensors (the converter's lowering of tf.clip_by_value)")
        spec = TfliteSpec(dialect=NAME, op=MINMAX, dtype=dt.name, min=values[0], max=values[1], shape=shape)
    else:
        spec = TfliteSpec(dialect=NAME, op=op, dtype=dt.name, shape=shape)
    meaning = resolve(spec)
    wide = [d for d in shape or [] if isinstance(d, int) and d > INT32_MAX]
    if wide:
        notes.add(Code.SHAPE_UNKNOWN, Severity.INFO, f"TFLite tensor sizes are int32 (schema.fbs): size {wide[0]} "
                  "written as -1 (dynamic, shape_signature)")
    return Emitted(normalize(spec), meaning, notes.items, LazyArtifacts(lambda: {"tflite_model": model_base64(spec, meaning)}))


# --- interface --------------------------------------------------------------------------------------------------

def target(version: str | None) -> TfliteTarget:
    return TfliteTarget(dialect=NAME, version=version)


def capability() -> dict[str, Any]:
    return {"dialect": NAME, "default_target": {"dialect": NAME, "version": VERSIONS[-1]},
            "versions": [{"version": op, "selects": "TFLite runtime >= 2.10" if op == "RELU_0_TO_1" else
                          "TFLite runtime >= 1.5", "dtypes": list(OP_DTYPES[op]), "ranks": "any",
                          "rules": [f"clamp to [{format_number(FIXED[op][0])}, {format_number(FIXED[op][1])}]",
                                    "quantized: zero_point + roundf(act / scale) (float32 quotient, half away "
                                    "from zero), clamped to the type",
                                    "NaN input propagates (measured)"]} for op in FIXED]
            + [{"version": MINMAX, "selects": "any TFLite runtime", "dtypes": list(DTYPES), "ranks": "any",
                "rules": ["MINIMUM(x, max) then MAXIMUM(., min): min > max gives min",
                          "constants: float32 (one rounding) or stored integers of the tensor type",
                          "NaN input propagates under XNNPACK; the builtin kernels give max (reading 'builtin')",
                          "a NaN constant: order-dependent, undocumented"]}]}


# --- the .tflite artifact and the LiteRT engine (the interpreter itself: tflite_engine.invoke) --------------

def graph_of(spec: Any, m: Meaning, shape: list | tuple | None) -> Graph:
    """What build_model writes for a resolved spec: the op, the stored bounds, quantization, and the shape (an
    unknown size is -1: written 1 with shape_signature -1)."""
    dims = tuple(d if isinstance(d, int) and d <= 2**31 - 1 else -1 for d in (shape if shape is not None else [None]))
    q = None
    if spec.quantization is not None:
        q = (scale_tflite(spec.quantization), spec.quantization.zero_point)
    lo = hi = None
    if spec.op.strip().upper() == MINMAX:
        lo, hi = m.lo, m.hi
    return Graph(spec.op.strip().upper(), m.dtype.name, dims, lo, hi, q)


def model_bytes(spec: Any, m: Meaning, shape: list | tuple | None = None) -> bytes:
    return build_model(graph_of(spec, m, spec.shape if shape is None else shape))


def model_base64(spec: Any, m: Meaning) -> str:
    """The emitted artifact: the flatbuffer as base64 (binary artifacts travel as base64 strings in JSON)."""
    return base64.b64encode(model_bytes(spec, m)).decode()


def resolver_of(reading: str | None) -> str:
    """The op resolver that runs a reading: builtin -> the builtin kernels; xnnpack or none -> the default."""
    return "builtin" if reading == READING_BUILTIN else "default"


def run_litert(sem: Any, x: np.ndarray, resolver: str | None = None) -> np.ndarray:
    """The semantics' own model (built for x's shape) on the LiteRT interpreter, with the op resolver of the
    chosen reading (`sem.reading`) unless `resolver` names one."""
    if sem.meaning.state is State.REJECTED:
        raise RejectedSpec(sem.meaning.reason or "rejected by TFLite", "spec")
    spec = TfliteSpec.model_validate(sem.spec)
    x = np.asarray(x, dtype=sem.meaning.dtype.np_dtype)
    # The model holds the spec's constants (the default meaning's): a reading changes how it runs, not what it is.
    data = model_bytes(spec, resolve(spec), list(x.shape) or [1])
    chosen = resolver or resolver_of(getattr(sem, "reading", None))
    y = tflite_engine.invoke(data, x, chosen)
    engine_config.record_run(engine_config.litert_settings(getattr(sem, "precision", "model"), chosen))
    return y


def _run_litert(sem: Any, x: Any) -> Any:
    return run_litert(sem, x)


RULE_TEXTS = {
    Code.MIN_GREATER_THAN_MAX.value: ("MINIMUM(x, max) then MAXIMUM(., min): min > max gives min", MM_SRC),
    Code.NAN_INPUT.value: ("NaN input propagates under the default XNNPACK delegate; the builtin MINIMUM gives max",
                           f"{MM_SRC}; measured on ai-edge-litert 2.3.0"),
    Code.NAN_BOUND.value: ("`el1 > el2 ? el1 : el2`: a NaN constant's effect depends on operand order", MM_SRC),
    Code.BOUND_ROUNDING.value: ("quantized bounds: zero_point + roundf(act / scale), float32 quotient, half away "
                                "from zero", f"{SRC} QuantizedReluX"),
    Code.BOUND_SATURATION.value: ("quantized bounds clamped to [qmin, qmax]", f"{SRC} QuantizedReluX"),
    Code.BOUND_PRECISION.value: ("MINIMUM/MAXIMUM constants are float32 tensors", "tensorflow/lite/schema/schema.fbs"),
    Code.DTYPE_UNSUPPORTED.value: ("RELU6/RELU: float32, uint8, int8, int16; RELU_N1_TO_1/RELU_0_TO_1: float32, "
                                   "uint8, int8; MINIMUM/MAXIMUM also int32, int64", f"{SRC}; {MM_SRC}"),
    Code.TENSOR_BOUNDS.value: ("only fixed ranges have an op; other bounds are MINIMUM/MAXIMUM constant tensors",
                               "tensorflow/compiler/mlir/lite (tf.clip_by_value lowering)"),
    Code.ENGINE_BEHAVIOUR.value: ("XNNPACK flushes float32 subnormals", "measured on ai-edge-litert 2.3.0"),
}
EXAMPLES = {
    "relu6-float32": {"dialect": NAME, "op": "RELU6", "dtype": "float32", "shape": [1, 4]},
    "relu6-int8-scale-0.07": {"dialect": NAME, "op": "RELU6", "dtype": "int8",
                              "quantization": {"scale": 0.07, "zero_point": 0}},
    "relu-n1-to-1-int8-half-away": {"dialect": NAME, "op": "RELU_N1_TO_1", "dtype": "int8",
                                    "quantization": {"scale": 0.4, "zero_point": 0}},
    "clip-by-value-crossed": {"dialect": NAME, "op": MINMAX, "dtype": "float32", "min": 6, "max": 4},
}

DIALECT = Dialect(
    name=NAME, spec_model=TfliteSpec, target_model=TfliteTarget, resolve=resolve_source, emit=emit,
    target=target, check_version=version_tflite, capability=capability, version_example="tflite:2.18",
    engines={"litert": _run_litert}, artifacts={"tflite_model": "base64 .tflite flatbuffer (schema 3)"},
    in_defaults=False, rule_texts=RULE_TEXTS, examples=EXAMPLES, readings=READINGS)
