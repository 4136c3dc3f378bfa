"""Fleet on torch's default output (issue 47): torch 2.13's dynamo exporter writes `MODEL.onnx.data` beside every
export; fleet reads it as `clipbridge diff` does (clipbridge.scan.external.read_weightless: the weights stay in
their files, tests/fleet/test_weightless.py), hashes it with the model, and keeps the external-data rules
(docs/isolation.md): a location outside the model's folder or a symlink is an error line for that model, never
onnx's raw text, and nothing outside the folder is read."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import onnx
import pytest

from clipbridge.cli.main import main
from clipbridge.fleet import runner
from clipbridge.fleet.store import read_jsonl
from tests.fleet.conftest import config, quiet

torch = pytest.importorskip("torch")


def _conv_relu6() -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8), torch.nn.ReLU6(),
                               torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(8, 4))


def _mlp_hardtanh() -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 8 * 8, 32), torch.nn.Hardtanh(-1.0, 1.0),
                               torch.nn.Linear(32, 4))


def _depthwise_hardswish() -> torch.nn.Module:
    """A MobileNetV3 block: pointwise, depthwise, Hardswish, pointwise."""
    return torch.nn.Sequential(torch.nn.Conv2d(3, 16, 1), torch.nn.Hardswish(),
                               torch.nn.Conv2d(16, 16, 3, padding=1, groups=16), torch.nn.Hardswish(),
                               torch.nn.Conv2d(16, 4, 1))


ARCHITECTURES = {"conv_relu6": _conv_relu6, "mlp_hardtanh": _mlp_hardtanh, "depthwise_hardswish": _depthwise_hardswish}


@pytest.fixture(scope="module")
def exports(tmp_path_factory) -> Path:
    """Each architecture, its weights seeded, exported by torch.onnx.export(dynamo=True) as torch writes it."""
    root = tmp_path_factory.mktemp("exports")
    for i, (name, build) in enumerate(ARCHITECTURES.items()):
        torch.manual_seed(i)
        model = build().eval()
        (root / name).mkdir()
        torch.onnx.export(model, (torch.randn(1, 3, 8, 8),), str(root / name / f"{name}.onnx"), dynamo=True,
                          verbose=False)
    return root


def test_torch_writes_its_weights_beside_the_model(exports):
    for name in ARCHITECTURES:
        assert (exports / name / f"{name}.onnx.data").is_file()


def test_fleet_runs_on_torch_exports_as_clipbridge_diff_does(exports, tmp_path):
    code = runner.run(config([str(exports)], tmp_path / "out", tmp_path / "cache"), quiet())
    records = read_jsonl(tmp_path / "out" / "results.jsonl")
    assert [r["path"] for r in records] == sorted(f"{n}/{n}.onnx" for n in ARCHITECTURES)
    assert all(r["error"] is None and r["verdict"] != "error" for r in records) and code in (0, 1)
    for r in records:  # the oracle: the single-model command on the same file
        report = tmp_path / f"{Path(r['model']).stem}.json"
        main(["diff", r["model"], "--format", "json", "--output", str(report)])
        edge = json.loads(report.read_text())["edge"]  # fleet diffs the edge values: the CLI's edge section
        assert (r["verdict"], r["first_divergence"], r["findings"]) == \
            (edge["verdict"], edge["first_divergence"], edge["nodes"])


def test_the_weights_file_is_part_of_the_models_sha256(exports, tmp_path):
    reg = tmp_path / "reg"
    shutil.copytree(exports / "mlp_hardtanh", reg)
    runner.run(config([str(reg)], tmp_path / "one", tmp_path / "cache"), quiet())
    data = reg / "mlp_hardtanh.onnx.data"
    raw = bytearray(data.read_bytes())
    raw[0] ^= 1  # one weight's bit flipped: the same graph, another model
    data.write_bytes(bytes(raw))
    runner.run(config([str(reg)], tmp_path / "two", tmp_path / "cache"), quiet())
    one, two = read_jsonl(tmp_path / "one" / "results.jsonl"), read_jsonl(tmp_path / "two" / "results.jsonl")
    assert one[0]["sha256"] != two[0]["sha256"] and not two[0]["cached"]


def _point_weights_at(model: Path, location: str) -> None:
    m = onnx.load(str(model), load_external_data=False)
    for t in m.graph.initializer:
        for e in t.external_data:
            if e.key == "location":
                e.value = location
    model.write_bytes(m.SerializeToString())


def _outside(folder: Path) -> None:
    shutil.move(folder / "m.onnx.data", folder.parent / "secret.data")
    _point_weights_at(folder / "m.onnx", "../secret.data")


def _absolute(folder: Path) -> None:
    shutil.move(folder / "m.onnx.data", folder.parent / "secret.data")
    _point_weights_at(folder / "m.onnx", str(folder.parent / "secret.data"))


def _symlink(folder: Path) -> None:
    shutil.move(folder / "m.onnx.data", folder.parent / "secret.data")
    os.symlink(folder.parent / "secret.data", folder / "m.onnx.data")


def _missing(folder: Path) -> None:
    (folder / "m.onnx.data").unlink()


@pytest.mark.parametrize("spoil", [pytest.param(_outside, id="dot-dot"), pytest.param(_absolute, id="absolute"),
                                   pytest.param(_symlink, id="symlink-out-of-the-folder"),
                                   pytest.param(_missing, id="missing")])
def test_weights_outside_the_models_folder_are_an_error_line_never_read(spoil, exports, tmp_path):
    folder = tmp_path / "reg" / "m"
    folder.mkdir(parents=True)
    shutil.copy(exports / "mlp_hardtanh" / "mlp_hardtanh.onnx", folder / "m.onnx")
    shutil.copy(exports / "mlp_hardtanh" / "mlp_hardtanh.onnx.data", folder / "m.onnx.data")
    _point_weights_at(folder / "m.onnx", "m.onnx.data")
    spoil(folder)
    secret = folder.parent / "secret.data"
    before = secret.stat().st_atime_ns if secret.exists() else None
    code = runner.run(config([str(tmp_path / "reg")], tmp_path / "out", tmp_path / "cache"), quiet())
    (r,) = read_jsonl(tmp_path / "out" / "results.jsonl")
    assert code == 2 and r["verdict"] == "error"
    assert r["error"].startswith("the model's external data cannot be read next to it")
    assert "regular file" not in r["error"] and "Traceback" not in r["error"]
    if before is not None:
        assert secret.stat().st_atime_ns == before  # never opened (noatime mounts pass this trivially)


def test_clipbridge_fleet_run_on_a_folder_of_torch_exports(exports, tmp_path):
    """The command itself (issue 46, item 5), on the folder as torch wrote it: every model read with its
    `.onnx.data`, none an error line."""
    out = tmp_path / "out"
    code = main(["fleet", "run", str(exports), "--output", str(out), "--cache", str(tmp_path / "cache"),
                 "--workers", "2"])
    records = read_jsonl(out / "results.jsonl")
    assert code in (0, 1) and len(records) == len(ARCHITECTURES)
    assert all(r["error"] is None and r["verdict"] != "error" for r in records), records
