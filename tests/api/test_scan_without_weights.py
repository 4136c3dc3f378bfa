"""Issue 46, item 4: a scan needs no weights. A real torch dynamo export keeps its weights in `MODEL.onnx.data`;
uploaded without it, /v1/models/inspect answers 200 with every clip resolved (the bounds are inline), and
/v1/models/rewrite gives back a model that, set beside the same data file, runs and computes what torch does.
The routes that run engines still refuse it (docs/isolation.md)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from fastapi.testclient import TestClient

from clipbridge.main import create_app
from clipbridge.scan.wire import _tensors, is_external

torch = pytest.importorskip("torch")
ort = pytest.importorskip("onnxruntime")

OCTET = {"content-type": "application/octet-stream"}


class MobileBlock(torch.nn.Module):
    """A MobileNetV2-style block: conv, batch norm, ReLU6, depthwise conv, hardtanh(0, 6), pointwise, clamp."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 16, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(16)
        self.dw = torch.nn.Conv2d(16, 16, 3, padding=1, groups=16)
        self.pw = torch.nn.Conv2d(16, 8, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.nn.functional.relu6(self.bn(self.conv(x)))
        y = torch.nn.functional.hardtanh(self.dw(y), 0.0, 6.0)
        return self.pw(y).clamp(-1.0, 1.0)


@pytest.fixture(scope="module")
def export(tmp_path_factory) -> tuple[Path, np.ndarray, np.ndarray]:
    """The block, seeded, exported as torch writes it (`block.onnx` + `block.onnx.data`); an input and torch's
    output for it."""
    torch.manual_seed(46)
    block = MobileBlock().eval()
    x = torch.randn(1, 3, 16, 16)
    path = tmp_path_factory.mktemp("export") / "block.onnx"
    torch.onnx.export(block, (x,), str(path), dynamo=True, external_data=True, verbose=False)
    with torch.no_grad():
        expected = block(x).numpy()
    return path, x.numpy(), expected


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app(), raise_server_exceptions=False) as c:
        yield c


def test_the_export_keeps_its_weights_outside(export):
    path, _, _ = export
    assert path.with_name("block.onnx.data").is_file()
    light = onnx.load(str(path), load_external_data=False)
    assert sum(is_external(t) for t in _tensors(light)) >= 3  # the three conv weights


@pytest.mark.parametrize("send", [
    pytest.param(lambda c, d: c.post("/v1/models/inspect", content=d, headers=OCTET), id="raw"),
    pytest.param(lambda c, d: c.post("/v1/models/inspect", files={"model": ("block.onnx", d)}), id="multipart"),
])
def test_inspect_scans_it_without_its_data(client, export, send):
    path, _, _ = export
    r = send(client, path.read_bytes())
    assert r.status_code == 200, r.text[:300]
    body = r.json()
    assert [c["error"] for c in body["clips"]] == [None, None, None]
    bounds = [(c["meaning"]["lower"]["value"], c["meaning"]["upper"]["value"]) for c in body["clips"]]
    assert bounds == [(0.0, 6.0), (0.0, 6.0), (-1.0, 1.0)]
    assert body["summary"]["unresolved"] == 0
    assert {"conv.weight", "dw.weight", "pw.weight"} <= set(body["model"]["external_tensors"])


def test_rewrite_gives_back_a_model_that_runs_beside_the_same_data(client, export, tmp_path):
    """The locations come back as sent: the rewritten .onnx, set beside the export's .onnx.data, computes what
    torch computes (the weights were never read, only carried by name)."""
    path, x, expected = export
    r = client.post("/v1/models/rewrite", params={"target": "openvino"}, content=path.read_bytes(), headers=OCTET)
    assert r.status_code == 200, r.text[:300]
    assert r.headers["x-clipbridge-rewritten"] == "3"
    out = tmp_path / "block.onnx"
    out.write_bytes(r.content)
    (tmp_path / "block.onnx.data").write_bytes(path.with_name("block.onnx.data").read_bytes())
    session = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    (got,) = session.run(None, {session.get_inputs()[0].name: x})
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("url", [
    pytest.param("/v1/models/diff", id="diff"),
    pytest.param("/v1/models/fix?reference=onnxruntime&target=openvino", id="fix"),
])
def test_the_routes_that_run_engines_still_refuse_it(client, export, url):
    path, _, _ = export
    r = client.post(url, files={"model": ("block.onnx", path.read_bytes())})
    assert r.status_code == 400 and r.headers["content-type"].startswith("application/problem+json"), r.text[:300]
    assert "external file" in r.json()["detail"]
