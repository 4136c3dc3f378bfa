"""Freed memory back to the system once an engine drops a model's weights (issue 46).

Why: glibc's malloc raises its mmap threshold after the first large free, so the second engine session's weight
buffers come from the heap, and freeing them keeps the pages in this process. On a 500 MB model with its weights
on disk the diff then peaked at 1587 MiB, the next engine's compile on top of the last one's freed weights; with
a trim after each session, 1135 MiB against the plain runs' 1095 (docs/performance.md). A no-op where the C
library has no malloc_trim (macOS, musl).

The trim comes when the next session is another engine's (`before`), not after every session: an engine's second
session (the marked run after the plain one) allocates what its first freed, so the heap's pages can serve it
again without growing it. For that they must stay in the heap: `before` first fixes malloc's thresholds (buffers
up to 32 MiB from the heap, no automatic trim), else the first session's buffers are mmapped and unmapped and
the second faults every page in again. Measured on a 2.2 GB model: onnxruntime's marked session 1.1-1.4 s
against 2.1 s, the peak unchanged (docs/performance.md). The thresholds stay so for the process (a CLI run, a
fleet worker, which calls `release` after each model); the server never loads such a model.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Callable
from functools import lru_cache


M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters (malloc.h)
MMAP_THRESHOLD = 32 << 20  # glibc's largest (DEFAULT_MMAP_THRESHOLD_MAX on 64-bit)
NO_AUTOMATIC_TRIM = 2**31 - 1  # mallopt takes a C int: 2 GiB of free heap top before glibc trims it itself


@lru_cache(maxsize=1)
def _libc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.malloc_trim, libc.mallopt  # noqa: B018 - both, or neither is used (musl, macOS)
        return libc
    except (OSError, AttributeError):  # no glibc here
        return None


def _trim() -> Callable[[int], int] | None:
    libc = _libc()
    return None if libc is None else libc.malloc_trim  # type: ignore[no-any-return]


@lru_cache(maxsize=1)
def _keep_freed_pages() -> None:
    """Once per process: freed buffers stay in the heap for the next session of the same engine."""
    libc = _libc()
    if libc is not None:
        libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)
        libc.mallopt(M_TRIM_THRESHOLD, NO_AUTOMATIC_TRIM)


_last: list[str] = []  # the engine whose session freed its weights last (one process: one entry)


def before(engine: str) -> None:
    """Called before an engine loads a model whose weights are large: trim when the last such session was another
    engine's (its freed pages would not fit this one's pattern and only grow the peak)."""
    _keep_freed_pages()
    if _last and _last[0] != engine:
        release()
    _last[:] = [engine]


def release() -> None:
    """Return the heap's free pages to the system (malloc_trim(0)): a few milliseconds. The next session, of any
    engine, starts from a trimmed heap."""
    _last.clear()
    trim = _trim()
    if trim is not None:
        trim(0)
