"""`clipbridge fix MODEL --engine A --engine B --output OUT.onnx`: the written file, exit codes, and the advice
that no rewrite replaces appearing in every output format."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest

from clipbridge.cli.main import main
from clipbridge.diff.formats import FORMATS
from tests.fix import models

pytest.importorskip("onnxruntime")
pytest.importorskip("openvino")
pytestmark = pytest.mark.engines


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("fix")
    (d / "m.onnx").write_bytes(models.mobilenet_like().SerializeToString())
    x = np.random.default_rng(3).standard_normal(models.SHAPE).astype(np.float32)
    x[0, 2, 1, 1] = np.nan
    np.savez(d / "x.npz", x=x)
    return d


def _cli(files, *extra: str) -> int:
    return main(["fix", str(files / "m.onnx"), "--engine", "onnxruntime", "--engine", "openvino",
                 "--inputs", str(files / "x.npz"), "--output", str(files / "out.onnx"), *extra])


def test_writes_a_checked_model_and_exits_0_when_proven(files, capsys):
    assert _cli(files, "--format", "json") == 0
    body = json.loads(capsys.readouterr().out)
    assert body["verdict"] == "equal" and body["model"]["path"].endswith("out.onnx")
    onnx.checker.check_model(onnx.load(str(files / "out.onnx")), full_check=True)


def test_three_engines_is_an_error(files, capsys):
    code = main(["fix", str(files / "m.onnx"), "--engine", "onnxruntime,openvino,onnx-reference",
                 "-o", str(files / "o.onnx")])
    assert code == 2
    assert "exactly two engines" in capsys.readouterr().err


@pytest.fixture(scope="module")
def deployed(files):
    """The precision OpenVINO's defaults really ran in on this host (read from the fix itself, not assumed)."""
    out = files / "deployed.json"
    main(["fix", str(files / "m.onnx"), "--engine", "onnxruntime", "--engine", "openvino", "--inputs",
          str(files / "x.npz"), "--output", str(files / "d.onnx"), "--precision", "deployed", "--format", "json",
          "--report", str(out)])
    return json.loads(out.read_text())


@pytest.mark.parametrize("fmt", FORMATS)
def test_advice_is_in_every_format(files, deployed, fmt):
    ran = deployed["proof"]["engines"][1]["precision"]
    out = files / f"report.{fmt}"
    code = _cli(files, "--precision", "deployed", "--format", fmt, "--report", str(out))
    text = out.read_text()
    if ran in ("bf16", "f16"):
        assert code == 1
        assert "inference-precision" in text and "INFERENCE_PRECISION_HINT" in text, text[:2000]
    else:
        assert "INFERENCE_PRECISION_HINT" not in text
