"""Where the per-model jobs run: `local` (sandbox worker processes, one per fleet worker, recycled after a bounded
number of models) or `ray` (tasks with num_cpus, max_retries, max_calls and a per-task runtime_env). Both call
job.run_one and hand each record to `done` as it finishes; a job whose process dies is retried a bounded number
of times, then recorded as an error."""

from __future__ import annotations

import dataclasses
import os
import queue
import threading
from collections.abc import Callable, Iterable
from typing import Any

from app.core.errors import ClipBridgeError
from app.core.settings import Settings
from app.engines.sandbox import Pool, SandboxError
from app.fleet import job
from app.fleet.envs import code_root
from app.fleet.keys import DISTRIBUTIONS

Done = Callable[[dict[str, Any], bool], None]  # (record, whether it may be cached)


@dataclasses.dataclass
class Limits:
    workers: int = 1
    recycle: int = 100  # models per worker process before it is replaced (engines that leak are bounded)
    retries: int = 2  # a job whose process died runs again this many times, then is recorded as an error
    timeout_s: float = 600.0  # per model
    memory_mb: int | None = None  # address space a job may add (default: the sandbox's setting)


def _failed(task: job.Task, error: str) -> dict[str, Any]:
    return job.record(task, None, None, error[: job.MAX_ERROR], 0.0)


class _Slot:
    """One fleet worker: a sandbox pool of size one, replaced after `recycle` models (the process is fresh)."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.settings = dataclasses.replace(Settings.from_env(), sandbox_workers=1,
                                            sandbox_timeout_seconds=limits.timeout_s)
        self.pool: Pool | None = None
        self.used = 0

    def run(self, task: job.Task) -> tuple[dict[str, Any], bool]:
        last = ""
        for _ in range(self.limits.retries + 1):
            if self.pool is None or self.used >= self.limits.recycle:
                self.close()
                self.pool, self.used = Pool(self.settings), 0
            self.used += 1
            try:
                return self.pool.call("fleet", job.run_one, (task,), {}, self.limits.timeout_s,
                                      self.limits.memory_mb or self.settings.sandbox_memory_mb), True
            except SandboxError as exc:  # the worker died on it (crash, memory, time): a fresh one tries again
                last = exc.message
        return _failed(task, f"{last} (tried {self.limits.retries + 1} times)"), False

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()
            self.pool = None


def run_local(tasks: Iterable[job.Task], limits: Limits, done: Done) -> None:
    todo: queue.Queue[job.Task] = queue.Queue()
    for t in tasks:
        todo.put(t)
    lock = threading.Lock()
    errors: list[BaseException] = []

    def loop() -> None:
        slot = _Slot(limits)
        try:
            while True:
                try:
                    task = todo.get_nowait()
                except queue.Empty:
                    return
                result, cacheable = slot.run(task)
                with lock:
                    done(result, cacheable)
        except BaseException as exc:  # the parent's own failure: stop this loop, re-raised below
            errors.append(exc)
        finally:
            slot.close()

    threads = [threading.Thread(target=loop, name=f"fleet-{i}", daemon=True) for i in range(limits.workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def runtime_env(pins: dict[str, str]) -> dict[str, Any] | None:
    """Ray's per-task environment for pinned engines: their distributions installed over the base environment."""
    return {"pip": [f"{DISTRIBUTIONS[n]}=={v}" for n, v in sorted(pins.items())]} if pins else None


def run_ray(tasks: list[job.Task], limits: Limits, done: Done, address: str | None,
            pins: dict[str, str]) -> None:
    try:
        import ray
        from ray.exceptions import RayError
    except ImportError:
        raise ClipBridgeError("--backend ray needs Ray: pip install 'clipbridge[fleet]'", "--backend") from None
    started = not ray.is_initialized()
    if started:
        _init(ray, address, limits.workers)
    try:
        options: dict[str, Any] = {"num_cpus": 1, "max_retries": limits.retries, "max_calls": limits.recycle}
        if pins:
            options["runtime_env"] = runtime_env(pins)
        remote = ray.remote(**options)(job.run_one)
        pending = {remote.remote(t): t for t in tasks}
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                task = pending.pop(ref)
                try:
                    result, cacheable = ray.get(ref), True
                except RayError as exc:  # the task's worker died past its retries, or its environment failed
                    result = _failed(task, f"ray: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                                     f" (tried {limits.retries + 1} times)")
                    cacheable = False
                done(result, cacheable)
    finally:
        if started:
            ray.shutdown()


def _init(ray: Any, address: str | None, workers: int) -> None:
    """Join the cluster at `address`, or start a small local instance: workers import app from this code root."""
    root = code_root()
    env = {"env_vars": {"PYTHONPATH": root}} if root else None
    if address:
        ray.init(address=address, runtime_env=env, log_to_driver=False)
        return
    ray.init(num_cpus=workers, include_dashboard=False, object_store_memory=int(os.environ.get(
        "CLIPBRIDGE_FLEET_RAY_OBJECT_STORE", 100 * 1024 * 1024)), runtime_env=env, log_to_driver=False,
        configure_logging=False)
