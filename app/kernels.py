"""Clip kernels: one array-API kernel (NumPy, CuPy, array_api_strict) and a chunked multi-threaded NumPy path.

Both compute exactly app.meaning.evaluate(); the tests hold them to it.
"""

from __future__ import annotations

import math
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from app.dtypes import DType
from app.errors import RejectedSpec
from app.exact import trunc_saturate
from app.kernels_half import HALF, chunk_numpy, clip_half_numba, half_plan, numba_kernels, steps_numpy, table
from app.meaning import (DEFAULT_READING, FILLED_NAN_INPUTS, READING_CURRENT, Meaning, NanBound, Order, State,
                         apply_scale_bias, evaluate)

# Plain clip: 4 Mi elements per task (measured best on 2 cores: memory-bound, few dispatches).
CHUNK = 1 << 22
# Fused scale-bias + clip: sub-chunks of 128 Ki elements (512 KiB of float32) stay in L2 between passes.
CHUNK_FUSED = 1 << 17


@dataclass(frozen=True)
class Plan:
    """What a meaning reduces to at run time: an optional scale-bias, then min/max in a fixed order."""

    lo: float | int
    hi: float | int
    max_wins: bool  # min(hi, max(x, lo)); else max(lo, min(x, hi))
    all_nan: bool  # a propagating NaN bound
    scale: float | None
    bias: float | None
    fused: bool


def plan(m: Meaning, reading: str | None = None) -> Plan:
    """Reduce a meaning to the operations a kernel runs (the same rules as evaluate())."""
    if m.state is State.REJECTED:
        raise RejectedSpec(m.reason or "rejected by the framework")
    if m.dynamic or m.lower is None or m.upper is None:
        raise RejectedSpec("bounds are computed at run time; the clip cannot run without them")
    lo, hi = m.lower.value, m.upper.value
    all_nan = False
    if m.dtype.is_float and (m.lower.is_nan or m.upper.is_nan):
        if m.nan_bound is NanBound.REJECTED:
            raise RejectedSpec(m.reason or "a NaN bound is rejected")
        if m.nan_bound is NanBound.PROPAGATE:
            all_nan = True
        open_lo, open_hi = (0.0, 0.0) if m.nan_bound is NanBound.ZERO else (-math.inf, math.inf)
        lo = open_lo if m.lower.is_nan else lo
        hi = open_hi if m.upper.is_nan else hi
    order = m.order
    if order is Order.AMBIGUOUS:
        order = Order.MIN_WINS if (reading or DEFAULT_READING) == READING_CURRENT else Order.MAX_WINS
    if order is Order.REJECTED:
        if not all_nan and lo > hi:
            raise RejectedSpec(m.reason or f"{m.dialect} rejects min > max")
        order = Order.MAX_WINS
    sb = m.scale_bias
    return Plan(lo, hi, order is Order.MAX_WINS, all_nan, sb.scale if sb else None, sb.bias if sb else None,
                bool(sb and sb.fused))


def reference_only(m: Meaning) -> bool:
    """Meaning variants the one-pass kernels do not run yet: they are computed by evaluate() (exact, slower)."""
    return (m.has_tensor_bounds or m.result_dtype not in (None, m.dtype)
            or (m.dtype.is_float and m.nan_input in FILLED_NAN_INPUTS))


def clip_xp(xp: Any, m: Meaning, x: Any, reading: str | None = None) -> Any:
    """The clip on any array-API namespace `xp` (numpy, cupy, array_api_strict); x has m's dtype."""
    if reference_only(m) and xp is np:
        return evaluate(m, x, reading)
    p = plan(m, reading)
    t = x
    if p.scale is not None:
        f32 = xp.float32
        y = xp.astype(x, f32) * xp.asarray(p.scale, dtype=f32) + xp.asarray(p.bias, dtype=f32)
        if m.dtype.is_float:
            t = xp.astype(y, x.dtype)
        else:
            t = trunc_saturate(xp, xp.astype(y, xp.float64), x.dtype, m.dtype.lowest(), m.dtype.highest())
    if p.all_nan:
        return xp.full_like(t, math.nan)
    lo = xp.asarray(p.lo, dtype=x.dtype)
    hi = xp.asarray(p.hi, dtype=x.dtype)
    if p.max_wins:
        return xp.minimum(hi, xp.maximum(t, lo))
    return xp.maximum(lo, xp.minimum(t, hi))


@lru_cache(maxsize=1)
def _numba_kernels() -> tuple[Any, Any] | None:
    """(plain clip, float32 scale-bias + clip) compiled by numba (extra [fast]); None when numba is absent.

    One parallel pass over memory each. `if v < lo: v = lo; if v > hi: v = hi` is np.clip for lo <= hi: a NaN
    fails both compares and propagates. No fastmath, so LLVM may not contract x*s+b into an FMA (two
    roundings, as np.multiply then np.add).
    """
    try:
        from numba import njit, prange  # type: ignore[import-not-found]
    except ImportError:
        return None

    @njit(parallel=True, fastmath=False, nogil=True, cache=False)
    def clip(x, out, lo, hi):  # pragma: no cover - compiled
        for i in prange(x.size):
            v = x[i]
            if v < lo:
                v = lo
            if v > hi:
                v = hi
            out[i] = v

    @njit(parallel=True, fastmath=False, nogil=True, cache=False)
    def fused(x, out, s, b, lo, hi):  # pragma: no cover - compiled
        for i in prange(x.size):
            v = x[i] * s + b
            if v < lo:
                v = lo
            if v > hi:
                v = hi
            out[i] = v
    return clip, fused


def clip_kernel_numba() -> Any:
    """The compiled plain clip, or None without numba."""
    k = _numba_kernels()
    return k[0] if k else None


def fused_kernel_numba() -> Any:
    """The compiled float32 scale-bias + clip, or None without numba."""
    k = _numba_kernels()
    return k[1] if k else None


# numba's fallback threading layer (workqueue, used where neither OpenMP nor TBB is installed) aborts the process
# on concurrent launches; each launch already uses every core, so launches are serialized.
_NUMBA_LOCK = threading.Lock()

NUMBA_PLAIN = frozenset(np.dtype(n) for n in ("float32", "float64", "int8", "int16", "int32", "int64", "uint8",
                                               "uint16", "uint32", "uint64"))  # numba has no float16 arithmetic


@lru_cache(maxsize=1)
def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=os.cpu_count() or 1, thread_name_prefix="clip")


def clip_numpy(m: Meaning, x: np.ndarray, out: np.ndarray | None = None, reading: str | None = None,
               threads: int | None = None) -> np.ndarray:
    """The clip on NumPy: one np.clip pass per chunk, chunks over threads (ufuncs release the GIL).

    `out` may be `x` (in place). With a scale-bias, x*scale+bias and the clip are fused per small chunk so
    the data stays in cache between the passes.
    """
    if reference_only(m):
        y = evaluate(m, x, reading)
        if out is not None and out.dtype == y.dtype and out.shape == y.shape:
            out[...] = y
            return out
        return y
    p = plan(m, reading)
    dt: DType = m.dtype
    if not (x.flags.c_contiguous or x.flags.f_contiguous):
        x = np.ascontiguousarray(x)
    if out is None:
        out = np.empty_like(x)  # same layout as x, so ravel(order="K") pairs the same elements
    if not (out.flags.c_contiguous or out.flags.f_contiguous) or out.shape != x.shape:
        raise ValueError("out must be contiguous and of x's shape")
    # Elementwise: the memory order is irrelevant as long as x and out are walked the same way.
    flat_x, flat_o = x.ravel(order="K"), out.ravel(order="K")
    if dt.np_dtype in HALF:
        return _clip_half(m, p, x, out, flat_x, flat_o, threads)
    # min(hi, max(x, lo)) is np.clip(x, lo, hi) (NaN propagates); crossed bounds collapse to one value.
    lo_v, hi_v = p.lo, p.hi
    if not p.all_nan and lo_v > hi_v:
        lo_v = hi_v = hi_v if p.max_wins else lo_v
    lo = dt.np_dtype.type(lo_v)
    hi = dt.np_dtype.type(hi_v)
    scale = None if p.scale is None else np.float32(p.scale)
    bias = None if p.bias is None else np.float32(p.bias)

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

    n = flat_x.size
    if scale is not None and dt.np_dtype == np.float32 and not p.all_nan and n >= CHUNK_FUSED \
            and fused_kernel_numba() is not None:
        with _NUMBA_LOCK:
            fused_kernel_numba()(flat_x, flat_o, scale, bias, lo, hi)  # lo <= hi here (crossed collapsed above)
        return out
    if scale is None and dt.np_dtype in NUMBA_PLAIN and not p.all_nan and n >= CHUNK_FUSED \
            and clip_kernel_numba() is not None:
        with _NUMBA_LOCK:
            clip_kernel_numba()(flat_x, flat_o, lo, hi)
        return out
    sub = CHUNK_FUSED if scale is not None else CHUNK

    def span(start: int, stop: int) -> None:
        # One task per large span; small sub-chunks inside it keep the fused passes in cache.
        for s in range(start, stop, sub):
            work(s, min(s + sub, stop))

    _run_spans(span, n, sub, threads)
    return out


def half_kernel_numba() -> Any:
    """The compiled float16/bfloat16 kernels, or None without numba."""
    return numba_kernels()


def _clip_half(m: Meaning, p: Plan, x: np.ndarray, out: np.ndarray, flat_x: np.ndarray, flat_o: np.ndarray,
               threads: int | None) -> np.ndarray:
    """float16/bfloat16 on their uint16 patterns (app.kernels_half): one pass, bit-exact with evaluate()."""
    hp = half_plan(m.dtype.np_dtype, p.lo, p.hi, p.max_wins, p.all_nan)
    xb, ob = flat_x.view(np.uint16), flat_o.view(np.uint16)
    sb = m.scale_bias
    n = xb.size
    if n >= CHUNK_FUSED and half_kernel_numba() is not None:
        lut = table(hp, m.dtype.name, sb) if sb is not None else None
        with _NUMBA_LOCK:
            if clip_half_numba(hp, lut, xb, ob):
                return out
    if n <= 1 << 16:  # fewer elements than a table has entries: compute them directly
        with np.errstate(all="ignore"):
            t = xb if sb is None else apply_scale_bias(sb, flat_x, m.dtype).view(np.uint16)
        ob[...] = steps_numpy(hp, t)
        return out
    lut = table(hp, m.dtype.name, sb)
    sub = CHUNK_FUSED  # np.take makes an intp index array per chunk: keep it in cache

    def span(start: int, stop: int) -> None:
        for s in range(start, stop, sub):
            e = min(s + sub, stop)
            chunk_numpy(lut, xb[s:e], ob[s:e])

    _run_spans(span, n, sub, threads)
    return out


def _run_spans(span: Any, n: int, sub: int, threads: int | None) -> None:
    """span(start, stop) over [0, n): inline when small, else two spans per thread (multiples of `sub`)."""
    nthreads = threads or (os.cpu_count() or 1)
    if n <= CHUNK or nthreads == 1:
        span(0, n)
        return
    step = -(-n // (nthreads * 2))
    step = -(-step // sub) * sub
    list(_pool().map(lambda s: span(s, min(s + step, n)), range(0, n, step)))
