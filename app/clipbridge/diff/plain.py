"""The plain runs of a diff (each engine on the model as given: the observer check's side), on a second thread
beside the marked runs where the executor allows it.

Why: an OpenVINO compile is most of a plain run and releases the GIL, so on two idle cores the plain runs cost
almost nothing beside the marked ones (bench/diff.py: docs/performance.md). The price is memory: the sandbox
child holds one more compiled model at its peak. Tried and dropped: starting the later engines' marked runs
beside the first's too (their replay copies then cannot be folded in, clipbridge.diff.run._fold_replays, and a
differing node is replayed alone): interleaved in one process, 2.09x against 2.04x folded on a 21 MB model and
2.44x against 2.38x on a 0.6 MB one. Imported by clipbridge.diff.run only (which re-exports `concurrent`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from clipbridge.core.ondisk import folder_of
from clipbridge.diff import engines, sides
from clipbridge.engines import threads

Execute = Callable[..., Any]


def concurrent(execute: Execute) -> bool:
    """Whether `execute` may be called from a second thread (an executor says so with `concurrent = True`;
    one that talks to a single worker process over a pipe does not)."""
    return bool(getattr(execute, "concurrent", False))


def beside(execute: Execute, model: bytes | sides.Models | None = None) -> bool:
    """Whether the plain runs go beside the marked ones: where the executor allows it, and not for a model whose
    weights stay on disk (clipbridge.core.ondisk): a second session beside the first would hold a second copy of
    its weights, which is the memory that grows with the model (docs/performance.md, issue 46)."""
    groups = sides.given(model, ("",)).groups if model is not None else ()
    return concurrent(execute) and not any(folder_of(m) is not None for m, _, _ in groups)


def side_threads(execute: Execute, model: bytes | sides.Models | None = None) -> int | None:
    """The engine threads each side of a diff gets when the plain runs go beside the marked ones: half the cores
    each, unpinned (clipbridge.engines.threads.scoped). Why: with the engines' defaults both sides' engines each take
    every core, and on two cores a 21 MB model's diff took 170-180 ms against 150 ms split (docs/diff.md,
    Speed). None on the serial path: the engines' defaults, or the count the process set (fleet's workers)."""
    return threads.share_of_cores(2) if beside(execute, model) else None


class Plain:
    """Each engine's plain run: started at once on one background thread when the executor is concurrent, else
    run just before that engine's marked run. Either way a plain run's failure is raised before its marked run's
    (the model's fault, not the marks'), as when the two ran one after the other."""

    def __init__(self, execute: Execute, model: bytes | sides.Models, feeds: dict[str, np.ndarray],
                 names: tuple[str, ...], precision: str) -> None:
        # positional: the sandbox's executor passes no keywords; a plain run reads no kernels; each engine runs
        # its side's model as given (clipbridge.diff.sides)
        models = sides.given(model, names)
        self.call = {e: functools.partial(execute, f"diff:{e}", engines.run, e, models.of(e), feeds, [], precision,
                                           False)
                     for e in names}
        # the plain runs' thread runs engines with the count its starter's thread has (side_threads)
        self.pool = ThreadPoolExecutor(1, "clipbridge-plain", initializer=threads.set_thread_count,
                                       initargs=(threads.engine_threads(),)) if beside(execute, model) else None
        self.futures: dict[str, Future] = {}

    def __enter__(self) -> Plain:
        if self.pool is not None:
            self.futures = {e: self.pool.submit(c) for e, c in self.call.items()}
        return self

    def __exit__(self, *exc: object) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)

    def after(self, engine: str, marked: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """The marked run of `engine`, once its plain run is started (or done, on the serial path). A failure is
        raised as the serial order would: the first failed plain run up to this engine's, else the marked run's.
        Its plain result is not awaited on success, so that the next engine's marked run starts at once."""
        if self.pool is None:
            self.futures[engine] = _done(self.call[engine])
            self.result(engine)
        try:
            return marked()
        except BaseException:
            for e in self.call:  # the plain runs' own errors first (the model's fault, not the marks'), in order
                self.result(e)
                if e == engine:
                    break
            raise

    def result(self, engine: str) -> dict[str, Any]:
        return self.futures[engine].result()


def _done(call: Callable[[], dict[str, Any]]) -> Future:
    """A finished future holding `call`'s result or its exception."""
    f: Future = Future()
    try:
        f.set_result(call())
    except Exception as exc:  # noqa: BLE001 - re-raised by Plain.result, where the concurrent path raises it
        f.set_exception(exc)
    return f

