"""The chain's stage list: what a user may name, what each stage is converted from, a missing converter."""

from __future__ import annotations

import pytest

from clipbridge.chain import stages
from clipbridge.core.errors import ClipBridgeError


@pytest.mark.parametrize(("spec", "source", "want"), [
    pytest.param("torch,onnx,openvino", "torch", ["torch", "onnx", "openvino"], id="plain"),
    pytest.param("onnx,openvino", "torch", ["torch", "onnx", "openvino"], id="source-added-in-front"),
    pytest.param(" onnx , coreml ", "torch", ["torch", "onnx", "coreml"], id="spaces"),
    pytest.param("onnx,openvino", "onnx", ["onnx", "openvino"], id="onnx-source"),
    pytest.param("tflite,tflite:builtin", "torch", ["torch", "tflite", "tflite:builtin"], id="both-delegates"),
])
def test_parse(spec: str, source: str, want: list[str]) -> None:
    assert stages.parse(spec, source) == want


@pytest.mark.parametrize(("spec", "source", "says"), [
    pytest.param("", "torch", "empty", id="empty"),
    pytest.param("onnx,tensorflow", "torch", "unknown stage 'tensorflow'", id="unknown"),
    pytest.param("onnx,onnx", "torch", "twice", id="repeat"),
    pytest.param("onnx,tflite", "onnx", "needs a .pt2", id="tflite-from-onnx"),
])
def test_parse_refuses_naming_the_option(spec: str, source: str, says: str) -> None:
    with pytest.raises(ClipBridgeError) as err:
        stages.parse(spec, source, loc="--chain")
    assert says in err.value.message and err.value.loc == "--chain"


@pytest.mark.parametrize(("stage", "chain", "want"), [
    pytest.param("openvino", ["torch", "onnx", "openvino"], "onnx", id="openvino-from-onnx"),
    pytest.param("openvino", ["torch", "openvino"], "torch", id="openvino-from-exported-program"),
    pytest.param("tflite:builtin", ["torch", "tflite", "tflite:builtin"], "tflite", id="builtin-same-file"),
    pytest.param("tflite:builtin", ["torch", "tflite:builtin"], "torch", id="builtin-alone"),
    pytest.param("coreml", ["torch", "onnx", "coreml"], "torch", id="coreml-from-torch"),
])
def test_converted_from(stage: str, chain: list[str], want: str) -> None:
    assert stages.converted_from(stage, chain) == want


def test_missing_converter_names_the_install_command(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:  # noqa: ANN001
    monkeypatch.setattr(stages, "installed", lambda module: module != "coremltools")
    monkeypatch.setenv("CLIPBRIDGE_CACHE", str(tmp_path))
    assert stages.missing_converter("coreml") == 'coremltools is not installed: pip install "clipbridge[chain]"'
    assert stages.missing_converter("openvino") is None
    assert stages.missing_converter("tflite") == ("the LiteRT converter environment (litert-torch-0.10.0, about "
                                                  "2 GB installed) is not built: clipbridge chain-env build")
