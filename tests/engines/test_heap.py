"""app/clipbridge/engines/heap.py: the heap is trimmed when a large model's next session is another engine's, not
between one engine's plain and marked sessions (whose freed pages serve the second); a diff of a model whose
weights stay on disk goes through it in that order (tests/diff/test_weightless.py runs such diffs)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import clipbridge
from clipbridge.engines import heap


@pytest.fixture
def trims(monkeypatch):
    calls: list[int] = []
    monkeypatch.setattr(heap, "_trim", lambda: calls.append)
    monkeypatch.setattr(heap, "_last", [])
    return calls


@pytest.mark.parametrize("sessions, expected", [
    pytest.param(["onnxruntime", "onnxruntime"], 0, id="one-engines-two-sessions-share-the-pages"),
    pytest.param(["onnxruntime", "onnxruntime", "openvino", "openvino"], 1, id="a-trim-at-the-engine-switch"),
    pytest.param(["onnxruntime", "openvino", "onnxruntime"], 2, id="every-switch"),
    pytest.param(["openvino"], 0, id="the-first-session-finds-nothing-to-trim"),
])
def test_trims_only_when_the_engine_changes(trims, sessions, expected):
    for engine in sessions:
        heap.before(engine)
    assert len(trims) == expected


def test_a_release_trims_and_the_next_session_starts_afresh(trims):
    heap.before("openvino")
    heap.release()
    heap.before("onnxruntime")  # nothing left of openvino's: no second trim
    assert trims == [0]


def test_glibc_takes_the_thresholds():
    """mallopt answers 1 for each value (0: refused, e.g. one past a C int), in a process of its own: the test
    process keeps its own malloc settings."""
    if heap._libc() is None:
        pytest.skip("no glibc: heap is a no-op here")
    code = ("from clipbridge.engines import heap; libc = heap._libc(); "
            "print(libc.mallopt(heap.M_MMAP_THRESHOLD, heap.MMAP_THRESHOLD), "
            "libc.mallopt(heap.M_TRIM_THRESHOLD, heap.NO_AUTOMATIC_TRIM))")
    root = str(Path(clipbridge.__file__).resolve().parents[1])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": root})
    assert out.stdout.split() == ["1", "1"]
