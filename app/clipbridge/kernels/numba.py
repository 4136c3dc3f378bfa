"""The full-width scalar-bound kernels compiled by numba (optional: `[fast]`), and the one launch lock.

float32 ... uint64 (clipbridge.kernels.plan.FULL_WIDTH); float16/bfloat16 have clipbridge.kernels.half_numba and
clipbridge.kernels.scale_bias16_jit, per-element bounds and promotion clipbridge.kernels.tensor. numba is imported where a kernel
is compiled, never at import (this module's name shadows nothing: imports are absolute).
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Any

# numba's fallback threading layer (workqueue, used where neither OpenMP nor TBB is installed) aborts the process
# on concurrent launches; each launch already uses every core, so launches are serialized.
NUMBA_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def _numba_available() -> bool:
    try:
        import numba  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:
        return False
    return True


@lru_cache(maxsize=8)
def _numba_kernel(fused: bool, max_wins: bool, nan_fix: bool) -> Any:
    """The plain clip, or the float32 scale-bias + clip, compiled by numba for one order and NaN rule.

    One parallel pass over memory, spelling out NumPy's float maximum(a, b) = `a if a > b or isnan(a) else b` and
    minimum(a, b) = `a if a < b or isnan(a) else b` in evaluate()'s order, so the result is evaluate()'s bit for
    bit (zero signs too; crossed bounds need no special case). A NaN input propagates, or becomes `nanv` when
    `nan_fix` (the NaN-input rules, whose one output clipbridge.kernels.plan.plan computes). The order and the rule are
    compile-time constants: passed at run time, the selects stayed in the loop (measured 0.91x of the old
    two-compare kernel; specialized: 1.01x). No fastmath, so LLVM may not contract x*s+b into an FMA (two
    roundings, as np.multiply then np.add).
    """
    from numba import njit, prange  # type: ignore[import-not-found]

    @njit(parallel=True, fastmath=False, nogil=True, cache=False)
    def kernel(x, out, s, b, lo, hi, nanv):  # pragma: no cover - compiled
        for i in prange(x.size):
            v = x[i] * s + b if fused else x[i]
            # lo and hi are never NaN here (plan() resolved NaN bounds), so only v can be.
            if max_wins:
                u = lo if v <= lo else v  # np.maximum(v, lo): a tie gives lo, a NaN v stays
                r = hi if hi < u else u  # np.minimum(hi, u): a tie gives u
            else:
                u = hi if v >= hi else v  # np.minimum(v, hi)
                r = lo if lo > u else u  # np.maximum(lo, u)
            if nan_fix:
                r = nanv if v != v else r
            out[i] = r

    return kernel


def clip_kernel_numba() -> Any:
    """kernel(max_wins, nan_fix) -> the compiled plain clip `k(x, out, s, b, lo, hi, nanv)` (s, b unused), or None
    without numba."""
    return (lambda max_wins, nan_fix: _numba_kernel(False, max_wins, nan_fix)) if _numba_available() else None


def fused_kernel_numba() -> Any:
    """kernel(max_wins, nan_fix) -> the compiled float32 scale-bias + clip, or None without numba."""
    return (lambda max_wins, nan_fix: _numba_kernel(True, max_wins, nan_fix)) if _numba_available() else None
