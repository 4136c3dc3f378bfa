"""ONNX's real engine: a Clip model run by onnxruntime (CPU provider), and the repro bundle's model file.

onnxruntime is optional (the `[onnxruntime]` extra): it is imported inside the runner, and a missing install
answers with the command that installs it."""

from __future__ import annotations

import base64
import hashlib
from functools import lru_cache
from typing import Any

import numpy as np

from clipbridge.core.errors import BackendUnavailable
from clipbridge.dialects.onnx.meaning import parse
from clipbridge.dialects.onnx.model import build_model
from clipbridge.dialects.onnx.spec import OnnxSpec
from clipbridge.engines import config as engine_config, extras as engines


def run_onnxruntime(sem: Any, x: np.ndarray) -> np.ndarray:
    """The Clip model of `sem` (onnx semantics) run by onnxruntime's CPU provider."""
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        raise engines.missing("onnxruntime") from None
    raw = _model_bytes(sem, x)
    precision = getattr(sem, "precision", "model")
    try:
        session, settings = _ort_session(hashlib.sha256(raw).hexdigest(), raw, precision)
        y = session.run(None, {"input": x})[0]
    except Exception as exc:  # the engine refuses (e.g. no kernel for this opset/dtype)
        raise BackendUnavailable(f"onnxruntime cannot run this model: {str(exc).splitlines()[0][:300]}",
                                 "backend") from None
    engine_config.record_run(settings)
    return y


def _model_bytes(sem: Any, x: np.ndarray) -> bytes:
    """The Clip model of `sem` for the input's real shape (a native form is read first, then built compact)."""
    if sem.meaning.has_tensor_bounds and isinstance(sem.spec, dict) and sem.spec.get("model"):
        return base64.b64decode(sem.spec["model"])  # the Max/Min model emit_minmax wrote, run as it is
    spec = parse(OnnxSpec.model_validate(sem.spec)).spec.model_copy(update={"shape": list(x.shape)})
    return build_model(spec, sem.meaning.scale_bias).SerializeToString()


def bundle(sem: Any, x: np.ndarray, name: str) -> tuple[dict[str, bytes], dict[str, Any]]:
    """A repro bundle's model file, run by run_bundle.py on onnxruntime."""
    return {f"{name}.onnx": _model_bytes(sem, x)}, {"engine": "onnxruntime", "model": f"{name}.onnx"}


@lru_cache(maxsize=64)
def _ort_session(digest: str, raw: bytes, precision: engine_config.Precision) -> tuple[Any, dict[str, Any]]:
    """A CPU-provider session with every knob pinned (or onnxruntime's defaults: "deployed"), and its settings."""
    return engine_config.onnxruntime_session(raw, precision)
