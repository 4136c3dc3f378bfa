"""TFLite quantization: per-tensor scale and zero point, and the fixed ranges made integer bounds by
QuantizedReluX's rule (activations.cc), with roundf's half-away-from-zero rounding."""

from __future__ import annotations

import math
from fractions import Fraction

from clipbridge.core import exact
from clipbridge.core.dtypes import DType
from clipbridge.core.errors import SpecError
from clipbridge.core.meaning import Bound
from clipbridge.core.numbers import Number, format_number
from clipbridge.dialects.tflite.spec import MINMAX, QUANTIZED, TfliteQuantization, TfliteSpec


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


def quantization_tflite(spec: TfliteSpec, op: str, dt: DType) -> tuple[float, int] | None:
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
