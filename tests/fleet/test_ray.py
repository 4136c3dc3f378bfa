"""The Ray backend gives the local backend's results.jsonl (apart from `seconds`); a task whose worker dies is
retried a bounded number of times, then recorded as an error. Ray runs small here (2 CPUs shared)."""

from __future__ import annotations

import os

import pytest

from clipbridge.fleet import backends, job, runner
from clipbridge.fleet.backends import Limits
from clipbridge.fleet.store import read_jsonl
from tests.fleet.conftest import config, quiet
from tests.fleet.test_envs import PINNED

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def local_ray():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ray.init(num_cpus=2, object_store_memory=100 * 1024 * 1024, include_dashboard=False, log_to_driver=False,
             configure_logging=False, runtime_env={"env_vars": {"PYTHONPATH": root}})
    yield
    ray.shutdown()


def _no_seconds(records: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "seconds"} for r in records]


@pytest.mark.slow
def test_ray_gives_the_local_results(local_ray, registry, baseline, tmp_path):
    """A fresh cache, so that Ray computes every model: the lines equal the local run's apart from seconds."""
    code = runner.run(config([str(registry)], tmp_path / "out", tmp_path / "cache", backend="ray"), quiet())
    assert code == baseline[2]
    assert _no_seconds(read_jsonl(tmp_path / "out" / "results.jsonl")) == \
        _no_seconds(read_jsonl(baseline[0] / "results.jsonl"))


def _die(task: job.Task) -> dict:
    os._exit(9)  # the worker process dies, as an engine crash would take it down


@pytest.mark.slow
def test_a_dying_task_is_retried_then_recorded_as_an_error(local_ray, registry, monkeypatch):
    monkeypatch.setattr(job, "run_one", _die)
    task = job.Task("m.onnx", str(next(registry.rglob("*.onnx"))), "0" * 64, None, ("onnxruntime", "openvino"),
                    "model", 0)
    got: list[tuple[dict, bool]] = []
    backends.run_ray([task], Limits(workers=1, retries=1), lambda r, c: got.append((r, c)), None, {})
    (record, cacheable), = got
    assert record["verdict"] == "error" and "tried 2 times" in record["error"] and not cacheable


def test_pinned_engines_become_the_tasks_runtime_env():
    assert backends.runtime_env({"openvino": "2025.4.0"}) == {"pip": ["openvino==2025.4.0"]}
    assert backends.runtime_env({}) is None


@pytest.mark.slow
def test_a_pinned_engine_runs_its_own_version_on_ray(local_ray, registry, tmp_path):
    """A real local run: Ray builds the task's runtime_env (`pip: openvino==PINNED`) and the results name the
    version that ran there, with the answers the local backend's pinned environment gives (tests/fleet/test_envs.py
    checks those against `clipbridge diff` run whole by that environment)."""
    sources = [str(p) for p in sorted(registry.rglob("*.onnx"))[:4:3]]  # a clean and a NaN-hazard model
    engines = ("onnxruntime", f"openvino=={PINNED}")
    code = runner.run(config(sources, tmp_path / "ray", tmp_path / "cache-ray", engines=engines, backend="ray"),
                      quiet())
    on_ray = read_jsonl(tmp_path / "ray" / "results.jsonl")
    assert [r["error"] for r in on_ray] == [None, None], on_ray
    assert all(r["engines"][1]["version"].startswith(PINNED) for r in on_ray), [r["engines"] for r in on_ray]
    local = runner.run(config(sources, tmp_path / "local", tmp_path / "cache-local", engines=engines), quiet())
    assert (code, _no_seconds(on_ray)) == (local, _no_seconds(read_jsonl(tmp_path / "local" / "results.jsonl")))
