"""The clip on NumPy arrays: the compiled kernels where numba is installed and the array is large, else NumPy's own
ufuncs on chunks spread over the cores (ufuncs release the GIL).

Every path computes exactly what clipbridge.core.evaluate.evaluate() computes, with code of its own (no output of theirs
comes from evaluate()); the tests hold them to it. This module's name shadows nothing: imports are absolute.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import Any

import numpy as np

from clipbridge.core.dtypes import DType
from clipbridge.core.exact import trunc_saturate
from clipbridge.core.meaning import Meaning
from clipbridge.kernels.half import HALF, chunk_numpy, half_plan, steps_numpy, table
from clipbridge.kernels.half_numba import clip_half_numba, numba_kernels
from clipbridge.kernels.numba import NUMBA_LOCK, clip_kernel_numba, fused_kernel_numba
from clipbridge.kernels.plan import FULL_WIDTH, Plan, nan_rule, not_run, plan, reference_only, tensor_bounds
from clipbridge.kernels.scale_bias16 import clip_scale_bias_16, scale_bias_bits
from clipbridge.kernels.tensor import one_pass_layout, ufunc_chunk, variant_kernel

# Plain clip: 4 Mi elements per task (measured best on 2 cores: memory-bound, few dispatches).
CHUNK = 1 << 22
# Fused scale-bias + clip: sub-chunks of 128 Ki elements (512 KiB of float32) stay in L2 between passes.
CHUNK_FUSED = 1 << 17


@lru_cache(maxsize=1)
def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=os.cpu_count() or 1, thread_name_prefix="clip")


def clip_numpy(m: Meaning, x: np.ndarray, out: np.ndarray | None = None,
               threads: int | None = None) -> np.ndarray:
    """The clip on NumPy: one np.clip pass per chunk, chunks over threads (ufuncs release the GIL).

    `out` may be `x` (in place). With a scale-bias, x*scale+bias and the clip are fused per small chunk so
    the data stays in cache between the passes.
    """
    if reference_only(m):
        raise not_run()
    if m.has_tensor_bounds or m.out_dtype != m.dtype:
        return _clip_general(m, x, out, threads)
    p = plan(m)
    if not (x.flags.c_contiguous or x.flags.f_contiguous):
        x = np.ascontiguousarray(x)
    if out is None:
        out = np.empty_like(x)  # same layout as x, so ravel(order="K") pairs the same elements
    if not (out.flags.c_contiguous or out.flags.f_contiguous) or out.shape != x.shape:
        raise ValueError("out must be contiguous and of x's shape")
    # Elementwise: the memory order is irrelevant as long as x and out are walked the same way.
    flat_x, flat_o = x.ravel(order="K"), out.ravel(order="K")
    if m.dtype.np_dtype in HALF:
        _clip_half(m, p, flat_x, flat_o, threads)
    else:
        _clip_full(m.dtype, p, flat_x, flat_o, threads)
    return out


def _clip_full(dt: DType, p: Plan, flat_x: np.ndarray, flat_o: np.ndarray, threads: int | None) -> None:
    """A full-width dtype with scalar bounds: one compiled pass when numba is there and the array is large, else
    np.clip (and the scale-bias before it) per chunk."""
    # The compiled kernels take the bounds as they are; np.clip below needs crossed bounds collapsed.
    bounds = (dt.np_dtype.type(p.lo), dt.np_dtype.type(p.hi))
    scale = None if p.scale is None else np.float32(p.scale)
    bias = None if p.bias is None else np.float32(p.bias)
    nan_fix = p.nan_out is not None
    nanv = dt.np_dtype.type(p.nan_out if nan_fix else 0)
    n = flat_x.size
    if scale is not None and dt.np_dtype == np.float32 and not p.all_nan and n >= CHUNK_FUSED \
            and fused_kernel_numba() is not None:
        with NUMBA_LOCK:
            fused_kernel_numba()(p.max_wins, nan_fix)(flat_x, flat_o, scale, bias, bounds[0], bounds[1], nanv)
        return
    if scale is None and dt.np_dtype in FULL_WIDTH and not p.all_nan and n >= CHUNK_FUSED \
            and clip_kernel_numba() is not None:
        with NUMBA_LOCK:
            one = dt.np_dtype.type(1)
            clip_kernel_numba()(p.max_wins, nan_fix)(flat_x, flat_o, one, one, bounds[0], bounds[1], nanv)
        return
    sub = CHUNK_FUSED if scale is not None else CHUNK
    work = _chunk_work(dt, p, flat_x, flat_o, scale, bias, nanv)

    def span(start: int, stop: int) -> None:
        # One task per large span; small sub-chunks inside it keep the fused passes in cache.
        for s in range(start, stop, sub):
            work(s, min(s + sub, stop))

    run_spans(span, n, sub, threads)


def _chunk_work(dt: DType, p: Plan, flat_x: np.ndarray, flat_o: np.ndarray, scale: np.float32 | None,
                bias: np.float32 | None, nanv: Any) -> Any:
    """work(start, stop): the scale-bias (if any), np.clip and the NaN-input rule on one chunk, with NumPy."""
    # min(hi, max(x, lo)) is np.clip(x, lo, hi) (NaN propagates); crossed bounds collapse to one value.
    lo_v, hi_v = p.lo, p.hi
    if not p.all_nan and lo_v > hi_v:
        lo_v = hi_v = hi_v if p.max_wins else lo_v
    lo = dt.np_dtype.type(lo_v)
    hi = dt.np_dtype.type(hi_v)
    nan_fix = p.nan_out is not None

    def work(start: int, stop: int) -> None:
        xs, os_ = flat_x[start:stop], flat_o[start:stop]
        if p.all_nan:
            os_.fill(np.nan)
            return
        src = xs
        if scale is not None:
            if dt.np_dtype == np.float32:
                np.multiply(xs, scale, out=os_)
                np.add(os_, bias, out=os_)
            else:
                y = xs.astype(np.float32)
                np.multiply(y, scale, out=y)
                np.add(y, bias, out=y)
                if dt.is_float:
                    os_[...] = y  # back to the tensor type, nearest even
                else:
                    # Integer tensors (the documented reading): truncate toward zero, saturate, NaN -> 0.
                    os_[...] = trunc_saturate(np, y.astype(np.float64), dt.np_dtype, dt.lowest(), dt.highest())
            src = os_
        np.clip(src, lo, hi, out=os_)
        if nan_fix:  # NaN inputs (np.clip kept them) become the rule's one output
            np.copyto(os_, nanv, where=np.isnan(os_))

    return work


def half_kernel_numba() -> Any:
    """The compiled float16/bfloat16 kernels, or None without numba."""
    return numba_kernels()


def _clip_half(m: Meaning, p: Plan, flat_x: np.ndarray, flat_o: np.ndarray, threads: int | None) -> None:
    """float16/bfloat16 on their uint16 patterns (clipbridge.kernels.half): one pass, bit-exact with evaluate()."""
    hp = half_plan(m.dtype.np_dtype, p.lo, p.hi, p.max_wins, p.all_nan, p.nan_out)
    xb, ob = flat_x.view(np.uint16), flat_o.view(np.uint16)
    sb = m.scale_bias
    n = xb.size
    if n >= CHUNK_FUSED and half_kernel_numba() is not None:
        if sb is not None and not p.all_nan and clip_scale_bias_16(m.dtype.name, sb, p.lo, p.hi, p.max_wins,
                                                                   p.nan_out, xb, ob, NUMBA_LOCK):
            return
        lut = table(hp, m.dtype.name, sb) if sb is not None else None
        with NUMBA_LOCK:
            if clip_half_numba(hp, lut, xb, ob):
                return
    if n <= 1 << 16:  # fewer elements than a table has entries: compute them directly
        t = xb if sb is None else scale_bias_bits(m.dtype.name, sb, xb)
        ob[...] = steps_numpy(hp, t)
        return
    lut = table(hp, m.dtype.name, sb)
    sub = CHUNK_FUSED  # np.take makes an intp index array per chunk: keep it in cache

    def span(start: int, stop: int) -> None:
        for s in range(start, stop, sub):
            e = min(s + sub, stop)
            chunk_numpy(lut, xb[s:e], ob[s:e])

    run_spans(span, n, sub, threads)


def run_spans(span: Any, n: int, sub: int, threads: int | None, elements: int | None = None) -> None:
    """span(start, stop) over [0, n): inline when small, else two spans per thread (multiples of `sub`).

    `elements`: how many elements [0, n) covers when the spans count rows (default n).
    """
    nthreads = threads or (os.cpu_count() or 1)
    if (n if elements is None else elements) <= CHUNK or nthreads == 1:
        span(0, n)
        return
    step = -(-n // (nthreads * 2))
    step = -(-step // sub) * sub
    list(_pool().map(lambda s: span(s, min(s + step, n)), range(0, n, step)))


def _clip_general(m: Meaning, x: np.ndarray, out: np.ndarray | None, threads: int | None) -> np.ndarray:
    """Per-element bounds or promotion (clipbridge.kernels.tensor): one compiled pass where the layout allows, else
    evaluate()'s ufuncs on chunks over the cores. The output has the broadcast shape and the result dtype."""
    dt = m.out_dtype.np_dtype
    if m.has_tensor_bounds:
        lo, hi, max_wins = tensor_bounds(m)
    else:
        p = plan(m)
        if p.all_nan:
            return np.full(x.shape, np.nan, dtype=dt)
        lo, hi, max_wins = np.asarray(p.lo, dtype=dt), np.asarray(p.hi, dtype=dt), p.max_wins
    rule = nan_rule(m)
    x = np.asarray(x, dtype=m.dtype.np_dtype)
    shape = np.broadcast_shapes(x.shape, lo.shape, hi.shape)
    if out is None or out.shape != shape or out.dtype != dt:
        out = np.empty(shape, dtype=dt)
    layout = one_pass_layout(x, lo, hi, out) if shape == x.shape and x.size >= CHUNK_FUSED else None
    kernel = variant_kernel(dt.name, layout[0], layout[1], max_wins, rule) if layout else None
    if kernel is not None:
        with NUMBA_LOCK:
            kernel(x.reshape(-1), lo.reshape(-1), hi.reshape(-1), out.reshape(-1))
        return out
    xb, lob, hib = (np.broadcast_to(a, shape) for a in (x, lo, hi))
    if out.ndim == 0 or out.size == 0:
        with np.errstate(all="ignore"):
            ufunc_chunk(xb, lob, hib, out, max_wins, rule)
        return out
    rows = shape[0]
    sub = max(1, CHUNK_FUSED // max(1, out.size // rows))  # rows per chunk: about 128 Ki elements, in cache

    def span(start: int, stop: int) -> None:
        with np.errstate(all="ignore"):
            for s in range(start, stop, sub):
                e = min(s + sub, stop)
                ufunc_chunk(xb[s:e], lob[s:e], hib[s:e], out[s:e], max_wins, rule)

    run_spans(span, rows, sub, threads, elements=out.size)
    return out
