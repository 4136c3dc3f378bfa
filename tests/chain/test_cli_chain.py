"""`clipbridge chain MODEL STAGE...`: exit codes (0 equal or --static, 1 differs, 2 error) and the formats."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from clipbridge.chain import formats
from clipbridge.cli.main import main
from tests.chain import models
from tests.lint.test_formats import validate_sarif

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def pt2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("chain") / "clamp_min_int.pt2"
    path.write_bytes(models.clamp_min_int())
    return path


@pytest.mark.parametrize(("extra", "code"), [
    pytest.param(["onnx,openvino"], 1, id="hostile-generated-differs"),
    pytest.param(["onnx", "openvino"], 1, id="stages-as-words"),
    pytest.param(["onnx", "--static"], 0, id="static"),
    pytest.param(["onnx,bogus"], 2, id="unknown-stage"),
    pytest.param(["onnx", "--format", "github"], 2, id="format-not-for-chains"),
])
def test_exit_codes(pt2: Path, extra: list[str], code: int, capsys: pytest.CaptureFixture) -> None:
    try:
        got = main(["chain", str(pt2), *extra])
    except SystemExit as exc:  # argparse refuses a --format the chain has not (exit 2)
        got = exc.code
    assert got == code


def test_clean_input_is_equal(pt2: Path, tmp_path: Path) -> None:
    clean = tmp_path / "clean.npz"
    np.savez(clean, x=np.linspace(-3, 3, 16, dtype=np.float32).reshape(1, 16))
    assert main(["chain", str(pt2), "onnx,openvino", "--inputs", str(clean)]) == 0


def test_formats(pt2: Path, tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    assert main(["chain", str(pt2), "onnx,openvino,coreml", "--format", "json", "-o", str(path)]) == 1
    body = json.loads(path.read_text())
    assert [h["to"] for h in body["hops"]] == ["onnx", "openvino", "coreml"]
    out = {fmt: formats.render(body, fmt, "m.pt2") for fmt in ("sarif", "junit", "markdown", "table")}
    sarif = json.loads(out["sarif"])
    validate_sarif(sarif)  # the OASIS 2.1.0 schema, as lint's SARIF is checked
    rules = {r["ruleId"] for r in sarif["runs"][0]["results"]}
    assert {"omitted-bound-lowest", "nan-to-lower-bound", "conversion-failed"} <= rules
    root = ET.fromstring(out["junit"])  # <testsuites>, as every command's JUnit (clipbridge.reports.junit)
    assert root.get("tests") == "3" and root.find("testsuite/testcase[@name='coreml']/failure") is not None
    assert out["markdown"].startswith("### clipbridge chain") and "| source op |" in out["markdown"]
    assert out["table"].splitlines()[1].startswith("source op")
