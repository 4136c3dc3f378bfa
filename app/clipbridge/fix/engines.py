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
    the rounds stop (at least 3 are run), so that a large model stays within the request's time limit."""
    note = None
    try:
        first = _load(engine, original, precision, "model")
    except EngineRefused as exc:
        first, note = None, f"the target cannot run the original: {exc.message}"
    calls = [c for c in (first, _load(engine, written, precision, "fixed model")) if c is not None]
    try:
        samples = _interleave(calls, feeds, rounds, warmup, budget_s)
        same = None if first is None else all(
            np.asarray(u).tobytes() == np.asarray(v).tobytes() for u, v in zip(first(feeds), calls[1](feeds)))
    except Exception as exc:  # an engine failing at run time: its own message, never an unexplained 500
        raise _refused(engine, exc, "model while timing it", original) from None
    med = [round(float(np.median(s)) * 1e3, 4) for s in samples]
    out: dict[str, Any] = {"engine": engine, "precision": precision, "rounds": len(samples[-1]), "original_ms": None,
                           "written_ms": med[-1], "ratio": None, "clean_identical": same, "note": note}
    if first is not None:
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
