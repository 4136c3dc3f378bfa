"""The local backend's scheduling (app/clipbridge/fleet/local.py, app/clipbridge/fleet/slots.py): workers started as soon as the run finds
a model to compute and none on a cached run, the replacement of a recycled worker started ahead of time, a spent
slot handing its model back at the end of a run, and the parent's writes on a thread of their own."""

from __future__ import annotations

import os
import queue
import signal
import threading
import time
from pathlib import Path

import pytest

from clipbridge.engines import threads
from clipbridge.fleet import job, local, runner, slots, sources
from clipbridge.fleet.backends import Limits
from clipbridge.fleet.sources import file_sha256
from clipbridge.fleet.store import read_jsonl
from tests.fleet.conftest import answers, config, quiet

ENGINES = ("onnxruntime", "openvino")


def _task(path: Path) -> job.Task:
    return job.Task(str(path), str(path), file_sha256(path), None, ENGINES, "model", 20240)


def test_a_worker_starts_at_the_first_model_to_compute_while_the_rest_are_hashed(registry, monkeypatch, tmp_path):
    events: list[str] = []
    describe, start = sources.describe, local.Workers.start
    monkeypatch.setattr(runner, "describe", lambda *a: (events.append("hash"), describe(*a))[1])
    monkeypatch.setattr(local.Workers, "start", lambda self, n=1: (events.append(f"start {n}"), start(self, n))[1])
    runner.run(config([str(registry)], tmp_path / "out", tmp_path / "cache", workers=2), quiet())
    assert events[:3] == ["hash", "start 1", "hash"] and "start 2" in events
    assert events.index("start 2") < len(events) - 1 - events[::-1].index("hash")  # before the last model is hashed


def test_a_cached_run_starts_no_worker(registry, baseline, cache_copy, monkeypatch, tmp_path):
    monkeypatch.setattr(slots, "Started", lambda *a: pytest.fail("a worker was started for a cached run"))
    runner.run(config([str(registry)], tmp_path / "out", cache_copy), quiet())
    assert all(r["cached"] for r in read_jsonl(tmp_path / "out" / "results.jsonl"))


def test_the_replacement_is_started_before_the_recycled_worker_is_done(registry):
    """--recycle 2, more models waiting: after the first model the spare is warming; the third model runs on it."""
    task = _task(sorted(registry.rglob("*.onnx"))[0])
    slot = slots.Slot(Limits(workers=1, recycle=2), job.Warm(ENGINES))
    try:
        records = [slot.run(task, waiting=5)[0]]
        spare = slot.spare
        records += [slot.run(task, waiting=4)[0], slot.run(task, waiting=3)[0]]
        assert spare is not None and slot.current is spare and slot.used == 1
    finally:
        slot.close()
    assert answers(records) == answers(records[:1]) * 3


@pytest.mark.parametrize("used,waiting,others,mean_s,expected", [
    pytest.param(9, 50, 0, 0.04, True, id="alone-work-left"),
    pytest.param(9, 0, 0, 0.04, False, id="alone-queue-empty"),
    pytest.param(9, 3, 1, 0.04, False, id="end-of-run-the-other-slot-finishes-sooner"),
    pytest.param(9, 60, 1, 0.04, True, id="long-queue-with-another-slot"),
    pytest.param(5, 9, 0, 0.04, True, id="alone-more-than-the-worker-takes"),
    pytest.param(5, 3, 0, 0.04, False, id="alone-the-current-worker-takes-them-all"),
])
def test_a_spare_is_started_only_when_it_will_have_work(used, waiting, others, mean_s, expected):
    slot = slots.Slot.__new__(slots.Slot)  # its decision alone: no process started
    slot.limits, slot.used, slot.done, slot.busy_s = Limits(recycle=10), used, 1, mean_s
    slot.current = type("Ready", (), {"ready_s": 0.5})()
    assert slot._needs_spare(waiting, others) is expected


class _Spent:
    """A slot whose worker is spent (or not), without processes."""

    def __init__(self, spent: bool, sooner: bool) -> None:
        self._spent, self._sooner = spent, sooner

    def spent(self) -> bool:
        return self._spent

    def others_sooner(self, remaining: int, others: int) -> bool:
        return self._sooner and others > 0


@pytest.mark.parametrize("spent,sooner,active,takes", [
    pytest.param(False, True, 2, True, id="not-spent"),
    pytest.param(True, False, 2, True, id="spent-but-a-cold-start-pays"),
    pytest.param(True, True, 2, False, id="spent-the-other-slot-takes-it"),
    pytest.param(True, True, 1, True, id="spent-and-the-last-slot"),
])
def test_a_spent_slot_hands_its_model_back_only_to_a_slot_still_running(spent, sooner, active, takes):
    workers = local.Workers(Limits(workers=2), job.Warm(ENGINES))
    workers._active = active
    todo: queue.Queue[str] = queue.Queue()
    todo.put("model")
    got = workers._next(_Spent(spent, sooner), todo)  # type: ignore[arg-type]
    assert (got == "model") is takes and todo.qsize() == (0 if takes else 1)
    assert workers._active == (active if takes else active - 1)


def test_the_writer_keeps_the_order_and_reports_a_failed_write():
    seen: list[int] = []

    def done(record: dict, cacheable: bool) -> None:
        if record["n"] == 2:
            raise OSError("disk full")
        seen.append(record["n"])

    writer = local.Writer(done)
    for n in range(4):
        writer.put({"n": n}, True)
    with pytest.raises(OSError, match="disk full"):
        writer.close()
    assert seen == [0, 1] and writer.failed  # nothing after the failed write: the loops stop


def test_the_warm_up_imports_the_engines_and_sets_their_threads():
    import sys
    try:
        start = time.perf_counter()
        seconds = job.warm(job.Warm(ENGINES, threads=1))
        assert 0 < seconds <= time.perf_counter() - start  # the time the warm-up itself took
        assert threads.engine_threads() == 1 and {"onnxruntime", "openvino"} <= set(sys.modules)
    finally:
        threads.set_engine_threads(None)


def _kill_when_busy(slot: slots.Slot, killed: list[int]) -> threading.Thread:
    """SIGKILL the slot's worker process as soon as a model is handed to it (it leaves the idle queue), mid-model:
    a diff takes far longer than this thread's millisecond polls."""
    slot.current.wait()  # warmed up: the pool of one has its worker waiting in its idle queue
    idle = slot.current.pool._idle
    worker = idle.queue[0]

    def kill() -> None:
        deadline = time.monotonic() + 60
        while idle.qsize() and time.monotonic() < deadline:  # idle: not yet handed the model
            time.sleep(0.0005)
        os.kill(worker.proc.pid, signal.SIGKILL)
        killed.append(worker.proc.pid)
    thread = threading.Thread(target=kill, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize(("retries", "answered"), [
    pytest.param(1, True, id="retried-on-a-fresh-worker"),
    pytest.param(0, False, id="no-retry-left-an-error-not-cached"),
])
def test_a_worker_killed_mid_model_is_replaced_and_the_model_retried(registry, retries, answered):
    task = _task(sorted(registry.rglob("*.onnx"))[1])
    slot = slots.Slot(Limits(workers=1, retries=retries), job.Warm(ENGINES))
    killed: list[int] = []
    try:
        killer = _kill_when_busy(slot, killed)
        record, cacheable = slot.run(task)
        killer.join()
        survivor = slot.current.pool._idle.queue[0].proc.pid if answered else None
    finally:
        slot.close()
    assert len(killed) == 1 and survivor != killed[0]
    if answered:  # the answer of a run nobody killed, and cached like one
        assert cacheable and answers([record]) == answers([job.run_one(task)])
    else:
        assert not cacheable and record["verdict"] == "error" and "tried 1 times" in record["error"], record
