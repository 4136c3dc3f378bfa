"""Causes beyond clips (issue 45 item 2): NaN and +-inf through Softmax/LogSoftmax, max-like reductions and
Max/Min, float-to-int Casts of NaN, +-inf and out-of-range values, and the accumulation order of a sum
(clipbridge.diff.accumulation).

Each rule reads one differing element of a node that is not clip-like (its inputs agree, its output does not):
the node's op and attributes, its captured inputs, and each engine's output. Like the clip rules
(clipbridge.diff.causes) it names a cause only where the condition holds at the witness (the input's row or
window holds NaN or an infinity, the value is beyond the integer type) *and* each engine's output is one of the
readings measured for that op (tests/diff/test_op_causes.py re-measures them on the real engines every run).
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
from onnx import helper

from clipbridge import behaviour
from clipbridge.diff import accumulation
from clipbridge.diff.sites import Site, axis_of, pooled, reduced, row_of

OPS = ("Softmax", "LogSoftmax", "MaxPool", "ReduceMax", "ReduceMin", "ArgMax", "ArgMin", "Max", "Min", "Cast",
       *accumulation.OPS)  # the ops a rule here reads; any other keeps not-a-clip without loading the model
Found = tuple[str, str | None]  # (cause, detail)
INT32 = (-(2 ** 31), 2 ** 31 - 1)


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


def _witnessed(site: Site, idx: tuple[int, ...], readings: Callable[[float], bool]) -> bool:
    """Every engine's output at the witness is one of the rule's measured readings."""
    return all(readings(float(o[idx])) for o in site.outs.values())


@behaviour.states("softmax-nan-row")
def nan_through_softmax(site: Site, idx: tuple[int, ...]) -> Found | None:
    """Row softmax-nan-row: the element's row holds NaN or +inf and each engine gave NaN or what the finite
    elements of such a row give on the engine that keeps them (0; LogSoftmax: -inf)."""
    if site.op not in ("Softmax", "LogSoftmax") or site.first[0] is None:
        return None
    rank = site.first[0].ndim
    coerced = site.opset < 13
    row = row_of(site, idx, axis_of(int(site.attrs.get("axis", 1 if coerced else -1)), rank), coerced)
    if not (np.isnan(row).any() or np.isposinf(row).any()):
        return None
    finite = 0.0 if site.op == "Softmax" else -math.inf
    if _witnessed(site, idx, lambda v: math.isnan(v) or v == finite):
        return behaviour.row("softmax-nan-row").cause, None
    return None


def _arg_readings(row: np.ndarray, largest: bool) -> set[int]:
    """What Arg* of a row holding NaN returned on the engines: the index of a NaN (numpy, onnx.reference), or
    the index of the extreme of the whole row's numbers or of a run of it between NaNs (a SIMD compare drops a
    NaN, and with it what it was compared against)."""
    nans = np.flatnonzero(np.isnan(row))
    out = {int(i) for i in nans}
    cuts = [-1, *nans.tolist(), row.size]
    runs = [(a + 1, b) for a, b in zip(cuts, cuts[1:]) if b > a + 1] + [(0, row.size)]
    for a, b in runs:
        part = np.where(np.isnan(row[a:b]), -np.inf if largest else np.inf, row[a:b])
        out.add(a + int(np.argmax(part) if largest else np.argmin(part)))
    return out


@behaviour.states("max-like-nan", "maxpool-nan")
def nan_through_max(site: Site, idx: tuple[int, ...]) -> Found | None:
    """Rows max-like-nan and maxpool-nan: a window, row or operand holding NaN, each engine's output NaN or a
    number of the window (for Arg*: an index _arg_readings allows)."""
    x = site.first[0] if site.first else None
    if x is None or x.dtype.kind != "f":
        return None
    if site.op in ("MaxPool", "ReduceMax", "ReduceMin"):
        window = pooled(site, idx) if site.op == "MaxPool" else reduced(site, idx)
        if not np.isnan(window).any():
            return None
        ok = _witnessed(site, idx, lambda v: math.isnan(v) or bool((window == v).any()))
    elif site.op in ("ArgMax", "ArgMin"):
        axis = axis_of(int(site.attrs.get("axis", 0)), x.ndim)
        at = idx if int(site.attrs.get("keepdims", 1)) else (*idx[:axis], 0, *idx[axis:])
        row = row_of(site, at, axis, False)
        if not np.isnan(row).any():
            return None
        want = _arg_readings(row, site.op == "ArgMax")
        ok = _witnessed(site, idx, lambda v: int(v) in want)
    elif site.op in ("Max", "Min"):
        shape = next(iter(site.outs.values())).shape
        vals = [float(np.broadcast_to(t, shape)[idx]) for t in site.first if t is not None]
        if not any(math.isnan(v) for v in vals):
            return None
        ok = _witnessed(site, idx, lambda v: any(_same(v, w) for w in vals + [math.nan]))
    else:
        return None
    return (behaviour.row("max-like-nan").cause, None) if ok else None


@behaviour.states("cast-out-of-range")
def cast_out_of_range(site: Site, idx: tuple[int, ...]) -> Found | None:
    """Row cast-out-of-range: a float no value of the integer type holds, each engine's output one of the
    row's readings (the type's extremes, INT32's, the truncation or its wrap)."""
    x = site.first[0] if site.first else None
    if site.op != "Cast" or x is None or x.dtype.kind != "f":
        return None
    dt = np.dtype(helper.tensor_dtype_to_np_dtype(int(site.attrs["to"])))
    if dt.kind not in "iu":
        return None
    v = float(x[idx])
    info = np.iinfo(dt)
    wide = dt.itemsize == 8  # row cast-out-of-range: for an int64, the int32 range decides too
    lo, hi = (INT32 if wide else (int(info.min), int(info.max)))
    if math.isfinite(v) and lo <= math.trunc(v) <= hi and info.min <= math.trunc(v) <= info.max:
        return None
    readings = {0, int(info.min), int(info.max), *INT32}
    if math.isfinite(v):
        t = math.trunc(v)
        readings |= {t, (t - int(info.min)) % (1 << (8 * dt.itemsize)) + int(info.min)}
    if _witnessed(site, idx, lambda g: int(g) in readings):
        return behaviour.row("cast-out-of-range").cause, None
    return None


def _wrap32(v: int) -> int:
    """The int64 value as int32 holds its low 32 bits (two's complement)."""
    return (v + 2 ** 31) % 2 ** 32 - 2 ** 31


@behaviour.states("openvino-int64-as-int32")
def int64_as_int32(site: Site, idx: tuple[int, ...]) -> Found | None:
    """Row openvino-int64-as-int32: an int64 value beyond int32 on one engine, its wrap on another, is
    `inference-precision` with both types named."""
    outs = {e: int(o[idx]) for e, o in site.outs.items() if o.dtype == np.int64}
    if len(outs) != len(site.outs):
        return None
    wide = [v for v in outs.values() if not INT32[0] <= v <= INT32[1]]
    if not wide or any(v not in (wide[0], _wrap32(wide[0])) for v in outs.values()):
        return None
    narrow = sorted(e for e, v in outs.items() if v != wide[0])
    kept = sorted(e for e, v in outs.items() if v == wide[0])
    cause = behaviour.row("openvino-int64-as-int32").cause
    return cause, (f"{', '.join(narrow)} held int64 in int32 (the value wrapped to its low 32 bits); "
                   f"the model's type is int64, {', '.join(kept)} kept int64")


RULES: tuple[Callable[[Site, tuple[int, ...]], Found | None], ...] = (
    nan_through_softmax, nan_through_max, cast_out_of_range, accumulation.accumulation_order, int64_as_int32)


def element(site: Site, idx: tuple[int, ...]) -> Found | None:
    for rule in RULES:
        try:
            found = rule(site, idx)
        except (KeyError, IndexError, ValueError, TypeError, AttributeError):  # a form a rule does not read: no cause
            found = None
        if found:
            return found
    return None


def node_cause(site: Site, mask: np.ndarray, limit: int = 256) -> tuple[str, int, str | None,
                                                                         dict[str, int]] | None:
    """(cause, flat index of its witness, detail, counts) where a rule explains every differing element
    classified (at most `limit`); None where one is unexplained (the caller says not-a-clip)."""
    shape = next(iter(site.outs.values())).shape
    counts: dict[str, int] = {}
    first: dict[str, tuple[int, str | None]] = {}
    for flat in np.flatnonzero(mask.reshape(-1))[:limit]:
        found = element(site, tuple(int(i) for i in np.unravel_index(flat, shape)))
        if found is None:
            return None
        counts[found[0]] = counts.get(found[0], 0) + 1
        first.setdefault(found[0], (int(flat), found[1]))
    if not counts:
        return None
    top = max(counts, key=lambda k: counts[k])
    return top, first[top][0], first[top][1], counts
