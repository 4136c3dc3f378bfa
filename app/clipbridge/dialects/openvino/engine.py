"""The real engine: a Clamp IR (or the Maximum/Minimum IR of per-element bounds) compiled and run on the openvino
CPU plugin, and the repro bundle's IR files. The openvino package is optional: imported inside the runner."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from clipbridge.core.errors import BackendUnavailable
from clipbridge.dialects.openvino.ir import build_ir, parse
from clipbridge.dialects.openvino.minmax import build_minmax_ir
from clipbridge.dialects.openvino.spec import OpenVinoSpec
from clipbridge.engines import config as engine_config, extras as engines


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
    spec = parse(OpenVinoSpec.model_validate(sem.spec)).spec.model_copy(update={"shape": list(x.shape)})
    return build_ir(spec, sem.meaning.scale_bias)


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
