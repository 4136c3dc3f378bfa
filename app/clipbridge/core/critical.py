"""The critical points of clip functions, on integer keys of the bit patterns, computed once per dtype and bound.

A translation compares its source with every target (and every reading), each time at the same points: the
dtype's fixed points (extremes, zeros, infinities, NaN, the smallest normals) and each bound's neighbours. Both
parts are cached here, per dtype and per (dtype, bound value), so a request computes each once.

A float's neighbours come from a signed integer key of its pattern: +x -> bits, -x -> -(bits without the sign).
The key orders every non-NaN value as the floats order (IEEE 754 §5.10 totalOrder, with both zeros at 0), so one
ulp up or down is key + 1 or key - 1, clamped at the infinities; both zeros step to the smallest subnormal of
the direction, and reaching 0 from below gives -0 (from above +0), as stepping the pattern itself does.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from clipbridge.core.dtypes import DType
from clipbridge.core.exact import Number

_CACHE = 4096  # distinct (dtype, value) entries per cache: a few hundred KiB at most


def offsets(reach: int) -> np.ndarray:
    """[0, +1, -1, +2, -2, ...]: the order _around has always listed a value and its neighbours in."""
    return np.array([0] + [s * k for k in range(1, reach + 1) for s in (1, -1)], dtype=np.int64)


@lru_cache(maxsize=8)
def _steps(reach: int) -> tuple[int, ...]:
    """offsets(reach) without the 0, as Python ints."""
    return tuple(offsets(reach).tolist()[1:])


def float_keys(dt: DType, bits: np.ndarray) -> np.ndarray:
    """The signed key of each (non-NaN) pattern: the magnitude bits, negated when the sign is set."""
    b = bits.astype(np.uint64)
    sign = np.uint64(1 << (dt.bits - 1))
    mag = (b & (sign - np.uint64(1))).astype(np.int64)
    return np.where((b & sign) != 0, -mag, mag)


def float_patterns(dt: DType, keys: np.ndarray, from_below: np.ndarray) -> np.ndarray:
    """float_keys' inverse; key 0 is -0 where `from_below` (reached by stepping up from a negative), else +0."""
    sign = np.uint64(1 << (dt.bits - 1))
    mag = np.abs(keys).astype(np.uint64)
    neg = (keys < 0) | ((keys == 0) & from_below)
    return np.where(neg, mag | sign, mag).astype(dt.uint_view)


@lru_cache(maxsize=16)
def _inf_key(dt: DType) -> int:
    """The key of +inf, the largest a non-NaN pattern has."""
    return int(float_keys(dt, np.asarray([np.asarray(np.inf, dtype=dt.np_dtype).view(dt.uint_view)]))[0])


def float_around(dt: DType, bases: np.ndarray, reach: int) -> np.ndarray:
    """Each base pattern and its neighbours to `reach` ulps, in offsets() order, as an array of dt."""
    inf_key = _inf_key(dt)
    k0 = float_keys(dt, bases)[:, None]
    off = offsets(reach)[None, :]
    k = np.maximum(np.minimum(k0 + off, inf_key), -inf_key)  # np.clip with int bounds costs ~100 us
    pats = float_patterns(dt, k, (k0 < 0) & (off != 0))
    pats[:, 0] = bases  # the value itself keeps its pattern (-0 stays -0)
    return pats.reshape(-1).view(dt.np_dtype)


def _int_around(dt: DType, v: Number, reach: int) -> list[int]:
    """An integer dtype's neighbours: each step saturates, the first from the (possibly fractional) value."""
    lo, hi = int(dt.lowest()), int(dt.highest())
    base = int(v)
    out = [max(lo, min(hi, base))]
    up = down = base
    for _ in range(reach):
        up, down = max(lo, min(hi, up + 1)), max(lo, min(hi, down - 1))
        out += [up, down]
    return out


def around(dt: DType, values: list[Number], reach: int) -> np.ndarray:
    """Each value (rounded once to dt, or truncated and saturated) and its neighbours, as an array of dt."""
    if not dt.is_float:
        return np.asarray([p for v in values for p in _int_around(dt, v, reach)], dtype=dt.np_dtype)
    bases = _centres(dt, values).view(dt.uint_view)
    if len(values) == 1:  # a bound's points, once per fresh bound: numpy's per-call cost outweighs the work
        return float_around_one(dt, int(bases[0]), reach)
    return float_around(dt, bases, reach)


def _centres(dt: DType, values: list[Number]) -> np.ndarray:
    """Each value rounded once to the float dtype: the point around() lists first."""
    return dt.array([v if type(v) is float else dt.round(v) for v in values])


def centre(dt: DType, value: Number) -> float:
    """The first of bound_points(dt, value) as a Python float, without its neighbours (a float dtype): the value
    rounded once to dt, which dt.round computes on Python numbers, without an array (tests/test_critical.py)."""
    return dt.round(value)


def float_around_one(dt: DType, pattern: int, reach: int) -> np.ndarray:
    """float_around for one base pattern, on Python ints (the same keys, clamps and zero signs)."""
    sign = 1 << (dt.bits - 1)
    mag = pattern & (sign - 1)
    k0 = -mag if pattern & sign else mag
    inf_key = _inf_key(dt)
    pats = [pattern]
    for off in _steps(reach):
        k = max(min(k0 + off, inf_key), -inf_key)
        pats.append(-k | sign if k < 0 or (k == 0 and k0 < 0) else k)
    return np.array(pats, dtype=dt.uint_view).view(dt.np_dtype)


@lru_cache(maxsize=16)
def fixed_points(dt: DType) -> np.ndarray:
    """The points every comparison of `dt` visits: extremes, zero and ones, and for floats the infinities, NaN,
    the smallest subnormals and normals, each with its neighbours (read-only)."""
    parts = [around(dt, [dt.lowest(), dt.highest(), 0.0 if dt.is_float else 0], 2)]
    if dt.is_float:
        tiny = float(np.finfo(dt.np_dtype).smallest_normal) if dt.bits == 64 else _ml_tiny(dt)
        sub = around(dt, [0.0], 1)  # 0, next up, next down
        parts.append(dt.array([1.0, -1.0, -0.0, math.inf, -math.inf, math.nan, float(sub[1]), float(sub[2])]))
        parts.append(around(dt, [tiny, -tiny], 1))
    else:
        parts.append(np.asarray([1, -1], dtype=np.int64).clip(int(dt.lowest()), int(dt.highest()))
                     .astype(dt.np_dtype))
    out = np.concatenate(parts)
    out.flags.writeable = False
    return out


@lru_cache(maxsize=16)
def nan_points(dt: DType) -> np.ndarray:
    """The NaN among fixed_points(dt) (none for an integer dtype), as critical_points lists it (read-only)."""
    fixed = fixed_points(dt)
    out = fixed[np.isnan(fixed.astype(np.float64))] if dt.is_float else fixed[:0]
    out.flags.writeable = False
    return out


def _ml_tiny(dt: DType) -> float:
    import ml_dtypes  # the finfo of bfloat16 lives in ml_dtypes

    return float(ml_dtypes.finfo(dt.np_dtype).smallest_normal)


@lru_cache(maxsize=_CACHE, typed=True)
def _bound_points(dt: DType, value: Number, negative: bool, reach: int) -> np.ndarray:
    out = around(dt, [value], reach)
    out.flags.writeable = False
    return out


def bound_points(dt: DType, value: Number, reach: int = 2) -> np.ndarray:
    """A bound (or a ScaleBias pre-image) and its neighbours, cached per dtype and value (-0 apart from +0)."""
    negative = isinstance(value, float) and math.copysign(1.0, value) < 0
    return _bound_points(dt, value, negative, reach)


def unique_in_order(dt: DType, parts: list[np.ndarray]) -> np.ndarray:
    """The points once each, in the order they first appear (equal patterns are one point; the one NaN is
    fixed_points')."""
    arr = np.concatenate(parts)
    _, first = np.unique(arr.view(dt.uint_view) if dt.is_float else arr, return_index=True)
    return arr[np.sort(first)]
