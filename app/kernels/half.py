"""float16 / bfloat16 clip on the 16-bit patterns: integer compares at memory speed, bit-exact with evaluate().

IEEE halves order like sign-magnitude integers, so `key(b) = b ^ 0x8000` (sign clear) or `b ^ 0xFFFF` (sign set)
orders every non-NaN pattern as the float order does, with -0 one below +0. evaluate()'s np.maximum/np.minimum
are two steps, each "keep the value, or take the bound"; each step becomes `a1 <= key <= a2`, with the
thresholds chosen once per meaning so that ties between equal floats (the two zeros) go the way the dtype's ufunc
sends them. NaN inputs pass through with their payload, as np.maximum/np.minimum return them.

ScaleBias runs in registers where it can (app.kernels.scale_bias16, float32 or float16 precision); otherwise (no numba,
float64 precision) through a 65,536-entry table: the tensor has that many values, so the table computes
app.kernels.scale_bias16.scale_bias_bits on each pattern once, then the clip steps, and the kernel is one gather per
element.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from app.core.dtypes import BFLOAT16_NP, BY_NAME, DType
from app.kernels.scale_bias16 import scale_bias_bits
from app.core.meaning import ScaleBias

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


def _sb_key(sb: ScaleBias | None) -> tuple[str, str, str, bool] | None:
    """A cache key that tells -0.0 from 0.0 (ScaleBias(s, -0.0) == ScaleBias(s, 0.0), yet x*s-0 != x*s+0 at -0)."""
    if sb is None:
        return None
    return float(sb.scale).hex(), float(sb.bias).hex(), sb.precision.name, sb.fused


def table(hp: HalfPlan, dt_name: str, sb: ScaleBias | None) -> np.ndarray:
    """out_bits = table[in_bits] for every one of the 65,536 patterns (ScaleBias, if any, then the clip)."""
    return _table(hp, dt_name, _sb_key(sb))


@lru_cache(maxsize=64)
def _table(hp: HalfPlan, dt_name: str, sbk: tuple[str, str, str, bool] | None) -> np.ndarray:
    dt: DType = BY_NAME[dt_name]
    pats = np.arange(1 << 16, dtype=np.uint32).astype(U16)
    if sbk is not None:
        sb = ScaleBias(float.fromhex(sbk[0]), float.fromhex(sbk[1]), BY_NAME[sbk[2]], sbk[3])
        pats = scale_bias_bits(dt.name, sb, pats)
    out = steps_numpy(hp, pats)
    out.flags.writeable = False
    return out


@lru_cache(maxsize=1)
def numba_kernels() -> tuple[Any, Any] | None:
    """(key-step clip factory, table gather) on uint16 arrays compiled by numba; None without numba.

    Branch-free selects on int16 lanes so LLVM vectorizes the loop; parallel over every core.
    """
    try:
        from numba import njit, prange  # type: ignore[import-not-found]
    except ImportError:
        return None

    block = 1 << 14

    @njit(parallel=True, fastmath=False, nogil=True, cache=False)
    def gather16(x, out, lut):  # pragma: no cover - compiled
        n = x.size
        for j in prange((n + block - 1) // block):
            for i in range(j * block, min(j * block + block, n)):
                out[i] = lut[x[i]]

    return _clip16, gather16


@lru_cache(maxsize=4)
def _clip16(max_wins: bool, nan_fix: bool) -> Any:
    """The key-step clip compiled for one order and NaN-input rule (both compile-time constants).

    On int16 lanes (sixteen per AVX2 register): the patterns viewed as int16, the key made signed by
    b ^ ((b >> 15) & 0x7FFF) (the unsigned key minus 0x8000). Every intermediate is cast back to int16, since numba
    widens untyped integer arithmetic to int64 (int32 lanes reached about 0.8x of np.copyto). Each step of
    half_plan keeps a range with one open end (max-wins: key >= a1, then key <= c2; min-wins: key <= a2, then
    key >= c1), so one compare per step; specializing on the order and the NaN rule took one thread from 0.69x
    to 0.94x of np.copyto (one thread, 16 Mi float16, best of 25 on the shared 2-core machine).
    """
    from numba import njit, prange  # type: ignore[import-not-found]

    i16 = np.int16

    @njit(parallel=True, fastmath=False, nogil=True, cache=False)
    def clip16(x, out, a, b1, kb1, c, b2, inf, nf):  # pragma: no cover - compiled
        for i in prange(x.size):
            b = x[i]
            k = i16(b ^ i16(i16(b >> i16(15)) & i16(0x7FFF)))
            if max_wins:
                keep = k >= a
                t = b if keep else b1
                kt = k if keep else kb1
                r = t if kt <= c else b2
            else:
                keep = k <= a
                t = b if keep else b1
                kt = k if keep else kb1
                r = t if kt >= c else b2
            # A NaN input passes through (payload included), or becomes the rule's one pattern nf.
            nv = nf if nan_fix else b
            out[i] = nv if i16(b & i16(0x7FFF)) > inf else r

    return clip16


def clip_half_numba(hp: HalfPlan, lut: np.ndarray | None, x: np.ndarray, out: np.ndarray) -> bool:
    """Run the compiled kernel on flat uint16 views; False when numba is absent (the caller falls back).

    The caller holds app.kernels.cpu' launch lock: numba's workqueue layer aborts on concurrent launches.
    """
    k = numba_kernels()
    if k is None:
        return False
    clip16_for, gather16 = k
    if hp.all_nan:
        out.fill(hp.nan_bits)
    elif lut is not None:
        gather16(x, out, lut)
    else:
        a, c = (hp.a1, hp.c2) if hp.max_wins else (hp.a2, hp.c1)
        sk = [np.int16(v - 0x8000) for v in (a, key(hp.b1), c)]  # signed keys; bits as int16 two's complement
        sb = [np.uint16(v).view(np.int16) for v in (hp.b1, hp.b2, hp.nan_fill)]
        clip16_for(hp.max_wins, hp.nan_mask == 0)(x.view(np.int16), out.view(np.int16), sk[0], sb[0], sk[1], sk[2],
                                                 sb[1], np.int16(hp.inf), sb[2])
    return True


def chunk_numpy(lut: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
    """One chunk without numba: a table gather (np.take on uint16 patterns), exact for every variant."""
    np.take(lut, x, out=out)


# The same two key steps for CuPy (float16, and bfloat16, which CuPy has no dtype for, on its uint16 patterns).
_CUDA_STEPS = """
int b = x; int k = b ^ (0x8000 | ((b >> 15) * 0x7FFF));
bool keep = (k >= a1) & (k <= a2);
int t = keep ? b : b1; int kt = keep ? k : kb1;
int r = ((kt >= c1) & (kt <= c2)) ? t : b2;
y = (unsigned short)(((b & 0x7FFF) > inf) ? b : r);
"""


# Eight patterns per thread (one 16-byte load and store): CuPy's one-element-per-thread elementwise kernel moved
# 2-byte values at 0.29x of a device copy on an H100.
_CUDA_VEC = r"""
__device__ __forceinline__ unsigned int step1(int b, int a1, int a2, int b1, int kb1, int c1, int c2, int b2,
                                              int inf) {
  int k = b ^ (0x8000 | ((b >> 15) * 0x7FFF));
  bool keep = (k >= a1) & (k <= a2);
  int t = keep ? b : b1; int kt = keep ? k : kb1;
  int r = ((kt >= c1) & (kt <= c2)) ? t : b2;
  return (unsigned int)(((b & 0x7FFF) > inf) ? b : r);
}
#define P a1, a2, b1, kb1, c1, c2, b2, inf
#define W(w) (step1((w) & 0xFFFF, P) | (step1((w) >> 16, P) << 16))
#define G(w) ((unsigned int)__ldg(lut + ((w) & 0xFFFF)) | ((unsigned int)__ldg(lut + ((w) >> 16)) << 16))
extern "C" __global__ void clipbridge_clip16x8(const uint4* __restrict__ x, uint4* __restrict__ y, long long n8,
    int a1, int a2, int b1, int kb1, int c1, int c2, int b2, int inf) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n8; i += (long long)gridDim.x * blockDim.x) {
    uint4 v = x[i]; v.x = W(v.x); v.y = W(v.y); v.z = W(v.z); v.w = W(v.w); y[i] = v;
  }
}
extern "C" __global__ void clipbridge_gather16x8(const uint4* __restrict__ x, uint4* __restrict__ y, long long n8,
    const unsigned short* __restrict__ lut) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n8; i += (long long)gridDim.x * blockDim.x) {
    uint4 v = x[i]; v.x = G(v.x); v.y = G(v.y); v.z = G(v.z); v.w = G(v.w); y[i] = v;
  }
}
"""


@lru_cache(maxsize=1)
def cupy_kernels() -> tuple[Any, Any, Any, Any]:
    """(clip, gather) elementwise kernels for any length and (clip, gather) 8-per-thread raw kernels, compiled lazily."""
    import cupy as cp  # type: ignore[import-not-found]

    clip16 = cp.ElementwiseKernel("uint16 x, int32 a1, int32 a2, int32 b1, int32 kb1, int32 c1, int32 c2, "
                                  "int32 b2, int32 inf", "uint16 y", _CUDA_STEPS, "clipbridge_clip16")
    gather16 = cp.ElementwiseKernel("uint16 x, raw uint16 lut", "uint16 y", "y = lut[x];", "clipbridge_gather16")
    mod = cp.RawModule(code=_CUDA_VEC)
    return clip16, gather16, mod.get_function("clipbridge_clip16x8"), mod.get_function("clipbridge_gather16x8")


def clip_half_cupy(hp: HalfPlan, lut: Any, xb: Any, out: Any = None) -> Any:
    """The clip on a CuPy uint16 array of float16/bfloat16 patterns; `lut` a device table for ScaleBias, or None."""
    import cupy as cp  # type: ignore[import-not-found]

    xb = cp.ascontiguousarray(xb)
    if out is None:
        out = cp.empty_like(xb)
    if not out.flags.c_contiguous or out.shape != xb.shape:
        raise ValueError("out must be C-contiguous and of x's shape")
    if hp.all_nan:
        out.fill(hp.nan_bits)
        return out
    clip16, gather16, clip_vec, gather_vec = cupy_kernels()
    args = tuple(np.int32(a) for a in (hp.a1, hp.a2, hp.b1, key(hp.b1), hp.c1, hp.c2, hp.b2, hp.inf))
    xf, of = xb.ravel(), out.ravel()
    n8 = 0
    if xf.data.ptr % 16 == 0 and of.data.ptr % 16 == 0:
        n8 = xf.size // 8
    if n8:
        threads = 256
        blocks = min(-(-n8 // threads), 1 << 30)  # one 16-byte vector per thread: the most loads in flight
        extra = (lut,) if lut is not None else args
        (gather_vec if lut is not None else clip_vec)((blocks,), (threads,), (xf, of, np.int64(n8), *extra))
    if n8 * 8 < xf.size:  # the tail (or an unaligned array) one element per thread
        tail_x, tail_o = xf[n8 * 8:], of[n8 * 8:]
        if lut is not None:
            gather16(tail_x, lut, tail_o)
        else:
            clip16(tail_x, *args, tail_o)
    if lut is None and hp.nan_mask != 0xFFFF:  # a replacing NaN-input rule: one select after the key steps
        cp.copyto(out, cp.uint16(hp.nan_fill), where=(xb & cp.uint16(0x7FFF)) > cp.uint16(hp.inf))
    return out


@lru_cache(maxsize=16)
def _device_table(hp: HalfPlan, dt_name: str, sbk: tuple[str, str, str, bool], device: int) -> Any:
    """The table on the device, uploaded once (128 KiB; a per-call upload would cost a tenth of a 1 GB clip)."""
    import cupy as cp  # type: ignore[import-not-found]

    return cp.asarray(_table(hp, dt_name, sbk))
