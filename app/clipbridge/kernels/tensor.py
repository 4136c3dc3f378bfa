"""Per-element bounds, dtype promotion and the NaN-input rules on the general path: evaluate()'s clip, faster.

clipbridge.core.evaluate._clip computes, for the result dtype D:
    t = x converted to D (NumPy astype: one correctly rounded step)
    t = lower bound (TO_LOWER) or +0 (TO_ZERO) where t is NaN
    max-wins: minimum(hi, maximum(t, lo));  min-wins: maximum(lo, minimum(t, hi))
with lo/hi per element (broadcast like NumPy) or scalars. Here that runs either as one compiled numba pass over
(x, lo, hi, out) or as the same NumPy ufuncs on chunks that stay in cache, spread over the cores.

NumPy's float32/float64 maximum(a, b) is `a if a > b or isnan(a) else b` (a tie such as -0 == +0 gives b), and
minimum(a, b) is `a if a < b or isnan(a) else b`; the compiled kernel spells those out, so it agrees bit for bit,
zero signs included.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from clipbridge.kernels.plan import FULL_WIDTH, RULE_PROPAGATE, RULE_TO_LOWER, RULE_TO_UPPER


@lru_cache(maxsize=256)
def variant_kernel(cast_name: str, lo_scalar: bool, hi_scalar: bool, max_wins: bool, rule: int) -> Any:
    """kernel(x, lo, hi, out) on flat arrays, compiled for one layout and rule; None without numba.

    A scalar side is a one-element array read at index 0 (its stride a compile-time 0), so the same kernel serves
    per-element bounds and promotion with scalar bounds. `cast_name` names the result dtype: numba's conversion to
    it is LLVM's sitofp/uitofp/fpext, each correctly rounded as NumPy's astype is.
    """
    try:
        from numba import njit, prange  # type: ignore[import-not-found]
    except ImportError:
        return None
    cast = getattr(np, cast_name)
    ls = 0 if lo_scalar else 1
    hs = 0 if hi_scalar else 1

    # A plain prange over the elements: LLVM vectorizes it (blocks of a nested range were left scalar, measured
    # from the assembly). ls/hs, rule and max_wins are compile-time constants, so each branch folds away.
    @njit(parallel=True, fastmath=False, nogil=True, cache=False)
    def kernel(x, lo, hi, out):  # pragma: no cover - compiled
        lv0 = lo[0]
        hv0 = hi[0]
        for i in prange(x.size):
            t = cast(x[i])
            lv = lv0 if ls == 0 else lo[i]
            hv = hv0 if hs == 0 else hi[i]
            if rule == 1:
                t = lv if t != t else t
            elif rule == 2:
                t = cast(0) if t != t else t
            elif rule == 3:
                t = hv if t != t else t
            if max_wins:
                u = t if (t > lv) | (t != t) else lv  # np.maximum(t, lo)
                r = hv if (hv < u) | (hv != hv) else u  # np.minimum(hi, u)
            else:
                u = t if (t < hv) | (t != t) else hv  # np.minimum(t, hi)
                r = lv if (lv > u) | (lv != lv) else u  # np.maximum(lo, u)
            out[i] = r

    return kernel


def ufunc_chunk(xs: np.ndarray, lo: np.ndarray, hi: np.ndarray, out: np.ndarray, max_wins: bool, rule: int) -> None:
    """evaluate()'s own ufuncs on one chunk (lo/hi already sliced or broadcast to it), written into `out`."""
    dt = out.dtype
    t = xs if xs.dtype == dt else xs.astype(dt)
    if rule != RULE_PROPAGATE:
        fill = {RULE_TO_LOWER: lo, RULE_TO_UPPER: hi}.get(rule, np.zeros((), dtype=dt))
        nan = np.isnan(t.astype(np.float32)) if t.dtype.itemsize == 2 else np.isnan(t)
        t = np.where(nan, fill, t).astype(dt)
    if max_wins:
        np.maximum(t, lo, out=out)
        np.minimum(hi, out, out=out)
    else:
        np.minimum(t, hi, out=out)
        np.maximum(lo, out, out=out)


def one_pass_layout(x: np.ndarray, lo: np.ndarray, hi: np.ndarray, out: np.ndarray) -> tuple[bool, bool] | None:
    """(lo is scalar, hi is scalar) when the compiled kernel can walk x, lo, hi and out flat; else None.

    Each bound must be one element or a C-contiguous array of x's shape; x and out C-contiguous, same shape.
    """
    if out.dtype not in FULL_WIDTH or x.dtype not in FULL_WIDTH:  # numba has no float16/bfloat16 arithmetic
        return None
    if not (x.flags.c_contiguous and out.flags.c_contiguous and out.shape == x.shape):
        return None
    sides = []
    for b in (lo, hi):
        if b.size == 1:
            sides.append(True)
        elif b.shape == x.shape and b.flags.c_contiguous:
            sides.append(False)
        else:
            return None
    return sides[0], sides[1]
