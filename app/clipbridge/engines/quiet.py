"""The engines' and converters' own output kept off the user's terminal (issue 47): it goes to the log.

While the CLI runs engines and converters in its own process (`clipbridge diff`, `--fix`, a chain), whatever they
write to stderr goes to the logger `clipbridge.engines` at DEBUG, one record per line, instead of the terminal:
onnxruntime's and OpenVINO's C++ loggers (`[E:onnxruntime:...] Exception during initialization`), which write to
file descriptor 2 directly, and torch's, coremltools' and their dependencies' Python warnings, log records and
progress bars, which write to `sys.stderr`. `clipbridge -v` shows the log on stderr (`configure`); what clipbridge
itself says (its errors, its notes) is printed outside the block, so it always reaches the terminal.

Why redirect rather than set each library's log level: the lines come from a dozen places (two C++ loggers, torch's
logging and its exporter's registration warnings, coremltools' `Failed to load` lines and tqdm bars), some of them
configured at import time, and a new release adds others; one redirect of the stream they all share keeps every one
of them off the terminal, and loses none (they are in the log). A block is process-wide (file descriptor 2): the
CLI runs one command at a time, and the threads of a diff write into the same block."""

from __future__ import annotations

import logging
import os
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager

LOG = logging.getLogger("clipbridge.engines")
MAX_LINES = 2000  # lines logged per block (a progress bar redrawn per op writes thousands)


def configure(verbose: bool) -> None:
    """`clipbridge -v`: the log (the engines' own lines among it) on stderr; else only warnings of clipbridge's."""
    if verbose:
        logging.basicConfig(level=logging.DEBUG, stream=sys.stderr, format="%(name)s: %(message)s")


@contextmanager
def to_log(what: str) -> Iterator[None]:
    """While the block runs, file descriptor 2 writes to a temporary file; after it, each line is a DEBUG record of
    `clipbridge.engines`, prefixed with `what` (module docstring). `sys.stderr` is flushed on both sides and kept
    as it is (it writes to descriptor 2): a handler that took it during the block still works after it."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            _log(what, sink.read())


def _log(what: str, raw: bytes) -> None:
    """Each non-empty line once, a progress bar's carriage-return redraws as separate lines."""
    lines = [ln.strip() for ln in raw.decode(errors="replace").replace("\r", "\n").splitlines() if ln.strip()]
    for line in lines[:MAX_LINES]:
        LOG.debug("%s: %s", what, line)
    if len(lines) > MAX_LINES:
        LOG.debug("%s: %d more lines not logged", what, len(lines) - MAX_LINES)


def sink(what: str) -> int:
    """A pipe's write end to give child processes as their stderr (fleet's sandbox workers): each line they write
    becomes a DEBUG record of `clipbridge.engines` prefixed with `what`, read on a daemon thread, never the
    terminal. The pipe lives as long as this process; the workers started on it share it."""
    read, write = os.pipe()
    threading.Thread(target=_drain, args=(what, read), name=f"quiet-{what}", daemon=True).start()
    return write


def _drain(what: str, fd: int) -> None:
    with os.fdopen(fd, "rb") as lines:
        for raw in lines:
            line = raw.decode(errors="replace").strip()
            if line:
                LOG.debug("%s: %s", what, line)
