"""The output of a clip under its meaning: evaluate() is the reference every kernel, engine and witness is held to.

NumPy's own ufuncs on the meaning's dtype, in the meaning's order: ScaleBias or promotion, the NaN-bound and
NaN-input rules, then min/max (clipbridge.kernels computes the same with code of its own).
"""

from __future__ import annotations

import math

import numpy as np

from clipbridge.core.dtypes import DType
from clipbridge.core.errors import RejectedSpec
from clipbridge.core.exact import trunc_saturate
from clipbridge.core.meaning import FILLED_NAN_INPUTS, Meaning, NanBound, NanInput, Order, ScaleBias, State, effective_order


def apply_scale_bias(sb: ScaleBias, x: np.ndarray, dtype: DType) -> np.ndarray:
    """x*scale+bias in the stated precision, then converted back to the tensor type."""
    p = sb.precision.np_dtype
    xs = x.astype(p)
    with np.errstate(over="ignore", invalid="ignore"):
        if sb.fused:
            # One rounding: compute exactly enough in float64 for float32/float16 inputs, round once.
            y = (xs.astype(np.float64) * sb.scale + sb.bias).astype(p)
        else:
            y = (xs * p.type(sb.scale)).astype(p) + p.type(sb.bias)
        if dtype.is_float:
            return y.astype(dtype.np_dtype)
        # Integer tensors: truncate toward zero and saturate (the documented reading of a float->int cast).
        return trunc_saturate(np, y.astype(np.float64), dtype.np_dtype, dtype.lowest(), dtype.highest())


def evaluate(m: Meaning, x: np.ndarray) -> np.ndarray:
    """The output of the clip on `x` (an array of m.dtype) under the spec meaning."""
    if m.state is State.REJECTED:
        raise RejectedSpec(m.reason or "rejected by the framework")
    if m.dynamic:
        raise RejectedSpec("bounds are computed at run time; the clip cannot be evaluated without them")
    x = np.asarray(x, dtype=m.dtype.np_dtype)
    if m.has_tensor_bounds:
        return _evaluate_tensor(m, x)
    if m.lower is None or m.upper is None:
        raise RejectedSpec("bounds are computed at run time; the clip cannot be evaluated without them")
    dt = m.out_dtype
    t = apply_scale_bias(m.scale_bias, x, m.dtype) if m.scale_bias else _promote(m, x)
    lo, hi = m.lower.value, m.upper.value
    if dt.is_float and (m.lower.is_nan or m.upper.is_nan):
        if m.nan_bound is NanBound.REJECTED:
            raise RejectedSpec(m.reason or "a NaN bound is rejected")
        if m.nan_bound is NanBound.PROPAGATE:
            return np.full_like(t, np.nan)
        if m.nan_bound is NanBound.ZERO:
            lo = 0.0 if m.lower.is_nan else lo
            hi = 0.0 if m.upper.is_nan else hi
        else:
            # IGNORE (and the execution reading of UNDOCUMENTED): a NaN bound leaves that side open.
            lo = -math.inf if m.lower.is_nan else lo
            hi = math.inf if m.upper.is_nan else hi
    lo_a = np.asarray(lo, dtype=dt.np_dtype)
    hi_a = np.asarray(hi, dtype=dt.np_dtype)
    return _clip(m, t, lo_a, hi_a)


def _clip(m: Meaning, t: np.ndarray, lo_a: np.ndarray, hi_a: np.ndarray) -> np.ndarray:
    """The clip of `t` with (possibly per-element) bounds, under m's NaN-input rule and min > max order."""
    crossed = bool((lo_a > hi_a).any())
    order = effective_order(m, crossed)
    if m.nan_input in FILLED_NAN_INPUTS and m.out_dtype.is_float:
        fill = {NanInput.TO_LOWER: lo_a, NanInput.TO_UPPER: hi_a}.get(m.nan_input, np.zeros((), dtype=t.dtype))
        t = np.where(np.isnan(t.astype(np.float32)), fill, t).astype(t.dtype)
    # np.maximum/np.minimum propagate NaN inputs, which is the spec reading of every other dialect here.
    if order is Order.MAX_WINS:
        return np.minimum(hi_a, np.maximum(t, lo_a))
    return np.maximum(lo_a, np.minimum(t, hi_a))


def _promote(m: Meaning, x: np.ndarray) -> np.ndarray:
    """The input in the result dtype: one correctly rounded conversion (NumPy's int -> float is nearest-even)."""
    rd = m.result_dtype
    if rd is None or rd == m.dtype:
        return x
    return x.astype(rd.np_dtype)


def _evaluate_tensor(m: Meaning, x: np.ndarray) -> np.ndarray:
    """evaluate() with per-element bounds (each NaN bound element propagates, as PyTorch's and StableHLO's do)."""
    dt = m.out_dtype
    t = apply_scale_bias(m.scale_bias, x, m.dtype) if m.scale_bias else _promote(m, x)
    lo = m.lower_tensor.array(dt) if m.lower_tensor else np.asarray(
        -math.inf if m.lower is None and dt.is_float else (dt.lowest() if m.lower is None else m.lower.value),
        dtype=dt.np_dtype)
    hi = m.upper_tensor.array(dt) if m.upper_tensor else np.asarray(
        math.inf if m.upper is None and dt.is_float else (dt.highest() if m.upper is None else m.upper.value),
        dtype=dt.np_dtype)
    return _clip(m, t, lo, hi)
