"""min > max in preserve mode, the same for every emitter: when the source's bounds cross, every output is the one
value its order gives, so both bounds are written as that value wherever the target would compute another one or
refuses min > max. Each emitter passes its own message (the target's words for the rewrite)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from numbers import Real
from typing import Any

from clipbridge.core.findings import Code, Notes, Severity
from clipbridge.core.meaning import Meaning, Order

# The note's text: fixed, or made from the value both bounds were written as.
Message = str | Callable[[Any], str]


def values_cross(values: Sequence[Any]) -> bool:
    """The lower value exceeds the upper one (None: an open side, NaN, a list: a tensor side never cross)."""
    lo, hi = values
    # Python orders ints, floats and Fractions exactly against each other; NaN compares False.
    return isinstance(lo, Real) and isinstance(hi, Real) and bool(lo > hi)


def source_value(src: Meaning, values: Sequence[Any]) -> Any:
    """Where min > max every output is min under min-wins, max(lo, min(x, hi)), and max under max-wins."""
    return values[0] if src.order is Order.MIN_WINS else values[1]


def collapse_crossed(src: Meaning, values: Sequence[Any], notes: Notes, target_gives: Order | None,
                     message: Message) -> list[Any]:
    """Crossed bounds (Meaning.crossed, or the values written for them: a NaN bound read as 0 can cross) under a
    min-wins or max-wins source: both written as the value the source gives, with a MIN_GREATER_THAN_MAX note,
    where the target gives the other one or must not hold min > max (`target_gives` None). Else `values`."""
    out = list(values)
    if src.order not in (Order.MIN_WINS, Order.MAX_WINS) or src.order is target_gives:
        return out  # a rejected order never reaches an emitter (resolve refuses min > max)
    if not (src.crossed or values_cross(out)):
        return out
    pick = source_value(src, out)
    notes.add(Code.MIN_GREATER_THAN_MAX, Severity.INFO, message if isinstance(message, str) else message(pick))
    return [pick, pick]
