"""Module-level functions the sandbox tests run in a worker (a worker imports them by name)."""

from __future__ import annotations

import ctypes
import os
import signal
import time

import numpy as np

from clipbridge.core.errors import ArtifactError


def echo(*args: object, **kwargs: object) -> tuple:
    return args, kwargs


def pid() -> int:
    return os.getpid()


def double(a: np.ndarray) -> np.ndarray:
    return a * 2


def refuse(loc: str) -> None:
    raise ArtifactError("refused on purpose", loc)


def value_error() -> None:
    raise ValueError("plain")


def segfault() -> None:
    ctypes.string_at(0)  # reads address 0: SIGSEGV


def abort() -> None:
    os.kill(os.getpid(), signal.SIGABRT)


def exit_quietly() -> None:
    os._exit(3)


def hang(seconds: float) -> None:
    time.sleep(seconds)


def allocate(mb: int) -> int:
    return len(bytearray(mb * 2**20))


def big_result(n: int) -> bytes:
    return b"x" * n


class _Evil:
    def __reduce__(self):
        return (os.system, ("true",))


def evil_result() -> object:
    return _Evil()


def raise_protobuf_error() -> None:
    from google.protobuf.message import DecodeError
    raise DecodeError("bad bytes")


def digest(*args: object) -> list:
    """Each argument's type, length and sha256 (large arguments compared without sending them back)."""
    import hashlib
    return [(type(a).__name__, len(a), hashlib.sha256(a).hexdigest()) if isinstance(a, (bytes, bytearray)) else repr(a)
            for a in args]


def digest_then_crash(data: bytes) -> None:
    assert len(data) > 0
    segfault()


def write_engine_line() -> str:
    """What onnxruntime's C++ logger writes on a model it refuses, straight to file descriptor 2."""
    os.write(2, b"[E:onnxruntime:, inference_session.cc:2544] Exception during initialization\n")
    return "ran"
