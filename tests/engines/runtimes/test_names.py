"""The one parser of engine names: each accepted form and each refusal, which names the option and what is accepted."""

from __future__ import annotations

import pytest

from clipbridge.core.errors import ClipBridgeError
from clipbridge.engines.runtimes.names import EngineSpec, parse_engine_name

ACCEPTED = [
    pytest.param("onnxruntime", EngineSpec("onnxruntime"), "onnxruntime", id="plain"),
    pytest.param(" openvino ", EngineSpec("openvino"), "openvino", id="spaces"),
    pytest.param("openvino==2025.4.0", EngineSpec("openvino", pinned="2025.4.0"), "openvino==2025.4.0", id="pinned"),
    pytest.param("onnxruntime@f16", EngineSpec("onnxruntime", precision="f16"), "onnxruntime@f16", id="f16"),
    pytest.param("onnxruntime:cuda", EngineSpec("onnxruntime", "cuda"), "onnxruntime:cuda", id="cuda"),
    pytest.param("onnxruntime:tensorrt", EngineSpec("onnxruntime", "tensorrt"), "onnxruntime:tensorrt", id="tensorrt"),
    pytest.param("openvino:GPU", EngineSpec("openvino", "GPU"), "openvino:GPU", id="openvino-gpu"),
    pytest.param("openvino:gpu", EngineSpec("openvino", "GPU"), "openvino:GPU", id="device-any-case"),
    pytest.param("onnxruntime:cuda@f16", EngineSpec("onnxruntime", "cuda", precision="f16"), "onnxruntime:cuda@f16",
                 id="device-f16"),
    pytest.param("onnx-reference", EngineSpec("onnx-reference"), "onnx-reference", id="reference"),
]


@pytest.mark.parametrize("text, spec, label", ACCEPTED)
def test_accepted(text, spec, label):
    got = parse_engine_name(text)
    assert got == spec and got.label == label and got.key == label.partition("==")[0].partition("@")[0]


REFUSED = [
    pytest.param("", "an engine name is empty", id="empty"),
    pytest.param("tensorrt", "unknown engine 'tensorrt'; choose from onnx-reference, onnxruntime, openvino",
                 id="unknown"),
    pytest.param("onnxrutime", "did you mean 'onnxruntime'?", id="near-miss"),
    pytest.param("onnxruntime:npu", "has no device 'npu': its devices are onnxruntime:cuda, onnxruntime:tensorrt",
                 id="unknown-device"),
    pytest.param("onnx-reference:cuda", "it runs on the CPU only", id="cpu-only"),
    pytest.param("onnxruntime@bf16", "the precision after @ is one of f16", id="precision"),
    pytest.param("openvino==", "write NAME==VERSION, e.g. openvino==2025.4.0", id="empty-version"),
    pytest.param("onnx-reference==1.17.0", "is onnx itself and is not pinned separately", id="pinned-reference"),
    pytest.param("onnxruntime:cuda==1.20.0", "a pinned release runs in an environment of its own", id="pinned-device"),
    pytest.param("torch", "unknown engine 'torch'", id="not-a-diff-engine"),
]


@pytest.mark.parametrize("text, message", REFUSED)
def test_refused_naming_the_option(text, message):
    with pytest.raises(ClipBridgeError) as e:
        parse_engine_name(text, "--engine")
    assert message in e.value.message and e.value.loc == "--engine" and e.value.status == 400


def test_a_role_widens_the_choice():
    assert parse_engine_name("torch", role=None) == EngineSpec("torch")
