"""Run a model on one engine, in a sandboxed child (clipbridge.engines.sandbox.run_isolated calls these module-level functions).

The proof's runs are the diff's (clipbridge.diff.engines); this module times the original against the written model,
each loaded through its engine's registry entry (clipbridge.engines.runtimes), as the diff loads it. Every run is
configured by clipbridge.engines.config: precision "model" pins each engine to the model's own float type,
"deployed" takes the engine's defaults (OpenVINO: bf16 on a CPU with avx512_bf16). An engine that refuses the
model raises EngineRefused with the engine's own message, which the API turns into a 422 naming `model`.
"""

from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np

from clipbridge.core.ondisk import folder_of
from clipbridge.engines import heap
from clipbridge.engines.errors import reduced
from clipbridge.engines.runtimes import registry
from clipbridge.core.errors import ArtifactError

Feeds = dict[str, np.ndarray]


class EngineRefused(ArtifactError):
    """An engine could not load or run the model; the message quotes the engine."""


def _refused(engine: str, exc: Exception, what: str, model_bytes: bytes = b"") -> EngineRefused:
    """The engine's failure, reduced (clipbridge.engines.errors: its own text may quote what it read)."""
    return reduced(EngineRefused, engine, f"cannot run the {what}", exc, model_bytes)  # type: ignore[return-value]


def _load(engine: str, model_bytes: bytes, precision: str, what: str) -> Callable[[Feeds], list[np.ndarray]]:
    """The engine's registry entry loads the model (as the diff's runs do); the call returns its outputs in order."""
    rt = registry.get(engine)
    if rt is None or rt.load is None:
        raise EngineRefused(f"{engine!r} is not an engine that runs a whole model; choose from "
                            f"{', '.join(registry.names('diff'))}", "engine")
    try:
        session = rt.load(model_bytes, precision)
    except Exception as exc:  # each engine raises its own types; the message is what the user needs
        raise _refused(engine, exc, what, model_bytes) from None
    return lambda feeds: list(session.run(feeds, False)[0].values())  # timed: no kernel read-back


def time_pair(engine: str, original: bytes, written: bytes, feeds: Feeds, precision: str = "model",
              rounds: int = 30, warmup: int = 3, budget_s: float | None = 5.0) -> dict[str, Any]:
    """Median latency of the original and the written model on one engine, in this process, interleaved
    (original, written, original, ...) so that load and frequency changes hit both alike, and whether the two
    give bit-identical outputs on these (clean) feeds (child only). When the engine refuses the original
    (a Clip-6 with min > max), only the written model is timed and the note says why. Past `budget_s` of timing
    the rounds stop (at least 3 are run), so that a large model stays within the request's time limit.

    A model whose weights stay in their files (clipbridge.core.ondisk: the CLI's large models) is timed one model
    after the other instead, each session freed before the next loads: two sessions at once held two copies of the
    weights (4.1 GB peak for a 1 GB model); the note says so."""
    if folder_of(written) is not None:
        return _one_at_a_time(engine, original, written, feeds, precision, rounds, warmup, budget_s)
    first, note = _load_original(engine, original, precision)
    calls = [c for c in (first, _load(engine, written, precision, "fixed model")) if c is not None]
    try:
        samples = _interleave(calls, feeds, rounds, warmup, budget_s)
        same = None if first is None else all(
            np.asarray(u).tobytes() == np.asarray(v).tobytes() for u, v in zip(first(feeds), calls[1](feeds)))
    except Exception as exc:  # an engine failing at run time: its own message, never an unexplained 500
        raise _refused(engine, exc, "model while timing it", original) from None
    return _timed(engine, precision, samples, same, note, first is not None)


def _load_original(engine: str, original: bytes, precision: str) -> tuple[Callable | None, str | None]:
    """The original's session, or None and the note saying why the target cannot run it (a Clip-6 with min > max)."""
    try:
        return _load(engine, original, precision, "model"), None
    except EngineRefused as exc:
        return None, f"the target cannot run the original: {exc.message}"


def _one_at_a_time(engine: str, original: bytes, written: bytes, feeds: Feeds, precision: str, rounds: int,
                   warmup: int, budget_s: float | None) -> dict[str, Any]:
    """time_pair for a model whose weights stay on disk: the original's rounds, its session freed, then the
    written model's, each keeping only its outputs for the bit-identity check."""
    samples: list[list[float]] = []
    outputs: list[list[np.ndarray]] = []
    first, note = _load_original(engine, original, precision)
    try:
        if first is not None:
            samples += _interleave([first], feeds, rounds, warmup, budget_s)
            outputs.append(first(feeds))
            del first
            heap.release()
        second = _load(engine, written, precision, "fixed model")
        samples += _interleave([second], feeds, rounds, warmup, budget_s)
        outputs.append(second(feeds))
    except Exception as exc:  # an engine failing at run time: its own message, never an unexplained 500
        raise _refused(engine, exc, "model while timing it", original) from None
    same = None if len(outputs) < 2 else all(
        np.asarray(u).tobytes() == np.asarray(v).tobytes() for u, v in zip(*outputs))
    order = "timed one after the other (its weights stay in their files: one copy in memory at a time)"
    return _timed(engine, precision, samples, same, f"{note}; {order}" if note else order, len(outputs) == 2)


def _timed(engine: str, precision: str, samples: list[list[float]], same: bool | None, note: str | None,
           both: bool) -> dict[str, Any]:
    """The cost body: medians in ms, the ratio written / original where both ran."""
    med = [round(float(np.median(s)) * 1e3, 4) for s in samples]
    out: dict[str, Any] = {"engine": engine, "precision": precision, "rounds": len(samples[-1]), "original_ms": None,
                           "written_ms": med[-1], "ratio": None, "clean_identical": same, "note": note}
    if both:
        out.update(original_ms=med[0], ratio=round(med[1] / med[0], 4) if med[0] > 0 else None)
    return out


def _interleave(calls: list[Callable], feeds: Feeds, rounds: int, warmup: int,
                budget_s: float | None) -> list[list[float]]:
    for _ in range(warmup):
        for c in calls:
            c(feeds)
    samples: list[list[float]] = [[] for _ in calls]
    start = time.perf_counter()
    for r in range(rounds):
        if r >= 3 and budget_s is not None and time.perf_counter() - start > budget_s:
            break
        for k in (range(len(calls)) if r % 2 == 0 else reversed(range(len(calls)))):  # alternate who goes first
            t = time.perf_counter()
            calls[k](feeds)
            samples[k].append(time.perf_counter() - t)
    return samples
