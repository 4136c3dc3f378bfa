"""What the HTTP benchmarks share: a free local port, and a server process started, awaited and stopped."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def started(argv: list[str], port: int, wait_s: float = 60.0) -> Iterator[subprocess.Popen]:
    """`argv` run from the repository's root until /healthz on `port` answers (at most `wait_s`), then stopped."""
    proc = subprocess.Popen(argv, cwd=Path(__file__).resolve().parents[1], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
                break
            except OSError:
                time.sleep(0.2)
        yield proc
    finally:
        proc.terminate()
        proc.wait()
