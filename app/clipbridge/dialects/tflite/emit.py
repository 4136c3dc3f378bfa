"""Meaning -> a TFLite clip: a fixed-range op when the bounds are exactly its range, else MINIMUM then MAXIMUM; the
compact spec, its findings and (lazily) the .tflite model."""

from __future__ import annotations

import math

from clipbridge.core import exact
from clipbridge.core.dtypes import DType
from clipbridge.core.findings import Code, Finding, Notes, Severity
from clipbridge.core.meaning import Bound, Meaning, NanBound, Order
from clipbridge.core.numbers import Number, format_number
from clipbridge.dialects.kit.common import Emitted, LazyArtifacts, Mode, TypeWords, default_made_explicit, literal_integer_cast
from clipbridge.dialects.kit.crossed import collapse_crossed
from clipbridge.dialects.tflite.meaning import normalize, resolve, version_tflite
from clipbridge.dialects.tflite.patch import model_base64
from clipbridge.dialects.tflite.spec import DTYPES, FIXED, MINMAX, NAME, VERSIONS, TfliteSpec, TfliteTarget

RELU_0_TO_1_SINCE = (2, 10)  # RELU_0_TO_1 v1 is runtime "2.10.0" (op-version table)
INT32_MAX = 2**31 - 1  # Tensor.shape is [int] (int32) in schema.fbs


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
    return collapse_crossed(src, values, notes, Order.MIN_WINS, "The source gives max when min > max; MINIMUM "
                            "then MAXIMUM gives min: emitted min = max = max")


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
    return Emitted(normalize(spec), meaning, notes.items,
                   LazyArtifacts(lambda: {"tflite_model": model_base64(spec, meaning)}))
