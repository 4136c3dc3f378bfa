"""The clip on any array-API namespace (NumPy, CuPy, array_api_strict): evaluate()'s steps in array-API calls.

On CuPy, a scalar-bound clip that clipbridge.kernels.cupy's one-pass kernel runs goes there instead (one read and one
write of the array).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from clipbridge.core.exact import trunc_saturate
from clipbridge.core.meaning import Meaning
from clipbridge.kernels import cupy as kernels_cupy
from clipbridge.kernels.plan import (RULE_PROPAGATE, RULE_TO_LOWER, RULE_TO_UPPER, nan_rule, not_run, plan, reference_only,
                              tensor_bounds)


def clip_xp(xp: Any, m: Meaning, x: Any) -> Any:
    """The clip on any array-API namespace `xp` (numpy, cupy, array_api_strict); x has m's dtype.

    evaluate()'s steps in array-API calls: ScaleBias or promotion, the NaN-input rule, then min/max in the
    meaning's order with scalar or per-element bounds.
    """
    if reference_only(m):
        raise not_run()
    out_dt = getattr(xp, m.out_dtype.np_dtype.name)
    if m.has_tensor_bounds:
        lo_np, hi_np, max_wins = tensor_bounds(m)
        lo = xp.reshape(xp.asarray(lo_np.ravel().tolist(), dtype=out_dt), lo_np.shape)
        hi = xp.reshape(xp.asarray(hi_np.ravel().tolist(), dtype=out_dt), hi_np.shape)
        return _min_max(xp, m, xp.astype(x, out_dt), lo, hi, max_wins)
    p = plan(m)
    if getattr(xp, "__name__", "") == "cupy" and m.out_dtype == m.dtype \
            and kernels_cupy.runs(np.dtype(x.dtype), p.scale is not None, p.all_nan):
        # One elementwise kernel per order, NaN rule and ScaleBias: one read and one write of the array.
        return kernels_cupy.clip_one_pass(x, p.lo, p.hi, p.max_wins, p.nan_out, p.scale, p.bias)
    t = x
    if p.scale is not None:
        f32 = xp.float32
        y = xp.astype(x, f32) * xp.asarray(p.scale, dtype=f32) + xp.asarray(p.bias, dtype=f32)
        if m.dtype.is_float:
            t = xp.astype(y, x.dtype)
        else:
            t = trunc_saturate(xp, xp.astype(y, xp.float64), x.dtype, m.dtype.lowest(), m.dtype.highest())
    elif m.out_dtype != m.dtype:
        t = xp.astype(x, out_dt)
    if p.all_nan:
        return xp.full_like(t, math.nan)
    return _min_max(xp, m, t, xp.asarray(p.lo, dtype=t.dtype), xp.asarray(p.hi, dtype=t.dtype), p.max_wins)


def _min_max(xp: Any, m: Meaning, t: Any, lo: Any, hi: Any, max_wins: bool) -> Any:
    """The NaN-input rule, then evaluate()'s min/max order (crossed bounds included), on any array API."""
    rule = nan_rule(m)
    if rule != RULE_PROPAGATE:
        fill = {RULE_TO_LOWER: lo, RULE_TO_UPPER: hi}.get(rule, xp.asarray(0.0, dtype=t.dtype))
        t = xp.where(xp.isnan(t), fill, t)
    if max_wins:
        return xp.minimum(hi, xp.maximum(t, lo))
    return xp.maximum(lo, xp.minimum(t, hi))
