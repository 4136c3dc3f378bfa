"""Native code on untrusted bytes runs in a reused child process, where a crash costs one answer.

`run_isolated(stage, fn, *args)` calls `fn(*args)` in a worker of a small pool and returns its result. The
workers are started by a forkserver (a clean process that never loaded the server's threads, onnxruntime or
uvicorn, so forking from it is safe) with the heavy modules preloaded, and are reused across calls: the hot
path costs one pickle round-trip over a pipe. Per call, the child's address space is capped (RLIMIT_AS at its
idle size plus `memory_mb`), the parent waits at most `timeout_s` and the pickled result may not exceed
CLIPBRIDGE_SANDBOX_MAX_RESULT_BYTES. A worker that crashes, hangs (killed) or runs out of memory is
discarded and replaced; the parent raises SandboxError naming the stage. An exception `fn` raises in the
child is re-raised in the parent as the same type with the same fields (a ClipBridgeError keeps its `loc`).
Design and measured cost: docs/isolation.md.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import pickle
import queue
import resource
import signal as signals
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any, TypeVar

from app.errors import ClipBridgeError
from app.settings import Settings

T = TypeVar("T")
log = logging.getLogger("clipbridge.sandbox")
# Imported once in the forkserver, so that every worker starts with them loaded (a worker's first call does
# not pay onnx's import). Only modules that start no threads at import time belong here.
PRELOAD = ["app.sandbox", "numpy", "onnx", "onnx.checker", "onnx.shape_inference", "onnx.version_converter"]
REASONS = ("crashed", "timeout", "memory", "output-too-large")


class SandboxError(ClipBridgeError):
    """Native code failed on this input in its child process: it crashed, hung, or passed a limit.

    HTTP: a crash, the memory limit and the result limit are the input's doing (422: the server is fine, the
    same bytes fail again); a timeout is 503 with Retry-After, like an execution past its time
    (CLIPBRIDGE_MAX_EXECUTION_SECONDS), since a loaded machine can be the cause."""

    title = "Native code failed on this input"

    def __init__(self, stage: str, reason: str, signal: int | None = None, detail: str = "",
                 loc: str | None = "model") -> None:
        self.stage, self.reason, self.signal = stage, reason, signal
        what = {"crashed": "crashed on this model", "timeout": "ran out of time on this model",
                "memory": "ran out of memory on this model", "output-too-large": "produced too large a result"}
        message = f"{stage} {what.get(reason, reason)}"
        if signal is not None:
            message += f" (signal {signal})"
        if detail:
            message += f": {detail}"
        super().__init__(message, loc)
        self.status = 503 if reason == "timeout" else 422
        if reason == "timeout":
            self.retry_after = 1

    def __reduce__(self) -> Any:
        return _rebuild, (type(self), self.args, self.__dict__)


# ---- the child ------------------------------------------------------------------------------------------

def _address_space() -> int:
    """This process's current virtual size in bytes (Linux /proc; 0 elsewhere: no cap is then relative)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _cap_memory(memory_mb: int | None) -> None:
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    soft = resource.RLIM_INFINITY if memory_mb is None else _address_space() + memory_mb * 2**20
    if hard != resource.RLIM_INFINITY:
        soft = hard if soft == resource.RLIM_INFINITY else min(soft, hard)
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _rebuild(cls: type[BaseException], args: tuple, state: dict) -> BaseException:
    exc = cls.__new__(cls)
    exc.args = args
    exc.__dict__.update(state)
    return exc


def _portable(exc: BaseException) -> bytes:
    """The exception pickled with its fields (default exception pickling drops attributes like `loc`)."""
    try:
        return pickle.dumps((_rebuild, (type(exc), exc.args, dict(exc.__dict__))), protocol=5)
    except Exception:  # an unpicklable exception or field: its type name and text still travel
        return pickle.dumps((RuntimeError, (f"{type(exc).__name__}: {str(exc)[:2000]}",)), protocol=5)


def _serve(conn: Connection) -> None:
    """A worker's loop: one call per message until the parent closes the pipe."""
    signals.signal(signals.SIGINT, signals.SIG_IGN)  # Ctrl-C stops the server, which then closes our pipe
    while True:
        try:
            fn, args, kwargs, memory_mb, max_result = conn.recv()
        except (EOFError, OSError):
            return
        retire = False
        try:
            _cap_memory(memory_mb)
            payload = pickle.dumps(("ok", fn(*args, **kwargs)), protocol=5)
            if len(payload) > max_result:
                payload = pickle.dumps(("output-too-large", len(payload)), protocol=5)
        except MemoryError:
            payload, retire = pickle.dumps(("memory", None), protocol=5), True  # its heap may be torn
        except BaseException as exc:  # noqa: BLE001 - every failure of fn travels back to the caller
            payload = pickle.dumps(("raise", _portable(exc)), protocol=5)
        finally:
            _cap_memory(None)
        conn.send_bytes(payload)
        if retire:
            return


# ---- the parent -----------------------------------------------------------------------------------------

class _Worker:
    def __init__(self, ctx: Any) -> None:
        self.conn, child = ctx.Pipe(duplex=True)
        self.proc = ctx.Process(target=_serve, args=(child,), daemon=True, name="clipbridge-sandbox")
        self.proc.start()
        child.close()

    def kill(self) -> int | None:
        """Stop the worker (SIGKILL if alive); its exit signal, or None when it exited normally."""
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(5)
        self.conn.close()
        code = self.proc.exitcode
        return -code if code is not None and code < 0 else None


class Pool:
    """Up to `size` workers, started lazily (or by warm()) and reused; a broken one is replaced."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.ctx = multiprocessing.get_context("forkserver")
        self.ctx.set_forkserver_preload(PRELOAD)
        self._idle: queue.LifoQueue[_Worker] = queue.LifoQueue()
        self._slots = threading.BoundedSemaphore(settings.sandbox_workers)
        self._lock = threading.Lock()
        self._all: set[_Worker] = set()

    def warm(self) -> None:
        """Start every worker now (a server calls this at start-up, so that no request pays for it)."""
        with self._lock:
            missing = self.settings.sandbox_workers - len(self._all)
        for _ in range(max(0, missing)):
            self._idle.put(self._new())

    def _new(self) -> _Worker:
        w = _Worker(self.ctx)
        with self._lock:
            self._all.add(w)
        return w

    def _acquire(self, timeout: float) -> _Worker:
        if not self._slots.acquire(timeout=timeout):
            raise SandboxBusy("every sandbox worker is busy; retry shortly")
        try:
            w = self._idle.get_nowait()
        except queue.Empty:
            try:
                return self._new()
            except BaseException:
                self._slots.release()
                raise
        return w if w.proc.is_alive() else self._replace(w)

    def _replace(self, w: _Worker) -> _Worker:
        self._discard(w)
        return self._new()

    def _discard(self, w: _Worker) -> int | None:
        with self._lock:
            self._all.discard(w)
        return w.kill()

    def _release(self, w: _Worker | None) -> None:
        if w is not None:
            self._idle.put(w)
        self._slots.release()

    def call(self, stage: str, fn: Callable[..., T], args: tuple, kwargs: dict, timeout_s: float,
             memory_mb: int | None) -> T:
        w = self._acquire(timeout_s)
        try:
            kind, value = self._exchange(w, (fn, args, kwargs, memory_mb, self.settings.sandbox_max_result_bytes),
                                         timeout_s)
        except _Broken as broken:
            sig = self._discard(w)
            self._release(None)
            raise SandboxError(stage, broken.reason, sig, broken.detail) from None
        except BaseException:  # the parent's own failure (pickling the arguments): the worker's state is unknown
            self._discard(w)
            self._release(None)
            raise
        if kind == "memory":  # the worker retires itself: its heap may be torn
            self._discard(w)
            self._release(None)
            raise SandboxError(stage, "memory", detail=f"limit {memory_mb} MiB above the worker's idle size")
        self._release(w)
        if kind == "output-too-large":
            raise SandboxError(stage, "output-too-large",
                               detail=f"{value} bytes, limit {self.settings.sandbox_max_result_bytes}")
        if kind == "raise":
            rebuild, state = pickle.loads(value)
            raise rebuild(*state)
        return value  # type: ignore[no-any-return]

    @staticmethod
    def _exchange(w: _Worker, message: tuple, timeout_s: float) -> tuple[str, Any]:
        try:
            w.conn.send(message)
            if not w.conn.poll(timeout_s):
                raise _Broken("timeout", f"limit {timeout_s:g} s")
            return pickle.loads(w.conn.recv_bytes())  # type: ignore[no-any-return]
        except (EOFError, BrokenPipeError, ConnectionResetError):
            raise _Broken("crashed") from None

    def close(self) -> None:
        with self._lock:
            workers, self._all = list(self._all), set()
        for w in workers:
            w.kill()


class _Broken(Exception):
    def __init__(self, reason: str, detail: str = "") -> None:
        self.reason, self.detail = reason, detail


class SandboxBusy(ClipBridgeError):
    """Every sandbox worker stayed busy for the whole time limit (503 with Retry-After)."""

    status = 503
    title = "Busy"
    retry_after = 1


_POOL: Pool | None = None
_POOL_LOCK = threading.Lock()


def pool() -> Pool:
    """This process's pool, made on first use from the CLIPBRIDGE_SANDBOX_* settings."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = Pool(Settings.from_env())
        return _POOL


def configure(settings: Settings) -> Pool:
    """Replace this process's pool with one made from `settings` (the app calls this at start-up)."""
    global _POOL
    with _POOL_LOCK:
        old, _POOL = _POOL, Pool(settings)
    if old is not None:
        old.close()
    return _POOL


def ensure(settings: Settings) -> Pool:
    """This process's pool, remade only when `settings` change its limits (apps made in one process share it)."""
    current = _POOL
    keys = ("sandbox_workers", "sandbox_memory_mb", "sandbox_timeout_seconds", "sandbox_max_result_bytes")
    if current is not None and all(getattr(current.settings, k) == getattr(settings, k) for k in keys):
        return current
    return configure(settings)


def run_isolated(stage: str, fn: Callable[..., T], /, *args: Any, timeout_s: float | None = None,
                 memory_mb: int | None = None, **kwargs: Any) -> T:
    """fn(*args, **kwargs) in a sandbox worker; SandboxError(stage, ...) when the worker crashes, hangs or
    passes a limit. `fn` must be a module-level function, its arguments and result picklable."""
    p = pool()
    timeout = p.settings.sandbox_timeout_seconds if timeout_s is None else timeout_s
    memory = p.settings.sandbox_memory_mb if memory_mb is None else memory_mb
    try:
        return p.call(stage, fn, args, kwargs, timeout, memory)
    except SandboxError as exc:
        log.warning("sandbox: %s", exc.message)
        raise
