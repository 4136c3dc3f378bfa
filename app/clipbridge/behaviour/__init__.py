"""The behaviour table: every fact clipbridge knows about how an engine or a specification computes (NaN through
each op, bound handling, rounding, saturation, float-to-int casts, the precision an engine runs a type in, fused
kernels, converter lowerings), one row each, with its source and the test that measures it.

What lives here: `rows.Row` (one fact), the rows themselves (`nan_rows`, `number_rows`, `lowering_rows`: data
only) and the accessors (`row`, `rows_for`, `reading`, `states`). Who may import it: every layer above core
(dialects, scan, diff, fix, chain, the engine registry); it imports only the standard library and core
(tests/test_architecture.py). Diff causes, fix rules, chain lowering rules and scan's engine readings all read
their facts from here, by row id, so two of them cannot state one fact two ways (tests/behaviour/).
"""

from clipbridge.behaviour.rows import ENGINES, ROWS, Row, reading, row, rows_for, rows_for_op, states

__all__ = ["ENGINES", "ROWS", "Row", "reading", "row", "rows_for", "rows_for_op", "states"]
