"""Which emitted artifacts a popular runtime cannot run: a table derived by running them, not written by hand.

`app/clipbridge/data/runtime_support.json` is written by `python -m tests.engines.sweep --write`, which loads and runs
every artifact clipbridge emits (ONNX opset x dtype x which bounds are given; OpenVINO Clamp-1 x dtype x shape)
in the installed onnxruntime and openvino (CPU). tests/engines/test_runtime_support.py fails when the installed
engines disagree with it. A translation whose artifact an engine cannot run carries an `engine-behaviour`
finding naming the runtime, its version, the op version and the dtype.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from clipbridge.core.meaning import EngineNote

TABLE_PATH = Path(__file__).resolve().parents[2] / "data" / "runtime_support.json"


@lru_cache(maxsize=1)
def table() -> dict[str, Any]:
    """The packaged table (empty when it is missing: nothing is claimed then)."""
    try:
        return json.loads(TABLE_PATH.read_text())
    except FileNotFoundError:
        return {"runtimes": [], "checked": [], "cannot_run": []}


def cannot_run(runtime: str, op_version: str, dtype: str, bounds: str = "both") -> dict[str, Any] | None:
    """The table's entry when `runtime` cannot run this op version and dtype with these bounds given."""
    for row in table()["cannot_run"]:
        if (row["runtime"], row["op_version"], row["dtype"]) == (runtime, op_version, dtype) and \
                bounds in row["bounds"]:
            return row
    return None


def _first_runnable(runtime: str, dtype: str, after: str, bounds: str) -> str | None:
    """The first op version past `after` that the runtime was seen to run for this dtype."""
    for row in table()["checked"]:
        if row["runtime"] == runtime and dtype in row["dtypes"] and _since(row["op_version"]) > _since(after) \
                and not cannot_run(runtime, row["op_version"], dtype, bounds):
            return row["op_version"]
    return None


def _since(op_version: str) -> int:
    tail = op_version.rsplit("-", 1)[-1]
    return int(tail) if tail.isdigit() else 0


def notes_onnx(op_version: str, dtype: str, has_min: bool, has_max: bool) -> tuple[EngineNote, ...]:
    """An engine note when onnxruntime (CPU) cannot load or run the ONNX Clip clipbridge emits for this."""
    bounds = "both" if has_min and has_max else ("min" if has_min else ("max" if has_max else "none"))
    return _notes("onnxruntime", op_version, dtype, bounds)


def notes_openvino(dtype: str, op_version: str) -> tuple[EngineNote, ...]:
    """An engine note when the openvino CPU plugin cannot compile or run the Clamp-1 IR for this dtype."""
    return _notes("openvino", op_version, dtype, "both")


@lru_cache(maxsize=None)  # a few hundred keys at most; the table is read once (table())
def _notes(runtime: str, op_version: str, dtype: str, bounds: str) -> tuple[EngineNote, ...]:
    row = cannot_run(runtime, op_version, dtype, bounds)
    if row is None:
        return ()
    nxt = _first_runnable(runtime, dtype, op_version, bounds)
    hint = f"; {nxt} runs it" if nxt else ""
    opsets = row.get("opsets") or []
    span = f" (opset {opsets[0]}..{opsets[-1]})" if len(opsets) > 1 else (f" (opset {opsets[0]})" if opsets else "")
    text = (f"{runtime} {row['version']} ({row['device']}) cannot run this artifact: {op_version}{span} with "
            f"{dtype} fails: {row['reason']}. The artifact is valid; deploy it on another runtime{hint}.")
    return (EngineNote(f"{runtime} {row['version']} {row['device']}", text, refuses=True),)


def summary() -> dict[str, Any]:
    """The table as /v1/dialects lists it."""
    t = table()
    return {"runtimes": t["runtimes"], "cannot_run": t["cannot_run"], "checked": t["checked"],
            "refuses_non_finite": t.get("refuses_non_finite", [])}
