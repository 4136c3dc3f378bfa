"""`--engine openvino==2025.4.0`: the pinned version runs in an environment clipbridge builds once and reuses,
next to the installed one, and the results name the version that really ran. The oracle is `clipbridge diff`
run whole by that environment's interpreter."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from clipbridge.fleet import envs, runner
from clipbridge.fleet.keys import EngineSpec, cache_key, parse_engine
from clipbridge.fleet.store import read_jsonl
from tests.fleet.conftest import config, quiet

PINNED = "2025.4.0"  # an OpenVINO release other than the one installed (openvino==2026.4.1 in [dev])


def built(cache: Path) -> Path:
    """The cache with the pinned environment built in it. A build that fails is the test's failure, not a skip:
    building it is the mechanism under test (a CI without the package index fails here, saying why)."""
    envs.build(cache, EngineSpec("openvino", PINNED), log=lambda _: None)
    return cache


@pytest.fixture(scope="session")
def env_cache(tmp_path_factory) -> Path:
    return built(tmp_path_factory.mktemp("envcache"))


def test_a_failed_build_of_the_pinned_environment_fails_the_tests(tmp_path, monkeypatch):
    def no_index(*args, **kwargs):
        raise envs.ClipBridgeError(f"could not install openvino=={PINNED}: no index", "--engine")
    monkeypatch.setattr(envs, "build", no_index)
    with pytest.raises(envs.ClipBridgeError, match="could not install"):  # raised as is: pytest.skip is not
        built(tmp_path)                                                    # an exception of this kind


@pytest.mark.slow
def test_a_pinned_engine_runs_its_own_version(registry, env_cache, tmp_path):
    sources = [str(p) for p in sorted(registry.rglob("*.onnx"))[:4:3]]  # a clean and a NaN-hazard model
    code = runner.run(config(sources, tmp_path / "out", env_cache, engines=("onnxruntime", f"openvino=={PINNED}")),
                      quiet())
    records = read_jsonl(tmp_path / "out" / "results.jsonl")
    assert code in (0, 1) and all(r["error"] is None for r in records)
    python = envs.build(env_cache, EngineSpec("openvino", PINNED))  # built once: reused, not rebuilt
    # clipbridge as fleet's own child finds it (envs.code_root: app/ of this checkout; none from a site-packages)
    root = envs.code_root()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | ({"PYTHONPATH": root} if root else {})
    for r in records:
        assert r["engines"][1]["version"].startswith(PINNED) and r["engines"][0]["name"] == "onnxruntime"
        assert (r["engines"][1]["settings"]["inference_num_threads"], r["engines"][1]["settings"]["cpu_pinning"]) == \
            (1, False)  # the pinned engine's interpreter runs it on one thread too
        done = subprocess.run([python, "-m", "clipbridge.cli.main", "diff", r["model"], "--format", "json"], env=env,
                              capture_output=True, text=True, cwd=tmp_path)
        body = json.loads(done.stdout)
        assert body["engines"][1]["version"] == r["engines"][1]["version"]
        edge = body["edge"]  # the pass a fleet runs (issue 44)
        assert (r["verdict"], r["first_divergence"], r["findings"]) == \
            (edge["verdict"], edge["first_divergence"], edge["nodes"])


def test_a_pinned_version_is_part_of_the_cache_key():
    plain = cache_key("a" * 64, None, 1, [parse_engine("onnxruntime"), parse_engine("openvino")], "model")
    pinned = cache_key("a" * 64, None, 1, [parse_engine("onnxruntime"), parse_engine(f"openvino=={PINNED}")],
                       "model")
    assert plain != pinned


@pytest.mark.parametrize("text,expected", [
    pytest.param("openvino", EngineSpec("openvino"), id="plain"),
    pytest.param("openvino==2025.4.0", EngineSpec("openvino", "2025.4.0"), id="pinned"),
    pytest.param(" onnxruntime == 1.20.0 ", EngineSpec("onnxruntime", "1.20.0"), id="spaces"),
])
def test_engine_specs_parse(text, expected):
    assert parse_engine(text) == expected


def test_an_unbuildable_environment_is_a_clear_error_and_not_marked_ready(tmp_path):
    """No such release (or no index reachable): pip's failure is named, and the half-built environment is not
    marked complete, so that the next run builds it again."""
    spec = EngineSpec("openvino", "0.0.1")
    with pytest.raises(envs.ClipBridgeError, match="could not install openvino==0.0.1"):
        envs.build(tmp_path, spec, log=lambda _: None)
    assert not (envs.env_dir(tmp_path, spec) / envs.READY).exists()
