"""Freed memory back to the system once an engine drops a model's weights (issue 46).

Why: glibc's malloc raises its mmap threshold after the first large free, so the second engine session's weight
buffers come from the heap, and freeing them keeps the pages in this process. On a 500 MB model with its weights
on disk the diff then peaked at 1587 MiB, the next engine's compile on top of the last one's freed weights; with
a trim after each session, 1135 MiB against the plain runs' 1095 (docs/performance.md). A no-op where the C
library has no malloc_trim (macOS, musl).
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Callable
from functools import lru_cache


@lru_cache(maxsize=1)
def _trim() -> Callable[[int], int] | None:
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim  # type: ignore[no-any-return]
    except (OSError, AttributeError):  # no glibc here
        return None


def release() -> None:
    """Return the heap's free pages to the system (malloc_trim(0)): a few milliseconds."""
    trim = _trim()
    if trim is not None:
        trim(0)
