"""An engine pinned to another version (`--engine openvino==2025.4.0`) runs in its own environment.

Locally: a virtual environment clipbridge builds once under the cache (CACHE/envs/NAME-VERSION), holding only
that engine's distribution (`pip install --no-deps`); a `.pth` file puts this interpreter's site-packages after
it, so numpy, onnx and clipbridge itself are shared and the pinned engine shadows the installed one. A marker
written last says the environment is complete (a build cut short is built again). The diff's calls for that
engine (stage `diff:NAME`) go to a persistent child interpreter of that environment; every other call runs here.
With Ray the same pins become the task's `runtime_env` (backends.py)."""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import clipbridge
from clipbridge.core.errors import ClipBridgeError
from clipbridge.diff import run
from clipbridge.engines import venvs
from clipbridge.engines.threads import set_engine_threads
from clipbridge.fleet.keys import DISTRIBUTIONS, EngineSpec

READY = venvs.READY  # the marker written last (clipbridge.engines.venvs)


def env_dir(root: Path, spec: EngineSpec) -> Path:
    return root / "envs" / f"{spec.name}-{spec.pinned}"


def build(root: Path, spec: EngineSpec, log: Callable[[str], None] = print) -> str:
    """The interpreter of the pinned engine's environment, built on first use (clipbridge.engines.venvs: under a lock,
    shards on one machine may ask at once; a marker written last) and reused after."""
    return venvs.ensure(env_dir(root, spec), [f"{DISTRIBUTIONS[spec.name]}=={spec.pinned}"], "--engine",
                        shared=True, log=log)


def code_root() -> str | None:
    """The folder that holds the `clipbridge` package, unless it is a site-packages (the .pth already adds that one:
    putting it on PYTHONPATH would shadow the pinned engine)."""
    root = Path(clipbridge.__file__).resolve().parents[1]
    return None if root.name in ("site-packages", "dist-packages") else str(root)


class EnvWorker:
    """A child interpreter of one environment, fed (fn, args, kwargs) and answering ("ok"|"raise", value)."""

    def __init__(self, python: str) -> None:
        ours, theirs = socket.socketpair()
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
        if code_root():
            env["PYTHONPATH"] = code_root()  # type: ignore[assignment]
        code = f"from clipbridge.fleet.envchild import main; main({theirs.fileno()})"
        with ours, theirs:
            self.proc = subprocess.Popen([python, "-c", code], pass_fds=[theirs.fileno()], env=env,
                                         stdin=subprocess.DEVNULL, close_fds=True)
            self.conn = Connection(ours.detach())

    def call(self, fn: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
        try:
            self.conn.send((fn, args, kwargs))
            kind, value = self.conn.recv()
        except (EOFError, OSError):
            raise ClipBridgeError(f"the pinned engine's process ended (exit {self.proc.poll()})", "--engine") \
                from None
        if kind == "raise":
            raise value
        return value

    def close(self) -> None:
        self.conn.close()
        self.proc.wait(10)


_WORKERS: dict[str, EnvWorker] = {}


def worker(python: str, threads: int | None = None) -> EnvWorker:
    """One persistent child per environment and process (a sandbox worker or this one), its engines on `threads`
    threads like this process's (app/clipbridge/engines/threads.py)."""
    w = _WORKERS.get(python)
    if w is None or w.proc.poll() is not None:
        w = _WORKERS[python] = EnvWorker(python)
        w.call(set_engine_threads, (threads,), {})
    return w


def executor(pinned: dict[str, str], threads: int | None = None) -> run.Execute:
    """diff's executor: an engine's calls go to its environment when pinned, everything else in process. With a
    thread count (fleet's workers: one per core, each diff on one thread) the diff's runs stay on the calling
    thread (run.serial) instead of taking a second core beside another worker's diff (app/clipbridge/diff/plain.py)."""
    if not pinned:
        return run.direct if threads is None else run.serial

    def execute(stage: str, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        engine = stage.removeprefix("diff:")
        if engine in pinned:
            return worker(pinned[engine], threads).call(fn, args, kwargs)
        return fn(*args, **kwargs)
    return execute


