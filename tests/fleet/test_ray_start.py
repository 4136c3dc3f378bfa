"""Without --ray-address the Ray backend starts a local Ray instance for the run and stops it after."""

from __future__ import annotations

import pytest

from clipbridge.fleet import runner
from clipbridge.fleet.store import read_jsonl
from tests.fleet.conftest import config, quiet

ray = pytest.importorskip("ray")


@pytest.mark.slow
def test_the_ray_backend_starts_and_stops_its_own_instance(registry, baseline, tmp_path, monkeypatch):
    if ray.is_initialized():
        pytest.skip("a Ray instance is already up in this process")
    monkeypatch.setenv("CLIPBRIDGE_FLEET_RAY_OBJECT_STORE", str(100 * 1024 * 1024))
    model = sorted(registry.rglob("*.onnx"))[0]
    runner.run(config([str(model)], tmp_path / "out", tmp_path / "cache", backend="ray", workers=1), quiet())
    assert not ray.is_initialized()
    (record,) = read_jsonl(tmp_path / "out" / "results.jsonl")
    expected = next(r for r in read_jsonl(baseline[0] / "results.jsonl") if r["model"] == str(model))
    # the path inside the registry is relative to the SOURCE: a file given alone is its file name
    assert record["path"] == model.name and expected["path"] == f"{model.parent.name}/{model.name}"
    assert {**record, "seconds": 0, "path": None} == {**expected, "seconds": 0, "path": None}
