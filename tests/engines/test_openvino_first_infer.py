"""The process's first OpenVINO infer runs alone (app/clipbridge/engines/runtimes/openvino.py `_infer`): two first
infers at once deadlocked OpenVINO 2025.4's Python binding (a C++ static's guard against the GIL) in a fleet
test, the diff's plain run beside its marked one. Checked on the mechanism with a stand-in compiled model that
records how many calls overlap, since the deadlock itself is a race."""

from __future__ import annotations

import threading
import time

import pytest

from clipbridge.engines.runtimes import openvino as ov_runtime


class Overlap:
    """A compiled model's stand-in: each call sleeps a little and records the most calls inside at once."""

    def __init__(self) -> None:
        self.inside = self.most = 0
        self.lock = threading.Lock()

    def __call__(self, feeds):
        with self.lock:
            self.inside += 1
            self.most = max(self.most, self.inside)
        time.sleep(0.05)
        with self.lock:
            self.inside -= 1
        return feeds


def _at_once(compiled: Overlap, n: int = 2) -> None:
    start = threading.Barrier(n)
    threads = [threading.Thread(target=lambda: (start.wait(), ov_runtime._infer(compiled, {}))) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)


@pytest.mark.parametrize("primed, most", [
    pytest.param(False, 1, id="the-first-infers-one-at-a-time"),
    pytest.param(True, 2, id="later-infers-at-once"),
])
def test_only_the_first_infer_of_the_process_is_serialised(monkeypatch, primed, most):
    event = threading.Event()
    if primed:
        event.set()
    monkeypatch.setattr(ov_runtime, "_primed", event)
    compiled = Overlap()
    _at_once(compiled)
    assert compiled.most == most and event.is_set()
