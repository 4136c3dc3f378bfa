"""The native calls on uploaded models, each a module-level function that app/clipbridge/engines/sandbox.py runs in a worker.

Arguments and results are serialized ModelProtos (bytes): a protobuf object does not pickle, and the bytes
are what crosses the pipe anyway. Each wrapper maps the engine's own refusal to a plain result or a
ClipBridgeError in the worker; only a crash, a hang or a limit becomes a SandboxError in the parent.
"""

from __future__ import annotations

from typing import Any

import onnx

from clipbridge.engines.sandbox import run_isolated

CONVERTER = "onnx version converter"
CHECKER = "onnx checker"
INFERENCE = "onnx shape inference"


class ConversionRefused(Exception):
    """onnx.version_converter raised (an ordinary refusal); `text` is its message's first line."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


def _parse(data: bytes) -> onnx.ModelProto:
    model = onnx.ModelProto()
    model.ParseFromString(data)
    return model


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0][:300]


def convert_in_child(data: bytes, opset: int) -> bytes:
    """onnx.version_converter.convert_version, serialized; ConversionRefused when it refuses."""
    try:
        return onnx.version_converter.convert_version(_parse(data), opset).SerializeToString()
    except Exception as exc:  # the converter's refusals are RuntimeError, ValidationError, IndexError...
        raise ConversionRefused(_first_line(exc)) from None


def check_in_child(data: bytes, full_check: bool) -> str | None:
    """onnx.checker.check_model's verdict: None when valid, else its message's first line."""
    try:
        onnx.checker.check_model(_parse(data), full_check=full_check)
    except Exception as exc:  # ValidationError, InferenceError, and C++ errors on odd protos
        return _first_line(exc)
    return None


def infer_in_child(data: bytes) -> bytes | None:
    """onnx.shape_inference.infer_shapes (strict_mode off), serialized; None when inference raises."""
    try:
        return onnx.shape_inference.infer_shapes(_parse(data), strict_mode=False).SerializeToString()
    except Exception:  # inference is a best effort everywhere it is used
        return None


def convert_version(model: onnx.ModelProto, opset: int) -> onnx.ModelProto:
    """The model converted to `opset` in a sandbox worker (ConversionRefused, SandboxError)."""
    return _parse(run_isolated(CONVERTER, convert_in_child, model.SerializeToString(), opset))


def check_model(model: onnx.ModelProto, full_check: bool = True) -> str | None:
    """onnx.checker's verdict on the model, from a sandbox worker: None when valid, else the reason."""
    return run_isolated(CHECKER, check_in_child, model.SerializeToString(), full_check)


def infer_shapes(model: onnx.ModelProto) -> onnx.ModelProto | None:
    """The shape-inferred model from a sandbox worker; None when inference fails (a crash raises)."""
    out: Any = run_isolated(INFERENCE, infer_in_child, model.SerializeToString())
    return None if out is None else _parse(out)
