"""One model's work: the scan's clip sites and the diff across the engines, exactly as `clipbridge scan` and
`clipbridge diff --format json` compute them (clipbridge.scan.report.scan, clipbridge.diff.report.diff, unchanged).

`run_one(task)` is module-level and takes and returns plain values, so that a sandbox worker or a Ray task runs
it; its answer is the model's line of results.jsonl (without `cached`). `warm(w)` imports what a model will need,
so that a worker started ahead of its first model has done that by then.

Every engine runs on `Task.threads` threads, unpinned (default 1; app/clipbridge/engines/threads.py): a fleet's parallelism is
across models, one worker per core, and single-threaded engines neither fight over the cores nor make an answer
depend on the host's core count or --workers (the thread count never changed an answer on the generated registry:
tests/fleet/test_engine_threads.py). For the same reason each diff keeps its engine runs on its worker's thread
(run.serial, not the plain runs on a second thread that `clipbridge diff` uses for one model's latency:
app/clipbridge/diff/plain.py); the answer is the same either way (tests/diff/test_plain_threads.py). The settings that ran
are in each line's `engines[].settings`."""

from __future__ import annotations

import hashlib
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx

from clipbridge.core.errors import ClipBridgeError
from clipbridge.diff import engines as diff_engines
from clipbridge.diff import report, run
from clipbridge.diff.engines import installed
from clipbridge.engines import heap
from clipbridge.engines.threads import set_engine_threads
from clipbridge.fleet import envs
from clipbridge.fleet.sources import sha256_after
from clipbridge.fleet.store import dumps
from clipbridge.scan.external import read_weightless
from clipbridge.scan.report import scan, sniff, worst_status

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
    threads: int | None = 1  # each engine's threads in the worker (None: the engines' defaults)
    memory_mb: int | None = None  # what the model's job may take (`fleet run --memory`); its diff captures half

    def budget(self) -> int | None:
        """The diff's memory budget (clipbridge.diff.passes): half of what the job may take, as the server's is
        below its sandbox's per-call memory; None (a task made elsewhere): the diff's own default."""
        return None if self.memory_mb is None else self.memory_mb * 2**20 // 2


@dataclass(frozen=True)
class Warm:
    """What a worker's warm-up prepares: the run's engines, and their threads."""

    engines: tuple[str, ...]
    threads: int | None = 1


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
    """Each engine as the diff reports it, less its observer effect: the settings say how it ran (threads too)."""
    return [{"name": e["name"], "version": e["version"], "precision": e["precision"], "settings": e["settings"]}
            for e in body["engines"]]


def record(task: Task, body: dict[str, Any] | None, scanned: dict[str, Any] | None, error: str | None,
           seconds: float) -> dict[str, Any]:
    """The results.jsonl line: the diff body's verdict, first divergence and nodes (the findings) as they are."""
    return {
        "model": task.name, "sha256": task.sha256,
        "verdict": "error" if error else body["verdict"] if body else None,  # None: an IR, scanned only
        "first_divergence": body["first_divergence"] if body else None,
        "findings": body["nodes"] if body else [],
        "engines": _engines(body) if body else [{"name": e, "version": None, "precision": task.precision,
                                                 "settings": None} for e in task.engines],
        "scan": scanned, "cached": False, "seconds": round(seconds, 4), "error": error,
    }


MEMORY_OPTION = "fleet run --memory"


def _with_memory_hint(message: str, task: Task) -> str:
    """An engine out of memory (clipbridge.engines.errors' kind) names the setting that gives a job more: the
    worker's cap, not the model, is what a 2.2 GB model ran into (docs/fleet.md)."""
    if "out of memory" not in message or task.memory_mb is None:
        return message
    return f"{message} (a model's job may take {task.memory_mb} MiB: raise {MEMORY_OPTION})"


def run_one(task: Task) -> dict[str, Any]:
    """Scan and diff one model; an error the model causes is recorded, never raised (the run goes on)."""
    start = time.perf_counter()
    body = scanned = None
    set_engine_threads(task.threads)
    try:
        path = Path(task.path)
        # As `clipbridge diff` reads it: external data beside the model stays in its files (an OnDisk model, which
        # pickles with its folder to a pinned engine's process); each engine reads it there (issue 46).
        model = read_weightless(path)
        if sniff(model.raw) == "onnx" and \
                sha256_after(hashlib.sha256(model.raw), model.data_files) != task.sha256:
            raise ClipBridgeError("the model changed while the run was going on; run again", "model")
        scanned = _scan_part(model.raw, path)  # as `clipbridge scan` reads it: external tensors unread
        if scanned["format"] == "onnx":  # the engines run ONNX: an IR is scanned only (docs/fleet.md)
            npz = Path(task.inputs).read_bytes() if task.inputs else None
            # The edge values (issue 44): a registry is diffed for its clips; `clipbridge diff` reports the same pass
            # as its `edge` section (the CLI's own verdict is on an ordinary sample).
            opts = run.Options(task.engines, task.precision, None, None, task.seed, sample="edge",
                               memory=task.budget(), memory_option=MEMORY_OPTION)
            body, _ = report.diff(envs.executor(task.envs, task.threads), model.engines, npz, opts)
        error = None
    except ClipBridgeError as exc:
        error = _with_memory_hint(exc.message, task)[:MAX_ERROR]
    except Exception as exc:  # a bug or an engine's own failure: recorded for this model, the run goes on
        error = f"{type(exc).__name__}: {exc}"[:MAX_ERROR]
        traceback.print_exc()
    heap.release()  # the model's freed weights back to the system before this worker waits for the next one
    result = record(task, body, scanned, error, time.perf_counter() - start)
    try:
        dumps(result)  # a value JSON cannot hold (a bare NaN) would stop the run at the journal: an error here
    except ValueError as exc:
        result = record(task, None, scanned, f"the result is not JSON: {exc}"[:MAX_ERROR], result["seconds"])
    return result


def warm(w: Warm) -> float:
    """Prepare what a model will need (unpickling this function imported the diff and the scan; the run's engines
    are imported and primed here), so that a worker started ahead of its first model has done it meanwhile; its
    seconds, for the caller."""
    start = time.perf_counter()
    set_engine_threads(w.threads)
    _prime(w.engines)
    return time.perf_counter() - start


def _prime(engines: tuple[str, ...]) -> None:
    """What a process pays once, at its first model, paid here instead: onnx's operator schemas (the checker's
    first call), each engine's first session or compile (OpenVINO's CPU plugin sets itself up at its first compile)
    and its version lookup. One plain run of a one-node model per engine: ~40 ms a worker taken off its first
    model, which for a spare started ahead is off the run's critical path (docs/performance.md, fleet's fifth
    pass). A failure is ignored: the first model's own run says what is wrong, for that model."""
    tiny = _tiny_model()
    try:
        onnx.checker.check_model(tiny)
    except Exception:  # noqa: BLE001 - see the docstring
        pass
    feeds = {"x": np.zeros((1, 4), dtype=np.float32)}
    for engine in engines:
        if installed(engine):  # a missing engine is the first model's error to report, not the warm-up's
            try:
                diff_engines.run(engine, tiny, feeds, [], "model", False)
            except Exception:  # noqa: BLE001 - see the docstring
                pass


def _tiny_model() -> bytes:
    """Relu on a 1x4 float32 input: the smallest model every engine compiles."""
    g = onnx.helper.make_graph([onnx.helper.make_node("Relu", ["x"], ["y"])], "prime",
                               [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 4])],
                               [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 4])])
    return onnx.helper.make_model(g, opset_imports=[onnx.helper.make_opsetid("", 17)], ir_version=8).SerializeToString()
