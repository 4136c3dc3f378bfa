"""Issue 46, fleet: a model with external data is diffed weightless (an OnDisk model, clipbridge.core.ondisk): the
worker's diff holds the graph, each engine reads the weights from the model's folder, and the results line is the
one the embedding reader gave (clipbridge.scan.external.read_model, the way before)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

from clipbridge.core.ondisk import OnDisk, folder_of
from clipbridge.diff import report, run
from clipbridge.fleet import envs, job, runner
from clipbridge.fleet.sources import file_sha256
from clipbridge.fleet.store import read_jsonl
from clipbridge.scan import external
from tests.diff.test_weightless import mlp
from tests.fleet.conftest import config, quiet

pytest.importorskip("onnxruntime")
pytest.importorskip("openvino")

WIDTH, LAYERS = 128, 2  # 16384 elements a weight: past MAX_CONSTANT, so each stays a stub in its file


@pytest.fixture(scope="module")
def registry(tmp_path_factory) -> Path:
    """ext/model.onnx with its weights in model.onnx.data (the bounds inside), inline/model.onnx with every tensor
    inside: one model, saved the two ways."""
    root = tmp_path_factory.mktemp("weightless")
    m = mlp(WIDTH, LAYERS)
    for name in ("ext", "inline"):
        (root / name).mkdir()
    onnx.save_model(m, str(root / "inline" / "model.onnx"))  # first: saving as external data changes `m`
    onnx.save_model(m, str(root / "ext" / "model.onnx"), save_as_external_data=True, all_tensors_to_one_file=True,
                    location="model.onnx.data", size_threshold=1024)
    return root


def _task(path: Path) -> job.Task:
    files = external.files_of(path)
    return job.Task(path.parent.name, str(path), file_sha256(path, *files), None, ("onnxruntime", "openvino"),
                    "model", 0)


def _answer(line: dict) -> dict:
    return {k: v for k, v in line.items() if k not in ("seconds", "model", "path", "sha256", "cached")}


def test_the_diff_gets_the_model_weightless_and_answers_as_the_embedding_reader(registry, monkeypatch):
    path = registry / "ext" / "model.onnx"
    got: list[bytes] = []
    diff = report.diff

    def spy(execute, model, *args, **kwargs):
        got.append(model)
        return diff(execute, model, *args, **kwargs)
    monkeypatch.setattr(job.report, "diff", spy)
    now = job.run_one(_task(path))
    monkeypatch.setattr(job, "read_weightless", external.read_model)  # the way before: the weights embedded
    before = job.run_one(_task(path))
    assert now["error"] is None and now["verdict"] in ("equal", "explained", "unexplained")
    assert isinstance(got[0], OnDisk) and got[0].folder == str(path.parent.resolve())
    assert len(got[0]) < 10_000 < len(got[1])  # the graph alone, against the graph with its weights
    assert _answer(now) == _answer(before) and now["sha256"] == before["sha256"]


def test_a_data_file_changed_after_the_parent_hashed_it_is_an_error_line(registry, tmp_path):
    """The worker hashes the model and its data file again before its diff: the sha256 check as before."""
    shutil.copytree(registry / "ext", tmp_path / "ext")
    task = _task(tmp_path / "ext" / "model.onnx")
    data = tmp_path / "ext" / "model.onnx.data"
    raw = bytearray(data.read_bytes())
    raw[0] ^= 1  # one weight's bit flipped
    data.write_bytes(bytes(raw))
    line = job.run_one(task)
    assert line["verdict"] == "error" and "changed while the run was going on" in line["error"]


def test_a_pinned_engines_process_gets_the_folder_and_reads_the_weights_there(registry):
    """An engine in its own environment is called through a pipe (clipbridge.fleet.envs): the OnDisk model pickles
    with its folder, and the engine there reads the weights from it. This interpreter stands for the pinned one."""
    model = external.weightless(registry / "ext" / "model.onnx")
    inline = (registry / "inline" / "model.onnx").read_bytes()
    w = envs.worker(sys.executable, 1)
    try:
        assert w.call(folder_of, (model,), {}) == model.folder
        opts = run.Options(("onnxruntime", "openvino"), "model", None, None, 0, sample="edge")
        pinned, _ = report.diff(envs.executor({"onnxruntime": sys.executable}, 1), model, None, opts)
    finally:
        envs._WORKERS.pop(sys.executable).close()
    plain, _ = report.diff(run.serial, inline, None, opts)
    assert [pinned[k] for k in ("verdict", "first_divergence", "nodes")] == \
        [plain[k] for k in ("verdict", "first_divergence", "nodes")]


def test_a_fleet_run_answers_for_the_external_model_as_for_the_same_model_inside(registry, tmp_path):
    """Through the run's sandboxed workers: the line for ext/ is the line for inline/, less the names."""
    code = runner.run(config([str(registry)], tmp_path / "out", tmp_path / "cache"), quiet())
    ext, inline = read_jsonl(tmp_path / "out" / "results.jsonl")
    assert code in (0, 1) and ext["path"] == "ext/model.onnx" and ext["error"] is None
    assert _answer(ext) == _answer(inline)
    assert np.isfinite(ext["seconds"])
