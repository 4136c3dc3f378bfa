"""OpenVINO Clamp-1 on the dialect interface: the adapter over app/dialects/openvino.py, and the CPU plugin."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from app.engines import config as engine_config, extras as engines
from app.dialects import openvino
from app.dialects.kit.base import Dialect, Resolved
from app.dialects.openvino_minmax import build_minmax_ir, emit_minmax_openvino
from app.dialects.kit.spec_base import OpenVinoSpec, OpenVinoTarget
from app.dialects.kit.tensor_bounds import with_tensor_bounds
from app.core.dtypes import ALL
from app.core.errors import BackendUnavailable


def resolve(spec: OpenVinoSpec) -> Resolved:
    q = openvino.parse(spec)
    return Resolved("openvino", openvino.resolve(q), openvino.normalize(q), q.spec.shape)


def target(version: str | None) -> OpenVinoTarget:
    return OpenVinoTarget(dialect="openvino", version=version)  # checked when emitting, located at the target


def capability() -> dict[str, Any]:
    return {"dialect": "openvino", "default_target": {"dialect": "openvino",
                                                      "version": f"opset{openvino.LATEST_OPSET}"},
            "versions": [{"version": openvino.CLAMP_VERSION, "selects": f"opset1..opset{openvino.LATEST_OPSET}",
                          "dtypes": [d.openvino for d in ALL], "ranks": "any",
                          "rules": ["min/max are double attributes; min <= max required (NaN rejected)",
                                    "integral T: ceil(min), floor(max), saturated",
                                    "floating T: plain cast (nearest even)",
                                    "min(max(x, min), max): ceil(min) > floor(max) gives max",
                                    "NaN input propagates (CPU plugin: clamps to min)"]}]}


def run_openvino(sem: Any, x: np.ndarray) -> np.ndarray:
    """The Clamp IR of `sem` (openvino semantics) compiled and run on the CPU plugin."""
    try:
        import openvino as _ov  # noqa: F401
    except ImportError:
        raise engines.missing("openvino") from None
    if sem.meaning.dtype.name == "bfloat16":
        raise BackendUnavailable("the openvino Python API cannot take bfloat16 NumPy arrays", "backend")
    xml, weights = _ir(sem, x)
    precision = getattr(sem, "precision", "model")
    try:
        compiled, settings = _ov_compiled(xml, weights, precision)
        y = np.asarray(compiled(x)[0])
    except Exception as exc:
        raise BackendUnavailable(f"openvino cannot run this IR: {str(exc).splitlines()[0][:300]}",
                                 "backend") from None
    engine_config.record_run(settings)
    return y


def _ir(sem: Any, x: np.ndarray) -> tuple[str, bytes]:
    """The Clamp IR of `sem` for the input's real shape (an IR source is read first, then built compact)."""
    if sem.meaning.has_tensor_bounds:
        return build_minmax_ir(sem.meaning, list(x.shape))  # the Maximum/Minimum IR emit_minmax_openvino wrote
    spec = openvino.parse(OpenVinoSpec.model_validate(sem.spec)).spec.model_copy(update={"shape": list(x.shape)})
    return openvino.build_ir(spec, sem.meaning.scale_bias)


def bundle(sem: Any, x: np.ndarray, name: str) -> tuple[dict[str, bytes], dict[str, Any]]:
    """A repro bundle's IR (and weights), run by run_bundle.py on the CPU plugin."""
    xml, weights = _ir(sem, x)
    files = {f"{name}.xml": xml.encode()}
    if weights:
        files[f"{name}.bin"] = weights
    return files, {"engine": "openvino", "model": f"{name}.xml", "weights": f"{name}.bin" if weights else None}


@lru_cache(maxsize=64)
def _ov_compiled(xml: str, weights: bytes, precision: engine_config.Precision) -> tuple[Any, dict[str, Any]]:
    """The IR compiled on the CPU plugin with the precision pinned (or deployed), and the settings that ran."""
    compiled, inference = engine_config.openvino_compile(engine_config.openvino_read(xml, weights), precision)
    return compiled, engine_config.openvino_settings(precision, inference)


# Per-element bounds: Clamp-1 takes scalar attributes, so Maximum then Minimum with Const bounds.
EMIT = with_tensor_bounds(openvino.emit, emit_minmax_openvino, "OpenVINO Clamp-1")


DIALECT = Dialect(
    name="openvino", spec_model=OpenVinoSpec, target_model=OpenVinoTarget, resolve=resolve, emit=EMIT,
    target=target, check_version=openvino.version_openvino, capability=capability,
    version_example="openvino:opset16", engines={"openvino": run_openvino},
    bundle=bundle, artifacts={"ir_xml": "OpenVINO IR v11 XML",
                              "ir_bin": "base64 IR weights, when the IR has constants"})
