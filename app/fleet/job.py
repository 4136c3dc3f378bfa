"""One model's work: the scan's clip sites and the diff across the engines, exactly as `clipbridge scan` and
`clipbridge diff --format json` compute them (app.scan.report.scan, app.diff.report.diff, unchanged).

`run_one(task)` is module-level and takes and returns plain values, so that a sandbox worker or a Ray task runs
it; its answer is the model's line of results.jsonl (without `cached`)."""

from __future__ import annotations

import hashlib
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.errors import ClipBridgeError
from app.diff import report, run
from app.fleet import envs
from app.fleet.store import dumps
from app.scan.report import scan, sniff, worst_status

MAX_ERROR = 600  # characters of an error kept in results.jsonl


@dataclass(frozen=True)
class Task:
    """What a worker needs: paths are absolute (workers start in an empty working directory)."""

    name: str
    path: str
    sha256: str
    inputs: str | None
    engines: tuple[str, ...]
    precision: str
    seed: int
    envs: dict[str, str] = field(default_factory=dict)  # engine -> the interpreter of its own environment


def _scan_part(data: bytes, path: Path) -> dict[str, Any]:
    """The scan's clip sites in brief: their count, the worst status across the default targets, the clip-like ops."""
    weights = None
    if sniff(data) == "openvino-ir" and path.with_suffix(".bin").is_file():
        weights = path.with_suffix(".bin").read_bytes()
    result = scan(data, weights)
    body = result.to_json()
    return {"format": body["format"], "clips": body["summary"]["clips"], "status": worst_status(result),
            "clip_like": len(body.get("clip_like") or [])}


def _engines(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"name": e["name"], "version": e["version"], "precision": e["precision"]} for e in body["engines"]]


def record(task: Task, body: dict[str, Any] | None, scanned: dict[str, Any] | None, error: str | None,
           seconds: float) -> dict[str, Any]:
    """The results.jsonl line: the diff body's verdict, first divergence and nodes (the findings) as they are."""
    return {
        "model": task.name, "sha256": task.sha256,
        "verdict": "error" if error else body["verdict"] if body else "scanned",
        "first_divergence": body["first_divergence"] if body else None,
        "findings": body["nodes"] if body else [],
        "engines": _engines(body) if body else [{"name": e, "version": None, "precision": task.precision}
                                                for e in task.engines],
        "scan": scanned, "cached": False, "seconds": round(seconds, 4), "error": error,
    }


def run_one(task: Task) -> dict[str, Any]:
    """Scan and diff one model; an error the model causes is recorded, never raised (the run goes on)."""
    start = time.perf_counter()
    body = scanned = None
    try:
        path = Path(task.path)
        data = path.read_bytes()
        if hashlib.sha256(data).hexdigest() != task.sha256 and sniff(data) == "onnx":
            raise ClipBridgeError("the model changed while the run was going on; run again", "model")
        scanned = _scan_part(data, path)
        if scanned["format"] == "onnx":  # the engines run ONNX: an IR is scanned only (docs/fleet.md)
            npz = Path(task.inputs).read_bytes() if task.inputs else None
            opts = run.Options(task.engines, task.precision, None, None, task.seed)
            body, _ = report.diff(envs.executor(task.envs), data, npz, opts)
        error = None
    except ClipBridgeError as exc:
        error = exc.message[:MAX_ERROR]
    except Exception as exc:  # a bug or an engine's own failure: recorded for this model, the run goes on
        error = f"{type(exc).__name__}: {exc}"[:MAX_ERROR]
        traceback.print_exc()
    result = record(task, body, scanned, error, time.perf_counter() - start)
    try:
        dumps(result)  # a value JSON cannot hold (a bare NaN) would stop the run at the journal: an error here
    except ValueError as exc:
        result = record(task, None, scanned, f"the result is not JSON: {exc}"[:MAX_ERROR], result["seconds"])
    return result
