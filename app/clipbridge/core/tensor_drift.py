"""compare() for per-element (tensor) bounds: the clip at each position is a scalar clip, so every distinct
(source min, source max, target min, target max) combination is compared once, as scalars, by the scalar
compare() app/clipbridge/core/drift.py passes in (so this module does not import drift: no import circle).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from clipbridge.core import exact
from clipbridge.core.errors import SpecError
from clipbridge.core.findings import Code, Finding, Severity
from clipbridge.core.meaning import Bound, Meaning
from clipbridge.core.numbers import same_value

MAX_TENSOR_BOUND = 4096  # elements of a tensor bound (and of the positions two meanings are compared at)
MAX_PAIR_COMPARES = 256  # distinct (source, target) bound pairs with different rules compared one by one


def check_tensor_bound_size(count: int, loc: str) -> None:
    """A tensor bound is compared position by position: its element count is capped (MAX_TENSOR_BOUND)."""
    if count > MAX_TENSOR_BOUND:
        raise SpecError(f"A tensor bound may have at most {MAX_TENSOR_BOUND} elements (each is compared as its own "
                        f"clip). Got: {count}", loc)


def _side_array(m: Meaning, side: str) -> np.ndarray:
    """One side of `m` as an object array of element indices into its tensor (-1: the scalar or open side)."""
    t = m.lower_tensor if side == "min" else m.upper_tensor
    if t is None:
        return np.full((), -1, dtype=np.int64)
    check_tensor_bound_size(len(t.values), side)
    return np.arange(len(t.values), dtype=np.int64).reshape(t.shape)


def _element_bound(m: Meaning, side: str, i: int) -> Bound | None:
    """The scalar Bound that side `side` of `m` has at element `i` of its tensor (the scalar Bound when i < 0)."""
    scalar, t = (m.lower, m.lower_tensor) if side == "min" else (m.upper, m.upper_tensor)
    if i < 0 or t is None:  # an absent side is unbounded (+-inf, or the integer type's extreme)
        if scalar is not None:
            return scalar
        return Bound(m.out_dtype.unbounded(side == "min"), None, (f"no {side}: unbounded",), default=True)
    v = t.values[i]
    given = t.given[i] if t.given is not None else v
    changed = not same_value(v, given)
    inf = isinstance(v, float) and math.isinf(v)
    return Bound(v, given, t.steps if changed else (), precision_loss=changed and not inf and m.out_dtype.is_float,
                 overflow=inf and not exact.is_inf(given), rounded=changed and not m.out_dtype.is_float)


def _scalar_at(m: Meaning, lo: int, hi: int) -> Meaning:
    """The scalar clip `m` computes at a position whose bounds are elements lo and hi of its tensors."""
    return replace(m, lower=_element_bound(m, "min", lo), upper=_element_bound(m, "max", hi), lower_tensor=None,
                   upper_tensor=None)


def _position_text(idx: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(i) for i in idx) + "]"


def compare_tensor(src: Meaning, tgt: Meaning, compare: Callable[[Meaning, Meaning], list[Finding]],
                   notes: list[Finding]) -> list[Finding]:
    """compare() for per-element bounds (see the module docstring); `notes`: the target's engine notes as
    findings, each listed once."""
    sides = [_side_array(src, "min"), _side_array(src, "max"), _side_array(tgt, "min"), _side_array(tgt, "max")]
    try:
        shape = np.broadcast_shapes(*(a.shape for a in sides))
    except ValueError:
        raise SpecError("The source's and the target's tensor bounds do not broadcast together. Got: "
                        + ", ".join(str(list(a.shape)) for a in sides), "min") from None
    check_tensor_bound_size(math.prod(shape), "min")
    grid = np.stack([np.broadcast_to(a, shape).reshape(-1) for a in sides], axis=1)
    tensors = [src.lower_tensor, src.upper_tensor, tgt.lower_tensor, tgt.upper_tensor]

    def value_key(row: list[int]) -> tuple:
        # Positions with equal bound values (NaN equal to NaN) are one scalar comparison.
        vals = [None if t is None else t.values[i] for t, i in zip(tensors, row)]
        return tuple("nan" if isinstance(v, float) and math.isnan(v) else v for v in vals)

    first: dict[tuple, tuple[tuple[int, ...], int]] = {}
    for pos, row in enumerate(grid.tolist()):
        first.setdefault(value_key(row), (tuple(row), pos))
    grouped: dict[tuple, tuple[Finding, int]] = {}
    skipped = 0
    compared = 0
    for key, pos in first.values():
        where = _position_text(tuple(int(i) for i in np.unravel_index(pos, shape))) if shape else "[]"
        a, b = _scalar_at(src, key[0], key[1]), _scalar_at(tgt, key[2], key[3])
        if _same_rules(a, b):
            continue  # the same scalar function at this position: nothing but the target's engine notes
        if compared >= MAX_PAIR_COMPARES:
            skipped += 1
            continue
        compared += 1
        found = compare(a, b)
        for f in found:
            # One finding per code and kind ("The effective lower bound changes"), whatever the values.
            gkey = (f.code, f.severity, f.message if f.code is Code.ENGINE_BEHAVIOUR else f.message.split(":")[0])
            if gkey in grouped:
                grouped[gkey] = (grouped[gkey][0], grouped[gkey][1] + 1)
                continue
            if f.code is not Code.ENGINE_BEHAVIOUR:
                f = Finding(f.code, f.severity, f"{f.message} (at position {where})",
                            f"at {where}: {f.source_behaviour}" if f.source_behaviour else "",
                            f"at {where}: {f.target_behaviour}" if f.target_behaviour else "", f.witness)
            grouped[gkey] = (f, 0)
    out = []
    for f, more in grouped.values():
        if more and f.code is not Code.ENGINE_BEHAVIOUR:
            f = replace(f, message=f"{f.message} and at {more} other distinct bound pair{'s' if more > 1 else ''}")
        out.append(f)
    if skipped:
        out.append(Finding(Code.TENSOR_BOUNDS, Severity.WARNING, f"{skipped} more distinct bound pairs have different "
                           f"rules in the two meanings and were not compared one by one (at most "
                           f"{MAX_PAIR_COMPARES} are)", src.describe(), tgt.describe()))
    seen = {f.message for f in out if f.code is Code.ENGINE_BEHAVIOUR}
    return out + [n for n in notes if n.message not in seen]


def _same_rules(a: Meaning, b: Meaning) -> bool:
    """Two scalar meanings that compute one function: equal bounds (NaN equal to NaN) and equal rules."""
    def rules(m: Meaning) -> tuple:
        return (m.dtype, m.out_dtype, m.order, m.nan_input, m.nan_bound, m.scale_bias, m.state)
    return (rules(a) == rules(b) and same_value(a.lo, b.lo) and same_value(a.hi, b.hi))
