"""A chain from an ONNX model with its weights beside it (torch 2.13's default `MODEL.onnx.data`): the chain reads
it as `clipbridge diff` does (clipbridge.scan.external.read_model), issue 47."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clipbridge.cli.main import main

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.ReLU6(), torch.nn.Linear(8, 4)).eval()
    path = tmp_path_factory.mktemp("export") / "mlp.onnx"
    torch.onnx.export(model, (torch.randn(1, 16),), str(path), dynamo=True, verbose=False)
    assert path.with_name("mlp.onnx.data").is_file()
    return path


def test_a_chain_reads_the_weights_beside_an_onnx_source(export: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # not the model's folder: the weights are found beside the model
    out = tmp_path / "chain.json"
    assert main(["diff", str(export), "--chain", "onnx,openvino", "--format", "json", "--output", str(out)]) in (0, 1)
    body = json.loads(out.read_text())
    assert body["source"] == "onnx" and all(h["status"] == "ok" for h in body["hops"])


def test_clipbridge_chain_reads_the_weights_beside_an_onnx_source(export: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """`clipbridge chain MODEL STAGE...` (issue 46, item 5) on torch's default export, as `diff --chain` reads it."""
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "chain.json"
    assert main(["chain", str(export), "onnx", "openvino", "--format", "json", "--output", str(out)]) in (0, 1)
    body = json.loads(out.read_text())
    assert body["source"] == "onnx" and all(h["status"] == "ok" for h in body["hops"])
