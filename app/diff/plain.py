"""The engine runs of a diff that may run on threads of their own where the executor allows it: the plain runs
(each engine on the model as given: the observer check's side) and, for a large model, the later engines' marked
runs.

Why: an OpenVINO compile is most of a run and releases the GIL, so on two idle cores the plain runs cost almost
nothing beside the marked ones (bench/diff.py: docs/performance.md). A large model's marked runs are long too
(reading and copying its weights), and then the later engines' marked runs start at once, beside the first
engine's, instead of after it with its replay copies folded in (app.diff.run._fold_replays): a differing node is
then replayed alone, which costs one small compile. The price is memory: the sandbox child holds two more
compiled models at its peak. Imported by app.diff.run only (which re-exports `concurrent`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from app.diff import engines

Execute = Callable[..., Any]
# From this size on (the model's bytes, mostly weights) the later engines' marked runs start beside the first's.
# Measured on a 2-vCPU Xeon: a 0.6 MB MobileNet diff costs 2.32x the plain runs folded and 2.49x ahead (its one
# replay's compile weighs more than the overlap gains), a 21 MB MLP 2.43x folded and 2.09x ahead.
AHEAD_MIN_BYTES = 4 << 20


def concurrent(execute: Execute) -> bool:
    """Whether `execute` may be called from a second thread (an executor says so with `concurrent = True`;
    one that talks to a single worker process over a pipe does not)."""
    return bool(getattr(execute, "concurrent", False))


class Plain:
    """Each engine's plain run: started at once on one background thread when the executor is concurrent, else
    run just before that engine's marked run. Either way a plain run's failure is raised before its marked run's
    (the model's fault, not the marks'), as when the two ran one after the other."""

    def __init__(self, execute: Execute, model: bytes, feeds: dict[str, np.ndarray], names: tuple[str, ...],
                 precision: str) -> None:
        # positional: the sandbox's executor passes no keywords; a plain run reads no kernels
        self.call = {e: functools.partial(execute, f"diff:{e}", engines.run, e, model, feeds, [], precision, False)
                     for e in names}
        self.pool = ThreadPoolExecutor(1, "clipbridge-plain") if concurrent(execute) else None
        self.futures: dict[str, Future] = {}

    def __enter__(self) -> Plain:
        if self.pool is not None:
            self.futures = {e: self.pool.submit(c) for e, c in self.call.items()}
        return self

    def __exit__(self, *exc: object) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)

    def after(self, engine: str, marked: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """The marked run of `engine`, once its plain run is started (or done, on the serial path)."""
        if self.pool is None:
            self.futures[engine] = _done(self.call[engine])
            self.result(engine)
        try:
            return marked()
        except BaseException:
            self.result(engine)  # the plain run's own error first
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


class Ahead:
    """The marked runs of `names` (the engines after the first), started at once on threads of their own when
    `execute` is concurrent and the model has AHEAD_MIN_BYTES or more; otherwise nothing runs here."""

    def __init__(self, execute: Execute, marked_model: bytes, feeds: dict[str, np.ndarray], names: tuple[str, ...],
                 precision: str) -> None:
        self.on = concurrent(execute) and len(marked_model) >= AHEAD_MIN_BYTES and bool(names)
        self.call = {e: functools.partial(execute, f"diff:{e}", engines.run, e, marked_model, feeds, [], precision)
                     for e in names}
        self.pool = ThreadPoolExecutor(len(names), "clipbridge-marked") if self.on else None
        self.futures: dict[str, Future] = {}

    def __enter__(self) -> Ahead:
        if self.pool is not None:
            self.futures = {e: self.pool.submit(c) for e, c in self.call.items()}
        return self

    def __exit__(self, *exc: object) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)

    def run(self, engine: str) -> Callable[[], dict[str, Any]] | None:
        """The call that gives `engine`'s marked run started ahead, or None when it was not."""
        return self.futures[engine].result if engine in self.futures else None
