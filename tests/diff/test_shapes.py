"""Issue 44, item 5: --shape INPUT=DIMS (CLI) / shape= (HTTP) for the generated inputs; every symbolic dimension
is listed with the value it ran with."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from clipbridge.cli.main import main
from clipbridge.core.errors import ClipBridgeError
from clipbridge.diff import shapes
from tests.diff.conftest import npz


@pytest.fixture(scope="module")
def dynamic_batch() -> bytes:
    """A Conv/ReLU6/pool/Linear exported by torch with a dynamic batch (dim_param 'batch')."""
    import torch
    from torch import nn
    torch.manual_seed(0)
    m = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU6(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                      nn.Linear(8, 10)).eval()
    buf = io.BytesIO()
    torch.onnx.export(m, (torch.randn(1, 3, 16, 16),), buf, input_names=["image"], output_names=["logits"],
                      opset_version=17, dynamo=False, dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}})
    return buf.getvalue()


@pytest.mark.parametrize("items, want", [
    pytest.param(["image=8x3x224x224"], (("image", (8, 3, 224, 224)),), id="one"),
    pytest.param(["a=1", "b=2X3"], (("a", (1,)), ("b", (2, 3))), id="two-and-upper-x"),
    pytest.param(["scalar="], (("scalar", ()),), id="scalar"),
])
def test_parse(items, want):
    assert shapes.parse(items) == want


@pytest.mark.parametrize("item", [
    pytest.param("image", id="no-equals"), pytest.param("=1x2", id="no-name"), pytest.param("x=1x0", id="zero"),
    pytest.param("x=1x-2", id="negative"), pytest.param("x=1xa", id="not-a-number"),
    pytest.param(f"x={1 << 25}", id="too-large"),
])
def test_parse_refuses(item):
    with pytest.raises(ClipBridgeError) as e:
        shapes.parse([item], "--shape")
    assert e.value.loc == "--shape"


@pytest.mark.engines
def test_a_dynamic_batch_diffs_at_batch_8(tmp_path, capsys, dynamic_batch):
    (tmp_path / "m.onnx").write_bytes(dynamic_batch)
    code = main(["diff", str(tmp_path / "m.onnx"), "--shape", "image=8x3x16x16", "--format", "json"])
    body = json.loads(capsys.readouterr().out)
    assert body["inputs"]["tensors"] == [{"name": "image", "dtype": "float32", "shape": [8, 3, 16, 16]}]
    assert body["inputs"]["symbolic"] == [{"input": "image", "axis": 0, "dim": "batch", "value": 8}]
    assert body["outputs"][0]["total"] == 80 and code == (0 if body["verdict"] == "equal" else 1)
    assert body["edge"]["inputs"]["tensors"][0]["shape"] == [8, 3, 16, 16]  # the probe runs at the same shape
    main(["diff", str(tmp_path / "m.onnx"), "--format", "json", "--probe", "off"])
    default = json.loads(capsys.readouterr().out)
    assert default["inputs"]["symbolic"] == [{"input": "image", "axis": 0, "dim": "batch", "value": 1}]


@pytest.mark.engines
@pytest.mark.parametrize("shape, message", [
    pytest.param("image=8x3x16", "rank 3", id="rank"),
    pytest.param("image=8x4x16x16", "fixed at 3", id="fixed-dim"),
    pytest.param("img=8x3x16x16", "not a graph input", id="unknown-input"),
])
def test_a_wrong_shape_is_an_error(tmp_path, capsys, dynamic_batch, shape, message):
    (tmp_path / "m.onnx").write_bytes(dynamic_batch)
    assert main(["diff", str(tmp_path / "m.onnx"), "--shape", shape, "--probe", "off"]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.engines
def test_shape_beside_an_npz_is_refused(tmp_path, capsys, dynamic_batch):
    (tmp_path / "m.onnx").write_bytes(dynamic_batch)
    (tmp_path / "in.npz").write_bytes(npz(image=np.zeros((2, 3, 16, 16), np.float32)))
    assert main(["diff", str(tmp_path / "m.onnx"), "--inputs", str(tmp_path / "in.npz"), "--shape",
                 "image=2x3x16x16"]) == 2
    assert "own shapes" in capsys.readouterr().err


@pytest.mark.engines
def test_shape_over_http(client, dynamic_batch):
    from tests.diff.test_api_diff import post
    r = post(client, dynamic_batch, None, "?probe=off&shape=image%3D4x3x16x16")
    assert r.status_code == 200, r.text
    assert r.json()["inputs"]["symbolic"] == [{"input": "image", "axis": 0, "dim": "batch", "value": 4}]
    bad = post(client, dynamic_batch, None, "?shape=image%3D4x3")
    assert bad.status_code in (400, 422) and "rank" in bad.text, bad.text


@pytest.mark.engines
def test_the_edge_probe_runs_at_the_given_inputs_shapes(tmp_path, capsys, dynamic_batch):
    (tmp_path / "m.onnx").write_bytes(dynamic_batch)
    (tmp_path / "in.npz").write_bytes(npz(image=np.zeros((3, 3, 16, 16), np.float32)))
    main(["diff", str(tmp_path / "m.onnx"), "--inputs", str(tmp_path / "in.npz"), "--format", "json"])
    body = json.loads(capsys.readouterr().out)
    assert body["inputs"]["symbolic"] == [{"input": "image", "axis": 0, "dim": "batch", "value": 3}]
    assert body["edge"]["inputs"]["symbolic"] == [{"input": "image", "axis": 0, "dim": "batch", "value": 3}]
