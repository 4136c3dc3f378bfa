"""Atomic files: the content-addressed cache and the run's journal. A killed run (SIGKILL included) leaves
either the old file or the new one, never half of one, and never a half line in the journal.

Durability (decision): a process's kill loses nothing it wrote (the kernel keeps the written pages), so the cache's
entries are not fsynced one by one: the cache flushes its file system once every SYNC_EVERY_S while entries are
written, and when the run ends (`Cache.sync`). A machine that crashes loses at most the last SYNC_EVERY_S of
entries; one left empty or cut short reads as absent and is computed again (`Cache.get`). Why: an fsync per
model made the kernel commit its journal for every 30 ms model; two workers on two cores then ran ~3% slower
(docs/performance.md, fleet's sixth pass)."""

from __future__ import annotations

import ctypes
import functools
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

JOURNAL = "results.partial.jsonl"
SYNC_EVERY_S = 1.0  # the cache's entries reach the disk at least this often while a run writes them


def atomic_write(path: Path, text: str, durable: bool = True) -> None:
    """Write a sibling temporary file, fsync it (`durable`), then rename it over `path` (rename is atomic on
    POSIX)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            if durable:
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def dumps(record: dict[str, Any]) -> str:
    """One JSON line: sorted keys, no NaN (witness numbers are already wire numbers)."""
    return json.dumps(record, sort_keys=True, allow_nan=False, separators=(",", ":"))


class Cache:
    """key -> the result record, one file per key under DIR/xx/key.json (two-level fan-out)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._dirty = False
        self._synced = time.monotonic()

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        try:
            return json.loads(self._path(key).read_text(encoding="utf-8"))  # type: ignore[no-any-return]
        except (OSError, ValueError):  # absent, or unreadable: recomputed and rewritten
            return None

    def put(self, key: str, record: dict[str, Any]) -> None:
        atomic_write(self._path(key), dumps(record) + "\n", durable=False)
        self._dirty = True
        if time.monotonic() - self._synced >= SYNC_EVERY_S:
            self.sync()

    def sync(self) -> None:
        """Flush every entry written so far to the disk (the file system the cache lives on)."""
        if self._dirty:
            sync_filesystem(self.root)
            self._dirty = False
        self._synced = time.monotonic()


@functools.lru_cache(maxsize=1)
def _libc() -> ctypes.CDLL:
    """The C library this process already has loaded (once: the writer flushes every second)."""
    return ctypes.CDLL(None, use_errno=True)


def sync_filesystem(path: Path) -> None:
    """Flush the file system holding `path` to its disk: Linux's syncfs, one call for every entry written; where
    the C library has none, os.sync."""
    syncfs = getattr(_libc(), "syncfs", None)
    if syncfs is None:
        os.sync()
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        if syncfs(fd) != 0:
            raise OSError(ctypes.get_errno(), f"syncfs failed for {path}")
    finally:
        os.close(fd)


class Journal:
    """The run's progress: one complete line per finished model, appended with a single write (a SIGKILL loses
    nothing written; not fsynced: resuming reads the cache, which is flushed, and the journal is for people)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._repair()
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def _repair(self) -> None:
        """Drop a trailing line without its newline (a write cut by a kill): that model runs again."""
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            atomic_write(self.path, data[: data.rfind(b"\n") + 1].decode("utf-8", "replace"))

    def append(self, record: dict[str, Any]) -> None:
        os.write(self._fd, (dumps(record) + "\n").encode())

    def close(self) -> None:
        os.close(self._fd)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The complete lines of a JSONL file (a line cut short is skipped)."""
    if not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out
