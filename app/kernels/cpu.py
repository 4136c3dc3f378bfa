"""Clip kernels: one array-API kernel (NumPy, CuPy, array_api_strict) and a chunked multi-threaded NumPy path.

Both compute exactly what app.core.meaning.evaluate() computes, with code of their own (no output of theirs comes
from evaluate()); the tests hold them to it.
"""

from __future__ import annotations

import math
import os
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from app.kernels import gpu as kernels_cupy
from app.core.dtypes import DType
from app.core.errors import BackendUnavailable, RejectedSpec
from app.core.exact import trunc_saturate
from app.kernels.half import HALF, chunk_numpy, clip_half_numba, half_plan, numba_kernels, steps_numpy, table
from app.kernels.tensor import (RULE_PROPAGATE, RULE_TO_LOWER, RULE_TO_UPPER, RULE_TO_ZERO, one_pass_layout,
                                ufunc_chunk, variant_kernel)
from app.kernels.scale_bias16 import clip_scale_bias_16, scale_bias_bits
from app.core.meaning import Meaning, NanBound, NanInput, Order, State, effective_order

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
    nan_out: float | None = None  # the output for a NaN input under TO_LOWER/TO_ZERO/TO_UPPER (replaced, then clipped)


def plan(m: Meaning, reading: str | None = None) -> Plan:
    """Reduce a meaning to the operations a kernel runs (the same rules as evaluate())."""
    if m.state is State.REJECTED:
        raise RejectedSpec(m.reason or "rejected by the framework")
    if m.dynamic or m.lower is None or m.upper is None:
        raise RejectedSpec("bounds are computed at run time; the clip cannot run without them")
    lo, hi = m.lower.value, m.upper.value
    all_nan = False
    if m.out_dtype.is_float and (m.lower.is_nan or m.upper.is_nan):
        if m.nan_bound is NanBound.REJECTED:
            raise RejectedSpec(m.reason or "a NaN bound is rejected")
        if m.nan_bound is NanBound.PROPAGATE:
            all_nan = True
        open_lo, open_hi = (0.0, 0.0) if m.nan_bound is NanBound.ZERO else (-math.inf, math.inf)
        lo = open_lo if m.lower.is_nan else lo
        hi = open_hi if m.upper.is_nan else hi
    order = effective_order(m, not all_nan and lo > hi, reading)
    sb = m.scale_bias
    nan_out = None
    if not all_nan and nan_rule(m) != RULE_PROPAGATE and m.dtype.is_float:
        nan_out = _nan_output(m, lo, hi, order is Order.MAX_WINS)
    return Plan(lo, hi, order is Order.MAX_WINS, all_nan, sb.scale if sb else None, sb.bias if sb else None,
                bool(sb and sb.fused), nan_out)


def _nan_output(m: Meaning, lo: float, hi: float, max_wins: bool) -> float:
    """What every NaN input gives under a replacing NaN-input rule: the rule's fill (the lower bound, the upper
    bound or +0) clipped in the meaning's order, with the dtype's own minimum/maximum (so zero signs are the
    kernels'), computed once per plan."""
    dt = m.out_dtype.np_dtype
    fill = {NanInput.TO_LOWER: lo, NanInput.TO_UPPER: hi}.get(m.nan_input, 0.0)
    f, lo_a, hi_a = (np.asarray(v, dtype=dt) for v in (fill, lo, hi))
    return float(np.minimum(hi_a, np.maximum(f, lo_a)) if max_wins else np.maximum(lo_a, np.minimum(f, hi_a)))


def nan_rule(m: Meaning) -> int:
    """The NaN-input rule a kernel applies (evaluate() replaces NaN inputs only when the result is a float)."""
    if not m.out_dtype.is_float:
        return RULE_PROPAGATE
    return {NanInput.TO_LOWER: RULE_TO_LOWER, NanInput.TO_ZERO: RULE_TO_ZERO,
            NanInput.TO_UPPER: RULE_TO_UPPER}.get(m.nan_input, RULE_PROPAGATE)


def reference_only(m: Meaning) -> bool:
    """Meanings the kernels refuse (BackendUnavailable): a ScaleBias together with per-element bounds or promotion.

    evaluate() itself gives those combinations no fast-path meaning (its ScaleBias path keeps the input dtype,
    its per-element path applies no ScaleBias); no dialect builds them.
    """
    return m.scale_bias is not None and (m.has_tensor_bounds or m.out_dtype != m.dtype)


def _not_run() -> BackendUnavailable:
    return BackendUnavailable("the kernels do not run a ScaleBias together with per-element bounds or promotion "
                              "(no dialect builds that meaning)", "backend")


def tensor_bounds(m: Meaning, reading: str | None = None) -> tuple[np.ndarray, np.ndarray, bool]:
    """evaluate()'s per-element bounds in the result dtype (a side without a tensor: its scalar, or the dtype's
    extreme when absent; a NaN element propagates) and whether max wins."""
    if m.state is State.REJECTED:
        raise RejectedSpec(m.reason or "rejected by the framework")
    if m.dynamic:
        raise RejectedSpec("bounds are computed at run time; the clip cannot run without them")
    dt = m.out_dtype

    def side(tb: Any, b: Any, extreme: float | int) -> np.ndarray:
        if tb is not None:
            return _bound_array(tb, dt)
        return np.asarray(extreme if b is None else b.value, dtype=dt.np_dtype)

    lo = side(m.lower_tensor, m.lower, -math.inf if dt.is_float else dt.lowest())
    hi = side(m.upper_tensor, m.upper, math.inf if dt.is_float else dt.highest())
    crossed = m.order is Order.REJECTED and bool(np.any(lo > hi))
    return lo, hi, effective_order(m, crossed, reading) is Order.MAX_WINS


_BOUND_ARRAYS: dict[tuple[int, str], np.ndarray] = {}


def _bound_array(tb: Any, dt: DType) -> np.ndarray:
    """tb.array(dt), converted once per TensorBound object (read-only): a large bound converts in seconds, and
    hashing its tuple of values would cost as much, so the memo is keyed by identity and dropped with the object."""
    k = (id(tb), dt.name)
    a = _BOUND_ARRAYS.get(k)
    if a is None:
        a = np.ascontiguousarray(tb.array(dt))
        a.flags.writeable = False
        _BOUND_ARRAYS[k] = a
        weakref.finalize(tb, _BOUND_ARRAYS.pop, k, None)
    return a


def clip_xp(xp: Any, m: Meaning, x: Any, reading: str | None = None) -> Any:
    """The clip on any array-API namespace `xp` (numpy, cupy, array_api_strict); x has m's dtype.

    evaluate()'s steps in array-API calls: ScaleBias or promotion, the NaN-input rule, then min/max in the
    meaning's order with scalar or per-element bounds.
    """
    if reference_only(m):
        raise _not_run()
    out_dt = getattr(xp, m.out_dtype.np_dtype.name)
    if m.has_tensor_bounds:
        lo_np, hi_np, max_wins = tensor_bounds(m, reading)
        lo = xp.reshape(xp.asarray(lo_np.ravel().tolist(), dtype=out_dt), lo_np.shape)
        hi = xp.reshape(xp.asarray(hi_np.ravel().tolist(), dtype=out_dt), hi_np.shape)
        return _min_max(xp, m, xp.astype(x, out_dt), lo, hi, max_wins)
    p = plan(m, reading)
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
    `nan_fix` (the NaN-input rules, whose one output app.kernels.cpu.plan computes). The order and the rule are
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
        raise _not_run()
    if m.has_tensor_bounds or m.out_dtype != m.dtype:
        return _clip_general(m, x, out, reading, threads)
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
    # The compiled kernels take the bounds as they are; np.clip below needs crossed bounds collapsed.
    bounds = (dt.np_dtype.type(p.lo), dt.np_dtype.type(p.hi))
    # min(hi, max(x, lo)) is np.clip(x, lo, hi) (NaN propagates); crossed bounds collapse to one value.
    lo_v, hi_v = p.lo, p.hi
    if not p.all_nan and lo_v > hi_v:
        lo_v = hi_v = hi_v if p.max_wins else lo_v
    lo = dt.np_dtype.type(lo_v)
    hi = dt.np_dtype.type(hi_v)
    scale = None if p.scale is None else np.float32(p.scale)
    bias = None if p.bias is None else np.float32(p.bias)
    nan_fix = p.nan_out is not None
    nanv = dt.np_dtype.type(p.nan_out if nan_fix else 0)

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

    n = flat_x.size
    if scale is not None and dt.np_dtype == np.float32 and not p.all_nan and n >= CHUNK_FUSED \
            and fused_kernel_numba() is not None:
        with _NUMBA_LOCK:
            fused_kernel_numba()(p.max_wins, nan_fix)(flat_x, flat_o, scale, bias, bounds[0], bounds[1], nanv)
        return out
    if scale is None and dt.np_dtype in NUMBA_PLAIN and not p.all_nan and n >= CHUNK_FUSED \
            and clip_kernel_numba() is not None:
        with _NUMBA_LOCK:
            one = dt.np_dtype.type(1)
            clip_kernel_numba()(p.max_wins, nan_fix)(flat_x, flat_o, one, one, bounds[0], bounds[1], nanv)
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
    """float16/bfloat16 on their uint16 patterns (app.kernels.half): one pass, bit-exact with evaluate()."""
    hp = half_plan(m.dtype.np_dtype, p.lo, p.hi, p.max_wins, p.all_nan, p.nan_out)
    xb, ob = flat_x.view(np.uint16), flat_o.view(np.uint16)
    sb = m.scale_bias
    n = xb.size
    if n >= CHUNK_FUSED and half_kernel_numba() is not None:
        if sb is not None and not p.all_nan and clip_scale_bias_16(m.dtype.name, sb, p.lo, p.hi, p.max_wins,
                                                                   p.nan_out, xb, ob, _NUMBA_LOCK):
            return out
        lut = table(hp, m.dtype.name, sb) if sb is not None else None
        with _NUMBA_LOCK:
            if clip_half_numba(hp, lut, xb, ob):
                return out
    if n <= 1 << 16:  # fewer elements than a table has entries: compute them directly
        t = xb if sb is None else scale_bias_bits(m.dtype.name, sb, xb)
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


def _run_spans(span: Any, n: int, sub: int, threads: int | None, elements: int | None = None) -> None:
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


def _clip_general(m: Meaning, x: np.ndarray, out: np.ndarray | None, reading: str | None,
                  threads: int | None) -> np.ndarray:
    """Per-element bounds or promotion (app.kernels.tensor): one compiled pass where the layout allows, else
    evaluate()'s ufuncs on chunks over the cores. The output has the broadcast shape and the result dtype."""
    dt = m.out_dtype.np_dtype
    if m.has_tensor_bounds:
        lo, hi, max_wins = tensor_bounds(m, reading)
    else:
        p = plan(m, reading)
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
        with _NUMBA_LOCK:
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

    _run_spans(span, rows, sub, threads, elements=out.size)
    return out
