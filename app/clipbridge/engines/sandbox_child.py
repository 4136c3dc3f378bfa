"""The worker side of app/clipbridge/engines/sandbox.py, and the wire format both sides share.

A worker is `python -c "from clipbridge.engines.sandbox_child import main; main(FD)"`: it preloads onnx, then runs one call
per message on its socket. What it sends back is read by the parent with safe_loads, an unpickler that
builds only plain data, NumPy arrays and exception objects: a worker that native code on a hostile upload
took over can send the server bytes, never code to run.
"""

from __future__ import annotations

import ctypes
import io
import os
import pickle
import resource
import signal as signals
import sys
from multiprocessing.connection import Connection
from typing import Any

from clipbridge.engines import sandbox_wire

# Imported when a worker starts, so that its first call does not pay for them.
PRELOAD = ("numpy", "onnx", "onnx.checker", "onnx.shape_inference", "onnx.version_converter")
PR_SET_PDEATHSIG = 1
# What a result may be built from besides plain data: NumPy's array and scalar reconstruction and dtypes.
ALLOWED_GLOBALS = {("numpy._core.numeric", "_frombuffer"), ("numpy.core.numeric", "_frombuffer"),
                   ("numpy._core.multiarray", "_reconstruct"), ("numpy.core.multiarray", "_reconstruct"),
                   ("numpy._core.multiarray", "scalar"), ("numpy.core.multiarray", "scalar"),
                   ("numpy", "ndarray"), ("numpy", "dtype"), ("builtins", "object"),
                   ("copyreg", "__newobj__"), ("copyreg", "_reconstructor"), ("builtins", "set"),
                   ("builtins", "frozenset"), ("builtins", "complex"), ("builtins", "slice")}


def rebuild(cls: type[BaseException], args: tuple, state: dict) -> BaseException:
    """An exception of type `cls` with its args and fields (default exception pickling drops `loc`)."""
    if not (isinstance(cls, type) and issubclass(cls, BaseException)):
        raise pickle.UnpicklingError("a sandbox result may only rebuild exceptions")
    exc = cls.__new__(cls)
    exc.args = tuple(args)
    exc.__dict__.update(state)
    return exc


class _SafeUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in ALLOWED_GLOBALS or module == "ml_dtypes":  # ml_dtypes: bfloat16/float8 dtypes
            return super().find_class(module, name)
        # Anything else only from a module this process has already imported (nothing is imported on a
        # worker's word), and only a class: an exception's type, or one of the project's own data classes.
        loaded = sys.modules.get(module)
        found = getattr(loaded, name, None) if loaded is not None and "." not in name else None
        if isinstance(found, type) and (issubclass(found, BaseException) or module.startswith("clipbridge.")):
            return found
        raise pickle.UnpicklingError(f"a sandbox result may not refer to {module}.{name}")


def safe_loads(data: bytes) -> Any:
    """pickle.loads for what a worker sent: data, arrays and exceptions only (never a callable to run)."""
    return _SafeUnpickler(io.BytesIO(data)).load()


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


def _portable(exc: BaseException) -> bytes:
    """The exception pickled with its fields (default exception pickling drops attributes like `loc`)."""
    try:
        return pickle.dumps((type(exc), exc.args, dict(exc.__dict__)), protocol=5)
    except Exception:  # an unpicklable exception or field: its type name and text still travel
        return pickle.dumps((RuntimeError, (f"{type(exc).__name__}: {str(exc)[:2000]}",), {}), protocol=5)


def main(fd: int) -> None:
    """A worker process: preload, then serve calls on the socket `fd` until the parent goes."""
    signals.signal(signals.SIGINT, signals.SIG_IGN)  # Ctrl-C stops the server, which then closes our socket
    try:  # Linux: die with the parent even while busy (a hung call would otherwise outlive a killed server)
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signals.SIGKILL)
    except (OSError, AttributeError):
        pass
    for name in PRELOAD:
        __import__(name)
    _serve(Connection(fd))


def _serve(conn: Connection) -> None:
    """A worker's loop: one call per message until the parent closes the socket."""
    while True:
        try:
            call = sandbox_wire.receive_call(conn)
            if call is None:
                return
            fn, args, kwargs, memory_mb, max_result = call
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
            payload = pickle.dumps(("raise", _portable(exc)), protocol=5)  # nested: decoded on its own
        finally:
            _cap_memory(None)
        conn.send_bytes(payload)
        if retire:
            return
