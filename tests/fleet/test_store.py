"""app/clipbridge/fleet/store.py's durability: entries are atomic whatever kills the process, reach the disk at least every
SYNC_EVERY_S and at a run's end, and an entry a crashed machine left empty or cut short reads as absent."""

from __future__ import annotations

import os

import pytest

from clipbridge.fleet import runner, store
from tests.fleet.conftest import config, quiet


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def synced(monkeypatch):
    calls: list[str] = []
    monkeypatch.setattr(store, "sync_filesystem", lambda path: calls.append(str(path)))
    return calls


def test_entries_are_flushed_at_most_every_interval_not_one_by_one(tmp_path, synced, monkeypatch):
    clock = Clock()
    monkeypatch.setattr(store.time, "monotonic", clock)
    cache = store.Cache(tmp_path)
    for k in range(5):  # within one interval: written, readable, not yet flushed
        cache.put(f"{k:04x}" * 8, {"k": k})
    assert synced == [] and cache.get(f"{3:04x}" * 8) == {"k": 3}
    clock.now += store.SYNC_EVERY_S
    cache.put("ffff" * 8, {"k": 9})
    assert synced == [str(tmp_path)]
    cache.sync()  # nothing written since: nothing to flush
    assert synced == [str(tmp_path)]


CUT = {
    "empty (the rename reached the disk, the data did not)": "",
    "cut short": '{"model": "a.onnx", "verdict": "eq',
    "not JSON": "\x00\x00\x00",
}


@pytest.mark.parametrize("text", CUT.values(), ids=CUT.keys())
def test_an_entry_a_crash_left_behind_reads_as_absent(tmp_path, text):
    cache = store.Cache(tmp_path)
    key = "ab" * 32
    path = tmp_path / key[:2] / f"{key}.json"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    assert cache.get(key) is None  # computed again, then rewritten whole


def test_a_run_flushes_its_cache_before_its_reports(registry, tmp_path, synced):
    runner.run(config([str(registry)], tmp_path / "out", tmp_path / "cache"), quiet())
    assert synced and synced[-1] == str(tmp_path / "cache" / "results")


class Spy:
    """The C library, its syncfs watched: which file system each call flushed, and its result."""

    def __init__(self, result: int | None = None) -> None:
        self.real = store._libc()
        self.devices: list[int] = []
        self.result = result

    def syncfs(self, fd: int) -> int:
        self.devices.append(os.fstat(fd).st_dev)
        return self.real.syncfs(fd) if self.result is None else self.result


def test_the_file_system_flush_runs_here_on_the_path_s_file_system(tmp_path, monkeypatch):
    if getattr(store._libc(), "syncfs", None) is None:  # derived from the host: a C library without syncfs
        calls: list[int] = []
        monkeypatch.setattr(store.os, "sync", lambda: calls.append(1))
        store.sync_filesystem(tmp_path)
        assert calls == [1]
        return
    spy = Spy()
    monkeypatch.setattr(store, "_libc", lambda: spy)
    assert store.sync_filesystem(tmp_path) is None  # the real syncfs answered 0
    assert spy.devices == [os.stat(tmp_path).st_dev]


def test_a_failed_flush_is_an_error_not_silence(tmp_path, monkeypatch):
    spy = Spy(result=-1)
    monkeypatch.setattr(store, "_libc", lambda: spy)
    with pytest.raises(OSError, match="syncfs failed"):
        store.sync_filesystem(tmp_path)
    with pytest.raises(FileNotFoundError):
        store.sync_filesystem(tmp_path / "absent")
