"""The local backend: one thread per fleet worker (a slot, app/clipbridge/fleet/slots.py), each driving its sandbox worker
process through a shared queue of models.

Where the time goes, and why it is built so (docs/performance.md, Fleet): a slot is started as soon as the run
finds a model to compute, while the parent still hashes the rest (runner._lookup), and a fully cached run starts
none. The parent's writes for each finished model (the cache entry, flushed to the disk every second; the journal
line; the progress) are made on a writer thread, so that a worker is handed its next model at once instead of
waiting for a disk. At the end of a run a slot whose worker is spent stops rather than cold-start a worker for the
last few models, when the other slots finish them sooner."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterable
from typing import Any

from clipbridge.fleet import job
from clipbridge.fleet.backends import Done, Limits
from clipbridge.fleet.slots import Slot


class Workers:
    """The run's slots, started one per model to compute as the run finds them (up to --workers)."""

    def __init__(self, limits: Limits, warm: job.Warm) -> None:
        self.limits, self.warm = limits, warm
        self.slots: list[Slot] = []
        self._lock = threading.Lock()  # the queue's last models and the slots still taking them
        self._active = 0
        self._errors: list[BaseException] = []

    def start(self, wanted: int = 1) -> None:
        """Start slots up to `wanted` (at most --workers): the run has found that many models to compute."""
        while len(self.slots) < min(wanted, self.limits.workers):
            self.slots.append(Slot(self.limits, self.warm))

    def run(self, tasks: Iterable[job.Task], done: Done) -> None:
        """Every task on the slots; `done` gets each record (and whether it may be cached) on the writer thread."""
        todo: queue.Queue[job.Task] = queue.Queue()
        for t in tasks:
            todo.put(t)
        self.start(todo.qsize())
        writer = Writer(done)
        self._active = len(self.slots)
        threads = [threading.Thread(target=self._loop, args=(s, todo, writer), name=f"fleet-{i}", daemon=True)
                   for i, s in enumerate(self.slots)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        writer.close()
        if self._errors:
            raise self._errors[0]

    def _loop(self, slot: Slot, todo: queue.Queue[job.Task], writer: Writer) -> None:
        """One slot's models until it stops (_next), the writer failed or another loop did: the run stops."""
        try:
            while not writer.failed and not self._errors:
                task = self._next(slot, todo)
                if task is None:
                    return
                writer.put(*slot.run(task, todo.qsize(), self._active - 1))
        except BaseException as exc:  # the parent's own failure: the other loops stop, Workers.run re-raises it
            self._errors.append(exc)

    def _next(self, slot: Slot, todo: queue.Queue[job.Task]) -> job.Task | None:
        """The slot's next model, or None when it stops: the queue is empty, or its worker is spent and the other
        slots finish what is left sooner. Under the lock, so that a model handed back always finds a slot that
        will look at the queue again."""
        with self._lock:
            try:
                task = todo.get_nowait()
            except queue.Empty:
                self._active -= 1
                return None
            if slot.spent() and slot.others_sooner(todo.qsize() + 1, self._active - 1):
                todo.put(task)
                self._active -= 1
                return None
            return task

    def close(self) -> None:
        """Stop every slot's processes (after a run, or when it failed)."""
        for s in self.slots:
            s.close()


class Writer:
    """The parent's writes for each finished model (done: the cache entry, the journal line, the progress), in the
    order the models finished, on one thread of their own."""

    def __init__(self, done: Done) -> None:
        self.done = done
        self.error: BaseException | None = None
        self._queue: queue.Queue[tuple[dict[str, Any], bool] | None] = queue.Queue()
        self._thread = threading.Thread(target=self._drain, name="fleet-writer", daemon=True)
        self._thread.start()

    @property
    def failed(self) -> bool:
        """A write failed: the loops stop taking models (close() raises the failure)."""
        return self.error is not None

    def put(self, record: dict[str, Any], cacheable: bool) -> None:
        """Hand a finished model over; returns at once (the loop goes on to its next model)."""
        self._queue.put((record, cacheable))

    def _drain(self) -> None:
        """The writer thread: every record in turn; after a failure the rest are dropped (they are not cached, so
        a run started again computes them)."""
        while (item := self._queue.get()) is not None:
            if self.error is None:
                try:
                    self.done(*item)
                except BaseException as exc:  # a full disk, say: the loops stop, close() re-raises it
                    self.error = exc

    def close(self) -> None:
        """Wait for every write; raise the first write's failure."""
        self._queue.put(None)
        self._thread.join()
        if self.error is not None:
            raise self.error
