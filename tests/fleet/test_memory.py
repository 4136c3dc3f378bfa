"""Issue 46: `fleet run --memory SIZE` is what one model's job may take (the local workers' address-space cap), and
its diff's budget is half of it, not the diff's default of a quarter of the machine per worker; a model past it
is an error line naming the option."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clipbridge.cli.main import main
from clipbridge.core.errors import ClipBridgeError
from clipbridge.diff import report
from clipbridge.fleet import job, runner
from clipbridge.fleet.sources import file_sha256
from clipbridge.fleet.store import read_jsonl
from tests.fleet.conftest import config
from tests.hostile.places import amplifying_model

ENGINES = ("onnxruntime", "openvino")


def _task(path: Path, memory_mb: int | None) -> job.Task:
    return job.Task(path.name, str(path), file_sha256(path), None, ENGINES, "model", 0, memory_mb=memory_mb)


@pytest.mark.parametrize("memory_mb, budget", [
    pytest.param(1024, 512 << 20, id="half-of-the-jobs-memory"),
    pytest.param(None, None, id="a-task-made-elsewhere-the-diffs-default"),
])
def test_the_diff_captures_at_most_half_of_what_the_job_may_take(registry, monkeypatch, memory_mb, budget):
    seen = []

    def spy(execute, model, npz, opts):
        seen.append((opts.memory, opts.memory_option))
        raise ClipBridgeError("stopped by the test", "model")
    monkeypatch.setattr(report, "diff", spy)
    job.run_one(_task(next(registry.rglob("*.onnx")), memory_mb))
    assert seen == [(budget, "fleet run --memory")]


def test_the_runs_tasks_carry_the_option_or_the_sandboxs_setting(registry, tmp_path, monkeypatch):
    monkeypatch.setenv("CLIPBRIDGE_SANDBOX_MEMORY_MB", "3000")
    cfg = config([str(registry)], tmp_path / "out", tmp_path / "cache")
    todo = [runner.describe(f, cfg.inputs_dir) for f in runner.walk(cfg.sources)[:1]]
    assert [t.memory_mb for t in runner._tasks(cfg, todo)] == [3000]
    cfg.limits.memory_mb = 700
    assert [t.memory_mb for t in runner._tasks(cfg, todo)] == [700]


def test_an_engine_out_of_memory_names_the_option(registry, monkeypatch):
    def oom(*args, **kwargs):
        raise ClipBridgeError("openvino cannot load the model: out of memory (std::bad_alloc)", "model")
    monkeypatch.setattr(report, "diff", oom)
    line = job.run_one(_task(next(registry.rglob("*.onnx")), 4096))
    assert line["verdict"] == "error"
    assert line["error"].endswith("(a model's job may take 4096 MiB: raise fleet run --memory)")


def test_a_model_past_the_jobs_memory_is_an_error_line_naming_it(tmp_path):
    """Through the CLI and the sandboxed workers: a 2**25-element float64 tensor (256 MiB) against --memory
    256MiB (a 128 MiB budget, 64 MiB per engine) is refused before any engine runs, naming the option."""
    reg = tmp_path / "reg"
    reg.mkdir()
    (reg / "big.onnx").write_bytes(amplifying_model("constant-of-shape", 25))
    code = main(["fleet", "run", str(reg), "--engine", "onnxruntime,openvino", "--workers", "1", "--memory", "256MiB",
                 "--output", str(tmp_path / "out"), "--cache", str(tmp_path / "cache")])
    line, = read_jsonl(tmp_path / "out" / "results.jsonl")
    assert code == 2 and line["verdict"] == "error"
    assert "at most 67108864 bytes" in line["error"] and "raise fleet run --memory" in line["error"], line["error"]


@pytest.mark.parametrize("value, message", [
    pytest.param("8MiB", "at least 64MiB", id="below-the-sandboxs-floor"),
    pytest.param("lots", "takes a size such as 2GiB", id="not-a-size"),
])
def test_a_bad_memory_is_exit_2_naming_it(tmp_path, capsys, value, message):
    code = main(["fleet", "run", str(tmp_path), "--memory", value, "--output", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and "--memory" in err and message in err, err
