"""The one plan every kernel runs: what a meaning reduces to at run time, computed once per call.

A scalar-bound meaning becomes a `Plan` (an optional scale-bias, then min/max in a fixed order, and the one output
of a NaN input under a replacing rule); per-element bounds become two arrays and an order (`tensor_bounds`). The
rules are evaluate()'s (clipbridge.core.evaluate), with code of their own; the tests hold the kernels to it.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np

from clipbridge.core.dtypes import DType
from clipbridge.core.errors import BackendUnavailable, RejectedSpec
from clipbridge.core.meaning import Meaning, NanBound, NanInput, Order, State, effective_order

# Which NaN-input rule a kernel applies: evaluate()'s np.where(isnan(t), fill, t) before the min/max.
RULE_PROPAGATE, RULE_TO_LOWER, RULE_TO_ZERO, RULE_TO_UPPER = 0, 1, 2, 3

# The dtypes with native arithmetic in numba and in CUDA (float16/bfloat16 run on their patterns: clipbridge.kernels.half).
FULL_WIDTH = frozenset(np.dtype(n) for n in ("float32", "float64", "int8", "int16", "int32", "int64", "uint8",
                                              "uint16", "uint32", "uint64"))


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


def plan(m: Meaning) -> Plan:
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
    order = effective_order(m, not all_nan and lo > hi)
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


def not_run() -> BackendUnavailable:
    """The refusal of a reference_only() meaning."""
    return BackendUnavailable("the kernels do not run a ScaleBias together with per-element bounds or promotion "
                              "(no dialect builds that meaning)", "backend")


def tensor_bounds(m: Meaning) -> tuple[np.ndarray, np.ndarray, bool]:
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
    return lo, hi, effective_order(m, crossed) is Order.MAX_WINS


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
