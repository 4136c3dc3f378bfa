"""Progress on stderr: a bar redrawn in place on a terminal (done, cached, differing, failed, rate, ETA), one plain
line per model otherwise (a CI log, a Kubernetes pod's log)."""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from clipbridge.fleet.reports import passes, state

WIDTH = 28


class Progress:
    def __init__(self, total: int, stream: TextIO | None = None, tty: bool | None = None) -> None:
        self.total, self.stream = total, stream or sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.done = self.cached = self.differ = self.failed = 0
        self.start = time.monotonic()

    def update(self, r: dict[str, Any]) -> None:
        self.done += 1
        self.cached += bool(r["cached"])
        self.failed += bool(r["error"])
        self.differ += not r["error"] and not passes(r)
        if self.tty:
            self.stream.write("\r" + self.bar())
        else:
            self.stream.write(f"[{self.done}/{self.total}] {r['model']}: {state(r)}"
                              f"{' (cached)' if r['cached'] else ''} {r['seconds']:.2f}s\n")
        self.stream.flush()

    def bar(self) -> str:
        elapsed = max(time.monotonic() - self.start, 1e-9)
        rate = self.done / elapsed
        eta = (self.total - self.done) / rate if rate else 0.0
        filled = int(WIDTH * self.done / self.total) if self.total else WIDTH
        return (f"[{'#' * filled}{'.' * (WIDTH - filled)}] {self.done}/{self.total} cached {self.cached} "
                f"differ {self.differ} failed {self.failed} {rate:.1f}/s ETA {eta:.0f}s ")

    def finish(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()
