"""When two engines' tensors differ: per-dtype tolerances, NaN equal to NaN, infinities exact; symmetric
(|a - b| <= atol + rtol * max(|a|, |b|)), so swapping the engines never changes the answer.

Defaults (docs/diff.md says why): a float type's rtol is about 1000 of its machine epsilons for float32/64
(a Conv or MatMul sums thousands of products in an order each engine picks) and a few epsilons for the
16-bit types, whose epsilon is already coarse; atol covers results that cancel to near zero. Integers and
booleans must be equal.
"""

from __future__ import annotations

import numpy as np

TOLERANCES: dict[str, tuple[float, float]] = {  # dtype name -> (rtol, atol)
    "float64": (1e-9, 1e-12),
    "float32": (1e-4, 1e-5),
    "float16": (1e-2, 1e-3),
    "bfloat16": (1.6e-2, 1e-2),
}
EXACT = (0.0, 0.0)


def tolerance(dtype: np.dtype | str, rtol: float | None = None, atol: float | None = None) -> tuple[float, float]:
    """(rtol, atol) for a dtype: the caller's where given, else the default of the dtype (exact for integers)."""
    name = np.dtype(dtype).name if not isinstance(dtype, str) else dtype
    base = TOLERANCES.get(name, EXACT)
    if base == EXACT and name not in TOLERANCES:
        return EXACT
    return (base[0] if rtol is None else rtol, base[1] if atol is None else atol)


def differing(a: np.ndarray, b: np.ndarray, rtol: float | None = None, atol: float | None = None) -> np.ndarray:
    """A boolean mask of the elements where b differs from a (the reference); shapes must broadcast equal."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return np.ones(max(a.size, b.size, 1), dtype=bool)
    r, t = tolerance(a.dtype, rtol, atol)
    if a.dtype.kind not in "fc" and b.dtype.kind not in "fc":
        return a != b
    # float32 and float64 compare in their own type (the tolerances are far above their rounding); the 16-bit
    # types and mixed pairs in float64.
    wide = a.dtype if a.dtype == b.dtype and a.dtype in (np.float32, np.float64) else np.dtype(np.float64)
    x, y = a.astype(wide, copy=False), b.astype(wide, copy=False)
    nan_x, nan_y = np.isnan(x), np.isnan(y)
    with np.errstate(invalid="ignore", over="ignore"):
        finite = np.isfinite(x) & np.isfinite(y)
        # Symmetric (issue 44): neither engine is the truth, so rtol scales by the larger magnitude of the two.
        close = np.abs(x - y) <= t + r * np.maximum(np.abs(x), np.abs(y))
    inf_same = ~finite & ~nan_x & ~nan_y & (x == y)
    return ~((nan_x & nan_y) | inf_same | (finite & close))


def count(a: np.ndarray, b: np.ndarray, rtol: float | None = None, atol: float | None = None) -> int:
    return int(differing(a, b, rtol, atol).sum())


def any_differ(ref: dict[str, np.ndarray], other: dict[str, np.ndarray], names: list[str],
               rtol: float | None = None, atol: float | None = None) -> bool:
    """Whether any of the tensors `names` differs between two runs (a missing one differs)."""
    for n in names:
        if n not in ref or n not in other or count(ref[n], other[n], rtol, atol):
            return True
    return False
