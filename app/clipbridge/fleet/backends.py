"""Where the per-model jobs run: `local` (app/clipbridge/fleet/local.py: sandbox worker processes, one per fleet worker,
recycled after a bounded number of models) or `ray` (here: tasks with num_cpus, max_retries, max_calls and a
per-task runtime_env). Both call job.run_one and hand each record to `done` as it finishes; a job whose process
dies is retried a bounded number of times, then recorded as an error."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from clipbridge.core.errors import ClipBridgeError
from clipbridge.fleet import job
from clipbridge.fleet.envs import code_root
from clipbridge.fleet.keys import DISTRIBUTIONS

Done = Callable[[dict[str, Any], bool], None]  # (record, whether it may be cached)


@dataclass
class Limits:
    workers: int = 1
    recycle: int = 100  # models per worker process before it is replaced (engines that leak are bounded)
    retries: int = 2  # a job whose process died runs again this many times, then is recorded as an error
    timeout_s: float = 600.0  # per model
    memory_mb: int | None = None  # address space a job may add (default: the sandbox's setting)


def failed(task: job.Task, error: str) -> dict[str, Any]:
    """The record of a model whose process died past its retries (not cached: the next run tries it again)."""
    return job.record(task, None, None, error[: job.MAX_ERROR], 0.0)


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
                    result = failed(task, f"ray: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                                     f" (tried {limits.retries + 1} times)")
                    cacheable = False
                done(result, cacheable)
    finally:
        if started:
            ray.shutdown()


def _init(ray: Any, address: str | None, workers: int) -> None:
    """Join the cluster at `address`, or start a small local instance: workers import clipbridge from this code root."""
    root = code_root()
    env = {"env_vars": {"PYTHONPATH": root}} if root else None
    if address:
        ray.init(address=address, runtime_env=env, log_to_driver=False)
        return
    ray.init(num_cpus=workers, include_dashboard=False, object_store_memory=int(os.environ.get(
        "CLIPBRIDGE_FLEET_RAY_OBJECT_STORE", 100 * 1024 * 1024)), runtime_env=env, log_to_driver=False,
        configure_logging=False)
