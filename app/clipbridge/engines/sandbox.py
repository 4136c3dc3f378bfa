"""Native code on untrusted bytes runs in a reused child process, where a crash costs one answer.

`run_isolated(stage, fn, *args)` calls `fn(*args)` in a worker of a small pool and returns its result. A
worker is a fresh interpreter (`python -c`, never a fork of the server, whose threads and engine state a
fork would copy unsafely; not multiprocessing's spawn or forkserver either, whose children re-run the
parent's __main__) with onnx preloaded, and is reused across calls: the hot path costs one pickle round-trip
over a socket (a large bytes argument, an uploaded model, goes in a memory file beside it: sandbox_wire). Per
call, the child's address space is capped (RLIMIT_AS at its idle size plus `memory_mb`), the parent waits at
most `timeout_s` and the pickled result may not exceed
CLIPBRIDGE_SANDBOX_MAX_RESULT_BYTES. A worker that crashes, hangs (killed) or runs out of memory is
discarded and replaced; the parent raises SandboxError naming the stage. An exception `fn` raises in the
child is re-raised in the parent as the same type with the same fields (a ClipBridgeError keeps its `loc`).
Design and measured cost: docs/isolation.md.
"""

from __future__ import annotations

import atexit
import logging
import os
import pickle
import queue
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any, TypeVar

from clipbridge.core.errors import ClipBridgeError
from clipbridge.engines import sandbox_wire
from clipbridge.engines.sandbox_child import rebuild, safe_loads
from clipbridge.core.settings import Settings

T = TypeVar("T")
log = logging.getLogger("clipbridge.sandbox")


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
        return rebuild, (type(self), self.args, self.__dict__)


# ---- the parent -----------------------------------------------------------------------------------------

class _Worker:
    """One child: `python -c "from clipbridge.engines.sandbox_child import main; main(FD)"` on one end of a socket pair.

    Its working directory is an empty private directory of its own (mode 0700, removed with it): whatever an
    engine resolves relative to its working directory (an external-data location, say) finds nothing of the
    server's. Its import path is the server's, made absolute, so nothing is imported from that directory."""

    def __init__(self, stderr: int | None = None) -> None:
        ours, theirs = socket.socketpair()
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(os.path.abspath(p) for p in sys.path if p))
        code = f"from clipbridge.engines.sandbox_child import main; main({theirs.fileno()})"
        self.cwd = tempfile.mkdtemp(prefix="clipbridge-sandbox-")
        try:
            with ours, theirs:
                self.proc = subprocess.Popen([sys.executable, "-c", code], pass_fds=[theirs.fileno()], env=env,
                                             stdin=subprocess.DEVNULL, close_fds=True, cwd=self.cwd, stderr=stderr)
                self.conn = Connection(ours.detach())
        except BaseException:
            shutil.rmtree(self.cwd, ignore_errors=True)
            raise

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> int | None:
        """Stop the worker (SIGKILL if alive); its exit signal, or None when it exited normally."""
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            code = self.proc.wait(5)
        except subprocess.TimeoutExpired:
            code = None
        self.conn.close()
        shutil.rmtree(self.cwd, ignore_errors=True)
        return -code if code is not None and code < 0 else None


class Pool:
    """Up to `size` workers, started by warm() (or on demand) and reused; a broken one is replaced at once,
    in the background, so that the next call finds a started worker."""

    def __init__(self, settings: Settings, stderr: int | None = None) -> None:
        self.settings = settings
        self.stderr = stderr  # the workers' stderr: None inherits ours (the server's log); fleet: quiet.sink
        self.size = settings.sandbox_workers
        self._idle: queue.LifoQueue[_Worker] = queue.LifoQueue()
        self._slots = threading.BoundedSemaphore(self.size)  # calls in flight
        self._lock = threading.Lock()
        self._count = 0  # workers alive or starting
        self.closed = False

    def warm(self) -> None:
        """Start workers up to `size` (a server calls this at start-up, so that no request pays for it)."""
        while self._reserve():
            self._idle.put(self._new())

    def _reserve(self) -> bool:
        with self._lock:
            if self.closed or self._count >= self.size:
                return False
            self._count += 1
            return True

    def _new(self) -> _Worker:
        try:
            return _Worker(self.stderr)
        except BaseException:
            with self._lock:
                self._count -= 1
            raise

    def _discard(self, w: _Worker) -> int | None:
        with self._lock:
            self._count -= 1
        sig = w.kill()
        threading.Thread(target=self.warm, name="sandbox-replace", daemon=True).start()
        return sig

    def _acquire(self, timeout: float) -> _Worker:
        if not self._slots.acquire(timeout=timeout):
            raise SandboxBusy("every sandbox worker is busy; retry shortly")
        try:
            while True:
                w = self._take(timeout)
                if w.alive():
                    return w
                self._discard(w)
        except BaseException:
            self._slots.release()
            raise

    def _take(self, timeout: float) -> _Worker:
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            pass
        if self._reserve():
            return self._new()
        try:  # every worker exists: one is being started (or replaced) and comes back to the idle queue
            return self._idle.get(timeout=timeout)
        except queue.Empty:
            raise SandboxBusy("no sandbox worker could be started in time; retry shortly") from None

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
            sig = sig if broken.reason == "crashed" else None  # a timeout's SIGKILL is ours, not the model's
            raise SandboxError(stage, broken.reason, sig, broken.detail) from None
        except BaseException:  # the parent's own failure (pickling the arguments): the worker's state is unknown
            self._discard(w)
            self._release(None)
            raise
        if kind == "memory":  # the worker retires itself: its heap may be torn
            self._discard(w)
            self._release(None)
            raise SandboxError(stage, "memory", detail=f"limit {memory_mb} MiB above the worker's idle size")
        if self.closed:
            w.kill()
            w = None
        self._release(w)
        if kind == "output-too-large":
            raise SandboxError(stage, "output-too-large",
                               detail=f"{value} bytes, limit {self.settings.sandbox_max_result_bytes}")
        if kind == "raise":
            try:
                cls, args, state = safe_loads(value)
            except pickle.UnpicklingError as exc:  # a type the server has not loaded: fn's bug, said plainly
                raise RuntimeError(f"{stage}: the call raised an exception the server does not rebuild ({exc})") \
                    from None
            raise rebuild(cls, args, state)
        return value  # type: ignore[no-any-return]

    @staticmethod
    def _exchange(w: _Worker, message: tuple, timeout_s: float) -> tuple[str, Any]:
        try:
            sandbox_wire.send_call(w.conn, message)  # a large upload travels in a memory file beside it
            if not w.conn.poll(timeout_s):
                raise _Broken("timeout", f"limit {timeout_s:g} s")
            return safe_loads(w.conn.recv_bytes())  # type: ignore[no-any-return]
        except (EOFError, BrokenPipeError, ConnectionResetError):
            raise _Broken("crashed") from None
        except pickle.UnpicklingError as exc:  # a worker that sends more than data is not trusted again
            raise _Broken("crashed", f"its answer was refused ({exc})") from None

    def close(self) -> None:
        """Stop the idle workers; a call in flight finishes, and its worker is stopped when it comes back."""
        with self._lock:
            self.closed = True
        while True:
            try:
                self._idle.get_nowait().kill()
            except queue.Empty:
                return


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
        if _POOL is None or _POOL.closed:  # closed: configure() replaced it, or a test closed it
            _POOL = Pool(Settings.from_env())
        return _POOL


@atexit.register
def _close_at_exit() -> None:
    """Stop this process's idle workers and remove their directories (a worker killed with the server by
    PR_SET_PDEATHSIG would leave its empty directory behind)."""
    if _POOL is not None:
        _POOL.close()


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
    if current is not None and not current.closed and \
            all(getattr(current.settings, k) == getattr(settings, k) for k in keys):
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
