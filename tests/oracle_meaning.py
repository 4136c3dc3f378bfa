"""The independent oracle on a `Meaning`'s declared fields (see tests/oracle.py), for the kernel tests.

The fields (bounds, order, NaN rules, ScaleBias, promotion, per-element bounds) are read, never evaluated by the
app; the arithmetic is tests/oracle.py's (exact Fractions, float64 widening, the spec's comparisons).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from tests.oracle import FORMAT, NP, Clip, Refused, clip_values, int_range, is_float, round_float, same, widen


def expected(m: Any, x: np.ndarray) -> np.ndarray:
    """What a Meaning's declared fields compute on x: ScaleBias g(x) = x*scale + bias in its precision (fused: one
    rounding), an integer result truncated toward zero and saturated (NaN -> 0, the project's documented reading
    of a float -> int cast); promotion is one correctly rounded conversion; then the clip as `Clip` states it.
    Raises `Refused` where the meaning is rejected (state, a rejected NaN bound, min > max with order rejected)."""
    if m.state.value == "rejected" or m.dynamic:
        raise Refused(m.reason or "rejected")
    t = m.dtype.name
    out = m.result_dtype.name if m.result_dtype is not None else t
    x = np.asarray(x, dtype=NP[t])
    if m.scale_bias is not None:
        v = scale_bias(m.scale_bias, x, t)
    else:
        v = promote(x, t, out)
    lo = _side(m.lower_tensor, m.lower, out, lowest=True)
    hi = _side(m.upper_tensor, m.upper, out, lowest=False)
    order = m.order.value
    lo_a, hi_a = np.asarray(lo, dtype=v.dtype), np.asarray(hi, dtype=v.dtype)
    has_nan = is_float(out) and bool(np.isnan(lo_a).any() or np.isnan(hi_a).any())
    if has_nan and m.nan_bound.value == "rejected":
        raise Refused("a NaN bound is rejected")
    if order == "rejected":  # crossed as the bounds stand once a NaN bound is read as its rule says
        lo_e, hi_e = lo_a, hi_a
        if has_nan and m.nan_bound.value in ("ignore", "undocumented", "zero"):
            zero = m.nan_bound.value == "zero"
            lo_e = np.where(np.isnan(lo_a), 0.0 if zero else -np.inf, lo_a)
            hi_e = np.where(np.isnan(hi_a), 0.0 if zero else np.inf, hi_a)
        if bool(np.any(lo_e > hi_e)):
            raise Refused("min > max is rejected")
        order = "max-wins"  # min <= max: both formulas agree
    nan_bound = {"propagate": "propagate", "zero": "zero"}.get(m.nan_bound.value, "ignore")
    nan_input = m.nan_input.value if m.nan_input.value in ("to-lower", "to-zero", "to-upper") else "propagate"
    if m.lower_tensor is not None or m.upper_tensor is not None:
        nan_bound = "propagate"  # per-element bounds: each NaN element propagates (PyTorch, StableHLO)
    c = Clip(out, lo_a, hi_a, max_wins=order == "max-wins", nan_bound=nan_bound, nan_input=nan_input)
    return clip_values(c, v)


def _side(tensor: Any, bound: Any, out: str, lowest: bool) -> Any:
    """A bound as comparable values: per-element (broadcast by NumPy's rules) or the scalar; an absent side of a
    per-element clip is the type's extreme (infinity for floats)."""
    if tensor is not None:
        if not is_float(out):
            return np.asarray([int(v) for v in tensor.values], dtype=object).reshape(tensor.shape)
        vals = np.asarray(tensor.values, dtype=np.float64)
        with np.errstate(all="ignore"):
            held = vals.astype(NP[out]).astype(np.float64)
        if not (oracle_same := same(held, vals)).all():  # values not of `out` yet: round each once
            vals = np.asarray([round_float(float(v), out) if not ok else float(v)
                               for v, ok in zip(vals, oracle_same)])
        return vals.reshape(tensor.shape)
    if bound is None:
        if is_float(out):
            return -math.inf if lowest else math.inf
        return int_range(out)[0 if lowest else 1]
    return bound.value


def promote(x: np.ndarray, t: str, out: str) -> np.ndarray:
    """x as comparable values of `out`: exact widening (float -> wider float, int -> wider int), or an integer
    rounded once to the float format (nearest, ties to even), done in integer arithmetic."""
    if out == t or not is_float(out) or (is_float(t) and FORMAT[t][0] <= FORMAT[out][0]):
        return widen(x, t) if not is_float(out) else widen(x, t).astype(np.float64)
    if is_float(t):
        raise NotImplementedError((t, out))
    return int_to_float(widen(x, t), out)


def int_to_float(w: np.ndarray, out: str) -> np.ndarray:
    """Integers (int64/uint64) rounded to float format `out`: keep m+1 leading bits, round the rest half to even."""
    m, _, emax = FORMAT[out]
    neg = w < 0
    u = w.astype(np.uint64)
    n = np.where(neg, ~u + np.uint64(1), u)  # |w|, exact for the most negative int64 too
    _, e = np.frexp(n.astype(np.float64))  # the bit length, or one more where float64 rounded n up
    e = e.astype(np.int64)
    high = (e > 0) & (np.right_shift(n, np.maximum(e - 1, 0).astype(np.uint64)) == 0)
    e = np.where(high, e - 1, e)
    sh = np.maximum(e - (m + 1), 0).astype(np.uint64)
    q = np.right_shift(n, sh)
    r = n & (np.left_shift(np.uint64(1), sh) - np.uint64(1))
    half = np.where(sh > 0, np.left_shift(np.uint64(1), np.maximum(sh, 1) - np.uint64(1)), np.uint64(0))
    up = (sh > 0) & ((r > half) | ((r == half) & ((q & np.uint64(1)) == 1)))
    v = (q + up.astype(np.uint64)).astype(np.float64) * np.exp2(sh.astype(np.float64))
    v = np.where(v >= math.ldexp(1.0, min(emax + 1, 1023)) * (2.0 if emax >= 1023 else 1.0), np.inf, v)
    return np.where(neg, -v, v)


_SB_CACHE: dict = {}


def scale_bias(sb: Any, x: np.ndarray, t: str) -> np.ndarray:
    """`_scale_bias`, memoized on the ScaleBias (zero signs spelled out) and the input's bytes."""
    key = (t, repr(sb.scale), repr(sb.bias), sb.precision.name, sb.fused, x.shape, x.tobytes())
    if key not in _SB_CACHE:
        if len(_SB_CACHE) > 64:
            _SB_CACHE.clear()
        _SB_CACHE[key] = _scale_bias(sb, x, t)
    return _SB_CACHE[key].copy()


def _scale_bias(sb: Any, x: np.ndarray, t: str) -> np.ndarray:
    """DirectML: 'g(x) = x * scale + bias applied to each input element', computed in sb.precision: two roundings
    (product, then sum), or one when fused. Unfused, float64 holds each exact product of two <= 24-bit
    significands, and one float64 rounding of a sum before rounding to a <= 24-bit format is innocuous
    (53 >= 2*24 + 2); fused, the exact Fraction is rounded once."""
    p = sb.precision.name
    s, b = round_float(sb.scale, p), round_float(sb.bias, p)
    xp = np.asarray(x).astype(NP[p]).astype(np.float64)
    with np.errstate(all="ignore"):
        if sb.fused:
            y = np.array([_fused(float(e), s, b, p) for e in xp.ravel()]).reshape(xp.shape)
        else:
            prod = (xp * s).astype(NP[p]).astype(np.float64)
            y = (prod + b).astype(NP[p]).astype(np.float64)
        if is_float(t):
            return y.astype(NP[p]).astype(NP[t]).astype(np.float64)
    lo, hi = int_range(t)
    ints = [0 if math.isnan(e) else lo if e == -math.inf else hi if e == math.inf else
            min(max(math.trunc(e), lo), hi) for e in y.ravel()]
    return np.asarray(ints, dtype=np.uint64 if t.startswith("u") else np.int64).reshape(y.shape)


def _fused(x: float, s: float, b: float, p: str) -> float:
    """round(x*s + b): one rounding of the exact value."""
    if not (math.isfinite(x) and math.isfinite(s) and math.isfinite(b)):
        return x * s + b  # IEEE special values: the same in one or two roundings
    q = Fraction(x) * Fraction(s) + Fraction(b)
    if q == 0:
        return (x * s) + b  # an exact zero: its sign follows IEEE's sum rule
    return round_float(q, p)
