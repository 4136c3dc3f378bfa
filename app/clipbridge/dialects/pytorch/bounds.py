"""PyTorch's bounds: a Python scalar as torch reads it (Scalar::to<T>, checked_convert), hardtanh's limits, an
absent side, and a tensor bound (torch.tensor of the input's dtype, broadcast against the input); each rule as
torch 2.13.0 CPU computes it. Where torch raises at call time, `_Refused` (a REJECTED meaning)."""

from __future__ import annotations

import math

import numpy as np

from clipbridge.core import exact
from clipbridge.dialects.kit.common import cached_cast
from clipbridge.dialects.pytorch.spec import SRC_C10, SRC_HARDTANH, shape_of
from clipbridge.core.dtypes import DType
from clipbridge.core.errors import SpecError
from clipbridge.core.meaning import Bound, TensorBound
from clipbridge.core.numbers import Number, format_number

C_NAMES = {"int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t",
           "float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16"}


class _Refused(Exception):
    """torch raises at call time: the spec is well formed, torch refuses it (a REJECTED meaning)."""


def scalar_pytorch(value: Number) -> Number:
    """A Python scalar: an int must fit int64/uint64 (pybind's Scalar); a non-integer is the nearest double."""
    if isinstance(value, int):
        if value >= 2**64:
            raise _Refused("int too big to convert")  # OverflowError from the argument parser
        if value < -2**63:
            raise _Refused("can't convert negative int to unsigned")
        return value
    return exact.to_double(value)


def _overflow(dt: DType) -> _Refused:
    return _Refused(f"value cannot be converted to type {C_NAMES[dt.name]} without overflow")


@cached_cast
def convert_bound_pytorch(given: Number, dt: DType, side: str) -> Bound:
    """Scalar::to<T> (checked_convert): an out-of-range value raises, except that negatives down to -max wrap
    into an unsigned type (two's complement); a finite float beyond T's range raises; half and bfloat16 go
    through float (two roundings)."""
    v = scalar_pytorch(given)
    steps: list[str] = []
    if not dt.is_float:
        assert isinstance(v, int)  # a float scalar on an integer tensor promoted it
        hi = int(dt.highest())
        signed = dt.lowest() < 0
        if v > hi or (signed and v < dt.lowest()) or (not signed and v < -hi):
            raise _overflow(dt)
        if v < 0 and not signed:
            wrapped = v + 2**dt.bits
            steps.append(f"{side} {v} as {dt.name}: wraps to {wrapped} (checked_convert lets negatives down to "
                         f"-{hi} wrap into unsigned types; {SRC_C10})")
            return Bound(wrapped, given, tuple(steps), rounded=True)
        return Bound(v, given)
    if not exact.is_nan(v) and not exact.is_inf(v) and abs(v) > dt.highest():
        raise _overflow(dt)
    out = double_rounding_pytorch(v, dt)
    if not exact.is_nan(out) and out != given:
        steps.append(f"{side} {format_number(given)} as {dt.name}: {format_number(out)}"
                     + (" (via float32: two roundings)" if dt.bits == 16 else ""))
    return Bound(out, given, tuple(steps), precision_loss=bool(steps))


def double_rounding_pytorch(value: Number, dt: DType) -> float:
    """c10::Half / c10::BFloat16 are built from a float: a double (or int64) bound rounds to float32 first."""
    if exact.is_nan(value):
        return math.nan
    if dt.bits == 16:
        return dt.round(exact.to_float32(value))
    return dt.round(value)


@cached_cast
def hardtanh_bound_pytorch(given: Number, dt: DType, side: str) -> Bound:
    """hardtanh_out on an integral tensor: min.toLong()/max.toLong() (truncation; NaN, inf, beyond int64 raise),
    uint8 with a negative limit raises, then clamp's Scalar::to<T>; floating tensors take the double as is."""
    if dt.is_float:
        return convert_bound_pytorch(given, dt, side)
    v = scalar_pytorch(given)
    if exact.is_nan(v) or exact.is_inf(v) or not -2**63 <= v < 2**63:
        raise _Refused("value cannot be converted to type int64_t without overflow")
    t = exact.trunc_exact(v)
    if dt.name == "uint8" and t < 0:
        raise _Refused("cannot do hardtanh on an unsigned type with negative limits")
    b = convert_bound_pytorch(t, dt, side)
    if t != v:
        return Bound(b.value, given, (f"{side} {format_number(given)}: toLong() truncates to {t} ({SRC_HARDTANH})",)
                     + b.steps, rounded=True)
    return Bound(b.value, given, b.steps, rounded=b.rounded)


def default_bound_pytorch(dt: DType, side: str) -> Bound:
    """An absent side (None) is no bound: +-inf on floats, the type's extreme (the same function) on integers."""
    if dt.is_float:
        value: Number = -math.inf if side == "min" else math.inf
    else:
        value = dt.lowest() if side == "min" else dt.highest()
    return Bound(value, None, (f"{side}=None: no {'lower' if side == 'min' else 'upper'} bound",), default=True)


def tensor_bound_pytorch(nested: list, dt: DType, side: str, shape: list | None) -> TensorBound:
    """torch.tensor(values, dtype=<input dtype>) broadcast against the input (it may not grow the output);
    floats round as Scalar bounds do; integer tensors take in-range integers only (torch.tensor would truncate)."""
    bshape, flat = shape_of(nested, side)
    if shape is None or not all(isinstance(d, int) for d in shape):
        raise SpecError(f"A tensor {side} needs a concrete `shape` to broadcast against. Got: shape={shape}", "shape")
    try:
        out_shape = np.broadcast_shapes(tuple(shape), bshape)
    except ValueError:
        raise SpecError(f"{side} of shape {list(bshape)} does not broadcast to shape {shape}. Got: {list(bshape)}",
                        side) from None
    if list(out_shape) != list(shape):
        raise SpecError(f"{side} of shape {list(bshape)} would grow the output to {list(out_shape)}; clipbridge "
                        f"models clips that keep the input's shape. Got: {list(bshape)}", side)
    values: list[Number] = []
    for v in flat:
        if dt.is_float:
            values.append(double_rounding_pytorch(scalar_pytorch(v) if not exact.is_nan(v) else v, dt))
        elif not exact.is_integral(v) or not dt.contains(v):
            raise SpecError(f"Every element of a {dt.name} tensor {side} must be an integer in [{dt.lowest()}, "
                            f"{dt.highest()}] (torch.tensor(..., dtype=torch.{dt.name}) would truncate or wrap). "
                            f"Got: {format_number(v)}", side)
        else:
            values.append(int(v))
    changed = any(not (exact.is_nan(a) and exact.is_nan(b)) and a != b for a, b in zip(values, flat))
    return TensorBound(bshape, tuple(values), tuple(flat) if changed else None,
                       (f"{side}: torch.tensor of shape {list(bshape)}, dtype {dt.name}",))
