"""ONNX Clip on the dialect interface: the adapter over app/dialects/onnx.py, and the onnxruntime engine."""

from __future__ import annotations

import base64
import hashlib
from functools import lru_cache
from typing import Any

import numpy as np

from app.engines import config as engine_config, extras as engines
from app.dialects import onnx
from app.dialects.kit.base import Dialect, Resolved
from app.dialects.onnx_minmax import emit_minmax
from app.dialects.kit.spec_base import OnnxSpec, OnnxTarget
from app.dialects.kit.tensor_bounds import with_tensor_bounds
from app.core.errors import BackendUnavailable, ClipBridgeError


def resolve(spec: OnnxSpec) -> Resolved:
    p = onnx.parse(spec)
    return Resolved("onnx", onnx.resolve(p), onnx.normalize(p), p.spec.shape)


def _opset(version: str) -> int:
    if not version.strip().isdigit() or int(version) < 1:
        raise ClipBridgeError(f"onnx:N takes an opset number from 1. Got: {version!r}")
    return int(version)


def check_version(version: str) -> str:
    """An opset number from 1 to 1000 (the Clip schema it selects is looked up when emitting)."""
    if not version.strip().isdigit():
        raise ClipBridgeError(f"an ONNX target's version is an opset number (onnx:13). Got: {version!r}")
    OnnxTarget(dialect="onnx", opset=int(version))  # the model's own range check (ValidationError)
    return version.strip()


def target(version: str | None) -> OnnxTarget:
    """A target opset (beyond 1000 read as 1000: every opset past 13 selects Clip-13)."""
    if version is None:
        return OnnxTarget(dialect="onnx")
    return OnnxTarget(dialect="onnx", opset=min(_opset(version), 1000))


def capability() -> dict[str, Any]:
    versions = []
    for i, s in enumerate(onnx.CLIP_VERSIONS):
        nxt = onnx.CLIP_VERSIONS[i + 1].since - 1 if i + 1 < len(onnx.CLIP_VERSIONS) else None
        order, order_rule = onnx.order_onnx(s)
        defaults = ("missing bound: the FLT_MAX literals -3.402823e+38 / 3.402823e+38 cast to T (float16: +-inf)"
                    if s.since == 6 else "missing bound: numeric_limits<T>::lowest() / max()")
        versions.append({
            "version": s.name,
            "selects": f"opset {s.since}" + (f"..{nxt}" if nxt else "+") if nxt != s.since else f"opset {s.since}",
            "dtypes": [d.onnx for d in s.dtypes], "ranks": "any",
            "rules": [s.summary, "bounds: float attributes cast to T" if s.attributes else
                      "bounds: typed scalar inputs of T", defaults, order_rule,
                      "NaN input propagates; NaN bound gives all NaN"]})
    return {"dialect": "onnx", "default_target": {"dialect": "onnx", "opset": onnx.NEWEST_OPSET},
            "versions": versions}


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
    spec = onnx.parse(OnnxSpec.model_validate(sem.spec)).spec.model_copy(update={"shape": list(x.shape)})
    return onnx.build_model(spec, sem.meaning.scale_bias).SerializeToString()


def bundle(sem: Any, x: np.ndarray, name: str) -> tuple[dict[str, bytes], dict[str, Any]]:
    """A repro bundle's model file, run by run_bundle.py on onnxruntime."""
    return {f"{name}.onnx": _model_bytes(sem, x)}, {"engine": "onnxruntime", "model": f"{name}.onnx"}


@lru_cache(maxsize=64)
def _ort_session(digest: str, raw: bytes, precision: engine_config.Precision) -> tuple[Any, dict[str, Any]]:
    """A CPU-provider session with every knob pinned (or onnxruntime's defaults: "deployed"), and its settings."""
    return engine_config.onnxruntime_session(raw, precision)


# Per-element bounds: Max then Min (Clip takes scalars).
EMIT = with_tensor_bounds(onnx.emit, emit_minmax, "ONNX Clip")


DIALECT = Dialect(
    name="onnx", spec_model=OnnxSpec, target_model=OnnxTarget, resolve=resolve, emit=EMIT, target=target,
    check_version=check_version, capability=capability, version_example="onnx:13",
    engines={"onnxruntime": run_onnxruntime}, bundle=bundle, artifacts={"onnx_model": "base64 ModelProto"})
