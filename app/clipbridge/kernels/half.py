"""float16 / bfloat16 clip on the 16-bit patterns: integer compares at memory speed, bit-exact with evaluate().

IEEE halves order like sign-magnitude integers, so `key(b) = b ^ 0x8000` (sign clear) or `b ^ 0xFFFF` (sign set)
orders every non-NaN pattern as the float order does, with -0 one below +0. evaluate()'s np.maximum/np.minimum
are two steps, each "keep the value, or take the bound"; each step becomes `a1 <= key <= a2`, with the
thresholds chosen once per meaning so that ties between equal floats (the two zeros) go the way the dtype's ufunc
sends them. NaN inputs pass through with their payload, as np.maximum/np.minimum return them.

This module is the NumPy side (the plan, the steps, the table); clipbridge.kernels.half_numba compiles the steps and
clipbridge.kernels.cupy runs them on a GPU. ScaleBias runs in registers where it can (clipbridge.kernels.scale_bias16_jit,
float32 or float16 precision); otherwise (no numba, float64 precision) through a 65,536-entry table: the tensor
has that many values, so the table computes clipbridge.kernels.scale_bias16.scale_bias_bits on each pattern once, then
the clip steps, and the kernel is one gather per element.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
import numpy as np

from clipbridge.core.dtypes import BFLOAT16_NP, BY_NAME, DType
from clipbridge.kernels.scale_bias16 import scale_bias_bits
from clipbridge.core.meaning import ScaleBias

U16 = np.dtype(np.uint16)
HALF = frozenset({np.dtype(np.float16), BFLOAT16_NP})

# Largest non-NaN magnitude pattern (the infinity): a pattern with (b & 0x7FFF) above it is a NaN.
_INF = {np.dtype(np.float16): 0x7C00, BFLOAT16_NP: 0x7F80}
# Which argument np.maximum/np.minimum return when the two compare equal (only -0 == +0 can differ in bits).
# NumPy's half loops: `a >= b || isnan(a) ? a : b` (first wins); ml_dtypes: `isnan(a) || a > b ? a : b` (second).
_TIES_FIRST = {np.dtype(np.float16): True, BFLOAT16_NP: False}
_KEY_MAX = 0xFFFF


def key(b: int) -> int:
    """The order-preserving key of a non-NaN 16-bit float pattern (IEEE 754 §5.10 totalOrder, sign-magnitude)."""
    return b ^ 0x8000 if b < 0x8000 else b ^ 0xFFFF


def _bits(dt: np.dtype, v: float) -> int:
    return int(np.asarray(v, dtype=dt).view(U16))


def _zeros(b: int) -> tuple[int, int]:
    """(lowest, highest) key among the patterns equal in value to b: both zeros for a zero, else b's own."""
    if b & 0x7FFF == 0:
        return key(0x8000), key(0x0000)
    return key(b), key(b)


@dataclass(frozen=True)
class HalfPlan:
    """Two steps on the key: keep the value when a1 <= key <= a2, else take the bound's bits b1; then c1/c2/b2."""

    a1: int
    a2: int
    b1: int
    c1: int
    c2: int
    b2: int
    inf: int  # NaN when (bits & 0x7FFF) > inf
    all_nan: bool
    nan_bits: int  # np.full_like(t, nan)'s pattern
    # A NaN input becomes (bits & nan_mask) | nan_fill: 0xFFFF, 0 keeps it (payload included); 0, b gives pattern b
    # (the NaN-input rules TO_LOWER/TO_ZERO: the replaced and clipped value, computed once per meaning).
    nan_mask: int = 0xFFFF
    nan_fill: int = 0
    max_wins: bool = True  # which end of each step's range is open (half_plan: a2 and c1, or a1 and c2)


def half_plan(dt: np.dtype, lo: float, hi: float, max_wins: bool, all_nan: bool,
              nan_out: float | None = None) -> HalfPlan:
    """The thresholds that make the key steps compute evaluate()'s min/max order bit for bit.

    `nan_out`: what a NaN input gives under a replacing NaN-input rule (None: it passes through).
    """
    first = _TIES_FIRST[dt]
    lo_b, hi_b = _bits(dt, lo), _bits(dt, hi)
    lo_low, lo_high = _zeros(lo_b)
    hi_low, hi_high = _zeros(hi_b)
    if max_wins:
        # maximum(x, lo) keeps x when x >= lo (ties to x) or x > lo; then minimum(hi, t) keeps t when t < hi or <=.
        lower = lo_low if first else lo_high + 1
        upper = hi_low - 1 if first else hi_high
        steps = (lower, _KEY_MAX, lo_b, 0, upper, hi_b)
    else:
        # minimum(x, hi) keeps x when x <= hi or x < hi; then maximum(lo, u) keeps u when u > lo or u >= lo.
        upper = hi_high if first else hi_low - 1
        lower = lo_high + 1 if first else lo_low
        steps = (0, upper, hi_b, lower, _KEY_MAX, lo_b)
    mask, fill = (0xFFFF, 0) if nan_out is None else (0, _bits(dt, nan_out))
    return HalfPlan(*steps, inf=_INF[dt], all_nan=all_nan, nan_bits=_bits(dt, float("nan")), nan_mask=mask,
                    nan_fill=fill, max_wins=max_wins)


def steps_numpy(hp: HalfPlan, b: np.ndarray) -> np.ndarray:
    """The two key steps on uint16 patterns with NumPy integer ops (the table builder and the no-numba path)."""
    if hp.all_nan:
        return np.full(b.shape, hp.nan_bits, dtype=U16)
    b32 = b.astype(np.int32)
    k = b32 ^ (0x8000 | ((b32 >> 15) * 0x7FFF))
    keep = (k >= hp.a1) & (k <= hp.a2)
    t = np.where(keep, b32, hp.b1)
    kt = np.where(keep, k, key(hp.b1))
    r = np.where((kt >= hp.c1) & (kt <= hp.c2), t, hp.b2)
    r = np.where((b32 & 0x7FFF) > hp.inf, (b32 & hp.nan_mask) | hp.nan_fill, r)
    return r.astype(U16)


def sb_key(sb: ScaleBias | None) -> tuple[str, str, str, bool] | None:
    """A cache key that tells -0.0 from 0.0 (ScaleBias(s, -0.0) == ScaleBias(s, 0.0), yet x*s-0 != x*s+0 at -0)."""
    if sb is None:
        return None
    return float(sb.scale).hex(), float(sb.bias).hex(), sb.precision.name, sb.fused


def table(hp: HalfPlan, dt_name: str, sb: ScaleBias | None) -> np.ndarray:
    """out_bits = table[in_bits] for every one of the 65,536 patterns (ScaleBias, if any, then the clip)."""
    return cached_table(hp, dt_name, sb_key(sb))


@lru_cache(maxsize=64)
def cached_table(hp: HalfPlan, dt_name: str, sbk: tuple[str, str, str, bool] | None) -> np.ndarray:
    dt: DType = BY_NAME[dt_name]
    pats = np.arange(1 << 16, dtype=np.uint32).astype(U16)
    if sbk is not None:
        sb = ScaleBias(float.fromhex(sbk[0]), float.fromhex(sbk[1]), BY_NAME[sbk[2]], sbk[3])
        pats = scale_bias_bits(dt.name, sb, pats)
    out = steps_numpy(hp, pats)
    out.flags.writeable = False
    return out


def chunk_numpy(lut: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
    """One chunk without numba: a table gather (np.take on uint16 patterns), exact for every variant."""
    np.take(lut, x, out=out)
