"""The clip on CuPy: the scalar-bound one-pass kernel, and the float16/bfloat16 key steps of clipbridge.kernels.half.

CuPy's maximum then minimum read and write the array twice (0.28x of a device copy on an H100). Here each element
is read once and written once, with the selects of clipbridge.kernels.numba's kernel, which are NumPy's float
maximum(a, b) = `a > b || isnan(a) ? a : b` and minimum(a, b) = `a < b || isnan(a) ? a : b` in the meaning's order:
bit for bit NumPy's, zero signs included, crossed bounds with no special case. A NaN input propagates, or becomes
the rule's one output (clipbridge.kernels.plan.plan computes it). A float32 ScaleBias is __fmul_rn then __fadd_rn: two
roundings, which NVRTC may not contract into an FMA. CuPy is imported where a kernel is built, never at import
(this module's name shadows nothing: imports are absolute).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from clipbridge.core.errors import BackendUnavailable
from clipbridge.kernels.half import HalfPlan, cached_table, half_plan, key, sb_key
from clipbridge.kernels.plan import FULL_WIDTH, plan

# dtypes the one-pass kernel runs: float16/bfloat16 have clipbridge.kernels.half's pattern kernels (below).
ONE_PASS = FULL_WIDTH


def kernel_source(max_wins: bool, nan_fix: bool, scale_bias: bool) -> str:
    """The CUDA body for one variant (x, lo, hi, nanv, s, b -> y)."""
    value = "T v = __fadd_rn(__fmul_rn(x, s), b);" if scale_bias else "T v = x;"
    if max_wins:  # minimum(hi, maximum(v, lo))
        steps = "T u = (v <= lo) ? lo : v;\nT r = (hi < u) ? hi : u;"
    else:  # maximum(lo, minimum(v, hi))
        steps = "T u = (v >= hi) ? hi : v;\nT r = (lo > u) ? lo : u;"
    fix = "y = (v != v) ? nanv : r;" if nan_fix else "y = r;"
    return f"{value}\n{steps}\n{fix}"


@lru_cache(maxsize=16)
def _kernel(max_wins: bool, nan_fix: bool, scale_bias: bool) -> Any:
    import cupy as cp  # type: ignore[import-not-found]

    name = f"clipbridge_clip_{'max' if max_wins else 'min'}_{'nanfix' if nan_fix else 'nan'}_{int(scale_bias)}"
    params = "T x, T lo, T hi, T nanv, float32 s, float32 b"
    return cp.ElementwiseKernel(params, "T y", kernel_source(max_wins, nan_fix, scale_bias), name)


def runs(dtype: np.dtype, scale_bias: bool, all_nan: bool) -> bool:
    """True when the one-pass kernel computes this clip (a ScaleBias only on float32, as DirectML's is)."""
    return dtype in ONE_PASS and not all_nan and (not scale_bias or dtype == np.float32)


def clip_one_pass(x: Any, lo: float | int, hi: float | int, max_wins: bool, nan_out: float | None,
                  scale: float | None = None, bias: float | None = None, out: Any = None) -> Any:
    """The clip of the CuPy array `x` with scalar bounds in one pass (see the module docstring)."""
    import cupy as cp  # type: ignore[import-not-found]

    t = x.dtype.type
    sb = scale is not None
    k = _kernel(max_wins, nan_out is not None, sb)
    nanv = t(nan_out if nan_out is not None else 0)
    s, b = np.float32(scale if sb else 1.0), np.float32(bias if sb else 0.0)
    if out is None:
        out = cp.empty_like(x)
    return k(x, t(lo), t(hi), nanv, s, b, out)


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

    return cp.asarray(cached_table(hp, dt_name, sbk))


def clip_cupy_half(m: Any, x: Any) -> Any:
    """float16/bfloat16 on CuPy: `x` a device uint16 array of m's patterns; returns the output patterns."""
    if m.has_tensor_bounds or m.out_dtype != m.dtype:
        raise BackendUnavailable("backend 'cupy' does not run per-element bounds or promotion of 16-bit floats "
                                 "yet; use backend 'numpy'", "backend")
    import cupy as cp  # type: ignore[import-not-found]

    p = plan(m)
    hp = half_plan(m.dtype.np_dtype, p.lo, p.hi, p.max_wins, p.all_nan, p.nan_out)
    lut = None if m.scale_bias is None else _device_table(hp, m.dtype.name, sb_key(m.scale_bias),
                                                          cp.cuda.Device().id)
    return clip_half_cupy(hp, lut, x)
