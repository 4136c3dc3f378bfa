"""TensorFlow Lite / LiteRT clips resolved to a Meaning: RELU6, RELU_N1_TO_1, RELU_0_TO_1, RELU, or MINIMUM then
MAXIMUM.

TFLite has no general clip op. Its fixed-range activations clamp to (0, 6), (-1, 1), (0, 1) and (0, inf)
(tensorflow/lite/kernels/activations.cc); any other range is MINIMUM(x, max) then MAXIMUM(., min), the order the
converter gives tf.clip_by_value (tensorflow/python/ops/clip_ops.py), so min > max gives min. Quantized tensors
(uint8, int8, int16) hold integers q with x = scale * (q - zero_point); the fixed ranges become integer bounds by
QuantizedReluX's rule (quant.py), and MINIMUM_MAXIMUM's constants are stored integers. The emitted .tflite bytes
are written by flatbuffer.py (graph_of, model_bytes); the runtime engine (ai-edge-litert's Interpreter, with its
default XNNPACK delegate) is engine.py.

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

import math

from clipbridge.core import exact
from clipbridge.core.dtypes import INT16, DType
from clipbridge.core.errors import SpecError
from clipbridge.core.meaning import Bound, EngineNote, Meaning, NanBound, NanInput, Order, State, evolve
from clipbridge.core.numbers import Number, format_number
from clipbridge.core.suggest import one_of
from clipbridge.dialects.kit.base import source_resolver
from clipbridge.dialects.kit.common import cached_cast, rounded_float_bound
from clipbridge.dialects.kit.spec_base import spec_json
from clipbridge.dialects.tflite.catalogue import MM_SRC, READING_BUILTIN, READING_LINES, READINGS, SRC
from clipbridge.dialects.tflite.quant import quantization_tflite, quantized_bound_tflite
from clipbridge.dialects.tflite.spec import DTYPES, FIXED, MINMAX, NAME, OP_DTYPES, OPS, VERSIONS, TfliteSpec

REJECT_INT16 = "Only float32, uint8, int8 supported currently, got INT16."
REJECT_INT16_ZP = "input->params.zero_point != 0"  # activations.cc: int16 activations are symmetric
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


@cached_cast
def typed_bound_tflite(value: Number, dt: DType, side: str) -> Bound:
    """MINIMUM_MAXIMUM's constant: a float32 constant (one rounding) or a stored integer of the tensor type."""
    if dt.is_float:  # float32 is TFLite's only float dtype here
        return rounded_float_bound(value, dt, side, "as a float32 constant")
    if not exact.is_integral(value) or not dt.contains(value):
        raise SpecError(f"{side} must be a stored {dt.name} value (an integer in [{dt.lowest()}, {dt.highest()}]"
                        f"; quantized constants are stored integers). Got: {format_number(value)}", side)
    return Bound(int(value), value)


def resolve(spec: TfliteSpec) -> Meaning:
    """The xnnpack reading's meaning (the default), with the builtin reading's kept in `alternates`."""
    m = resolve_xnnpack(spec)
    if m.state is State.REJECTED:
        return m  # both paths refuse it in Prepare/Eval
    return evolve(m, readings=READING_LINES, alternates=((READING_BUILTIN, builtin_tflite(m)),))


def builtin_tflite(m: Meaning) -> Meaning:
    """The builtin kernels (no default delegate): subnormals kept (NOTE_FTZ is XNNPACK's); float MINIMUM/MAXIMUM
    are maximum_minimum.cc's `el1 < el2 ? el1 : el2` / `el1 > el2 ? el1 : el2` with the tensor as el1: MINIMUM(NaN,
    max) = max (a NaN input is read as max, then clipped), MAXIMUM(t, NaN) = NaN (a NaN min: all NaN)."""
    notes = tuple(n for n in m.engine_notes if n not in (NOTE_FTZ, NOTE_MM_NAN_BUILTIN, NOTE_MM_NAN_BOUND))
    rules = m.rules + (f"builtin reading: {READINGS[READING_BUILTIN]}",)
    if m.version != MINMAX or not m.dtype.is_float:
        return evolve(m, engine_notes=notes, rules=rules)
    assert m.upper is not None
    return evolve(m, upper=nan_max_builtin_tflite(m.upper), nan_input=NanInput.TO_UPPER,
                   nan_bound=NanBound.PROPAGATE, engine_notes=notes, rules=rules)


def nan_max_builtin_tflite(upper: Bound) -> Bound:
    """A NaN max on the builtin kernels: MINIMUM(x, NaN) = `x < NaN ? x : NaN` = NaN, then MAXIMUM(NaN, min) = min
    for every input (maximum_minimum.cc): the same function as max = -inf under min-wins."""
    if not upper.is_nan:
        return upper
    return evolve(upper, value=-math.inf, steps=upper.steps + (
        "max NaN (builtin kernels): MINIMUM(x, NaN) = NaN, then MAXIMUM(NaN, min) = min for every input: read as "
        "max = -inf, so min > max gives min",))


def resolve_xnnpack(spec: TfliteSpec) -> Meaning:
    """The function the op computes on the stored values (quantized integers for uint8/int8/int16)."""
    op = op_tflite(spec.op)
    dt = dtype_tflite(spec.dtype, op)
    quant = quantization_tflite(spec, op, dt)
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
