"""A fleet worker's processes (the local backend, app/clipbridge/fleet/local.py): each a sandbox worker (app/clipbridge/engines/sandbox.py:
a fresh interpreter, its address space capped, killed past --timeout), started ahead of its first model and warmed
there, and replaced after `recycle` models by a spare started ahead of time.

Why ahead of time: a worker's start (an interpreter importing onnx, the diff, the scan, onnxruntime and OpenVINO,
then compiling its first model) costs about 0.5 s on a 2-core host, more than ten small models (docs/performance.md,
Fleet). Started early, it overlaps what the parent does meanwhile (hashing the sources, or the old worker's last
models, on a core the run leaves idle)."""

from __future__ import annotations

import dataclasses
import math
import threading
import time
from typing import Any

from clipbridge.core.settings import Settings
from clipbridge.engines import quiet
from clipbridge.engines.sandbox import Pool, SandboxError
from clipbridge.fleet import job
from clipbridge.fleet.backends import Limits, failed

DEFAULT_START_S = 1.0  # a worker's start before one was measured (it is about 0.5 s on a 2-core host)


def sandbox_settings(limits: Limits) -> Settings:
    """The sandbox's settings for one fleet worker: a pool of one process, timed out past --timeout."""
    return dataclasses.replace(Settings.from_env(), sandbox_workers=1, sandbox_timeout_seconds=limits.timeout_s)


_SINK: list[int] = []  # one pipe for every fleet worker of this process (clipbridge.engines.quiet.sink)


def _worker_stderr() -> int:
    """The fleet workers' stderr: onnxruntime's and OpenVINO's own lines go to the log (`clipbridge -v`), as the
    CLI's in-process runs do (issue 47)."""
    if not _SINK:
        _SINK.append(quiet.sink("fleet worker"))
    return _SINK[0]


class Started:
    """A sandbox pool of one worker, started now and warmed in the background; its first call waits for the warm-up
    (a failed warm-up is ignored: the first model's own call then says what is wrong, for that model)."""

    def __init__(self, settings: Settings, limits: Limits, warm: job.Warm) -> None:
        self.pool = Pool(settings, stderr=_worker_stderr())  # the engines' own lines: the log, not the terminal
        self.pool.warm()  # the process starts now
        self.started = time.perf_counter()
        self.ready_s: float | None = None
        self._thread = threading.Thread(target=self._warm, args=(limits, warm), name="fleet-warm", daemon=True)
        self._thread.start()

    def _warm(self, limits: Limits, warm: job.Warm) -> None:
        """The warm-up call, on its own thread, so that the process starts while the caller goes on."""
        try:
            self.pool.call("fleet:warm", job.warm, (warm,), {}, limits.timeout_s,
                           limits.memory_mb or self.pool.settings.sandbox_memory_mb)
        except Exception:  # noqa: BLE001 - see the class docstring
            pass
        self.ready_s = time.perf_counter() - self.started

    def wait(self) -> None:
        """Until the warm-up is done (the pool has one process: a call would queue behind it anyway)."""
        self._thread.join()

    def call(self, task: job.Task, limits: Limits) -> dict[str, Any]:
        """One model on this worker, after its warm-up."""
        self.wait()
        return self.pool.call("fleet", job.run_one, (task,), {}, limits.timeout_s,
                              limits.memory_mb or self.pool.settings.sandbox_memory_mb)

    def close(self) -> None:
        """Stop the worker; one still warming is stopped when its warm-up returns (waited for: nothing outlives
        the run)."""
        self.pool.close()
        self._thread.join()


class Slot:
    """One fleet worker: its current worker process, replaced after `recycle` models by a spare started `lead`
    models ahead (the measured start over the measured model time), when the queue still holds work for it."""

    def __init__(self, limits: Limits, warm: job.Warm) -> None:
        self.limits, self.warm = limits, warm
        self.settings = sandbox_settings(limits)
        self.current = Started(self.settings, limits, warm)
        self.spare: Started | None = None
        self.used = 0
        self.done, self.busy_s = 0, 0.0  # models run and their calls' wall time, for the lead

    def _start_s(self) -> float:
        """A worker's start as this slot measured it (its first worker's), to weigh against models' times."""
        return self.current.ready_s or DEFAULT_START_S

    def _mean_s(self) -> float:
        """A model's mean time on this slot so far (a worker's start before any model ran)."""
        return self.busy_s / self.done if self.done else self._start_s()

    def lead(self) -> int:
        """Models before recycling at which the spare starts: its start over a model's mean time, plus one."""
        return min(self.limits.recycle, math.ceil(self._start_s() / max(self._mean_s(), 1e-3)) + 1)

    def spent(self) -> bool:
        """The current worker has run its `recycle` models and no spare was started: the next model needs a cold
        start."""
        return self.used >= self.limits.recycle and self.spare is None

    def others_sooner(self, remaining: int, others: int) -> bool:
        """Whether `others` slots finish `remaining` models sooner than this one could start a worker: then it
        stops instead (a cold start for the run's last few models would only lengthen it)."""
        return others > 0 and remaining * self._mean_s() / others <= self._start_s()

    def _needs_spare(self, waiting: int, others: int) -> bool:
        """Whether the models still queued when the current worker is spent are worth a worker of their own: more
        than every slot takes meanwhile, and (with other slots) more than those finish while one starts."""
        left = self.limits.recycle - self.used  # models the current worker still takes, this one included
        after = waiting - (others + 1) * (left - 1)
        return after > 0 and (others == 0 or after * self._mean_s() / others > self._start_s())

    def _prepare(self, waiting: int, others: int) -> None:
        """Start the spare `lead` models before the current worker is spent, when it will have work; swap to it
        (or cold-start a worker) once the current one is spent."""
        left = self.limits.recycle - self.used
        if self.spare is None and left <= self.lead() and self._needs_spare(waiting, others):
            self.spare = Started(self.settings, self.limits, self.warm)
        if left <= 0:
            self.current.close()
            self.current = self.spare or Started(self.settings, self.limits, self.warm)
            self.spare, self.used = None, 0

    def run(self, task: job.Task, waiting: int = 0, others: int = 0) -> tuple[dict[str, Any], bool]:
        """The model's record and whether it may be cached; `waiting`: the models still queued, `others`: the other
        slots taking them."""
        last = ""
        for _ in range(self.limits.retries + 1):
            self._prepare(waiting, others)
            self.used += 1
            self.current.wait()  # a model's time, not the worker's start
            start = time.perf_counter()
            try:
                result = self.current.call(task, self.limits)
                self.done, self.busy_s = self.done + 1, self.busy_s + time.perf_counter() - start
                return result, True
            except SandboxError as exc:  # the worker died on it (crash, memory, time): a fresh one tries again
                last = exc.message
        return failed(task, f"{last} (tried {self.limits.retries + 1} times)"), False

    def close(self) -> None:
        """Stop this slot's worker processes (the spare too, if one was started)."""
        for started in (self.current, self.spare):
            if started is not None:
                started.close()
