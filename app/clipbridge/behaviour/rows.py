"""The accessors of the behaviour table: every row by id, by engine, by op; the reading a consumer keys on; and
`states`, which marks a consumer's rule with the rows it implements (checked at import)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from clipbridge.behaviour.lowering_rows import LOWERING
from clipbridge.behaviour.model import ENGINES, SPEC, Row
from clipbridge.behaviour.nan_rows import NAN
from clipbridge.behaviour.number_rows import NUMBERS

ROWS: dict[str, Row] = {}
for _r in (*NAN, *NUMBERS, *LOWERING):
    if _r.id in ROWS:  # one fact, one row: a second row of one id is a table error, caught on import
        raise ValueError(f"behaviour row {_r.id!r} appears twice")
    ROWS[_r.id] = _r

F = TypeVar("F", bound=Callable)

__all__ = ["ENGINES", "ROWS", "Row", "SPEC", "reading", "row", "rows_for", "rows_for_op", "states"]


def row(row_id: str) -> Row:
    """The row of that id (a KeyError names an id no row has: a consumer citing a row that is gone)."""
    return ROWS[row_id]


def rows_for(engine: str) -> tuple[Row, ...]:
    """Every row about `engine` (the engine registry's per-engine interface reads its rows here)."""
    return tuple(r for r in ROWS.values() if engine in r.engines)


def rows_for_op(op: str) -> tuple[Row, ...]:
    """Every row about the ONNX (or converter) op `op`."""
    return tuple(r for r in ROWS.values() if op in r.ops)


def reading(row_id: str, engine: str, default: str = "propagate") -> str:
    """The row's reading for `engine` as the code keys on it ("propagate" where the row says nothing of it)."""
    return ROWS[row_id].reading.get(engine, default)


def states(*row_ids: str) -> Callable[[F], F]:
    """Mark a consumer's rule (a diff cause, a fix rewrite, a chain rule) with the rows it implements; an id no
    row has fails at import, so a rule cannot cite a fact the table lost."""
    missing = [i for i in row_ids if i not in ROWS]
    if missing or not row_ids:
        raise KeyError(f"no behaviour row {missing or '(none given)'}")

    def mark(fn: F) -> F:
        fn.rows = row_ids  # type: ignore[attr-defined]
        return fn
    return mark
