"""Run an ONNX model (bytes) on one engine, with chosen tensors marked as outputs. Runs in a sandbox child.

Marking is done on the ONNX graph (extra graph outputs), so that every engine sees the same marked model.
OpenVINO's runtime model is read back after compiling: each executed kernel's `rt_info` names the ONNX
nodes it was built from (`originalLayersNames`) and the type it ran in (`runtimePrecision`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx

from app.engines import config as engine_config
from app.engines.errors import reduced
from app.diff.child import model_errors
from app.core.errors import ClipBridgeError

SHORT = {"float32": "f32", "float16": "f16", "float64": "f64", "bfloat16": "bf16"}
# Bytes, not elements (a float64 element is 8): all the tensors one engine run returns together. Checked
# before the run from shape inference (app.diff.run.marks marks only the clip-like nodes' tensors past it) and
# after it by the child's own count (engines.run); app.diff.child.MAX_TENSOR_BYTES bounds any one tensor.
MAX_MARKED_BYTES = 64 * 2**20


class EngineCannotLoad(ClipBridgeError):
    """An engine refused the model; the message quotes the engine's own words."""

    status = 422
    title = "An engine cannot load the model"


class ResultTooLarge(ClipBridgeError):
    """An engine run's results pass MAX_MARKED_BYTES (counted in the child, before anything is sent)."""

    status = 422
    title = "The model's tensors are too large to diff"


@model_errors
def with_outputs(model_bytes: bytes, names: list[str]) -> bytes:
    """The model with `names` appended as graph outputs (typed where shape inference knows them)."""
    m = onnx.load_from_string(model_bytes)
    have = {o.name for o in m.graph.output}
    wanted = [n for n in dict.fromkeys(names) if n and n not in have]
    if not wanted:
        return model_bytes
    try:
        typed = {v.name: v for v in onnx.shape_inference.infer_shapes(m, strict_mode=False).graph.value_info}
    except Exception:  # inference is a best effort; an untyped output is still read by the engines
        typed = {}
    for n in wanted:
        m.graph.output.append(typed.get(n) or onnx.helper.make_empty_tensor_value_info(n))
    return m.SerializeToString()


def _load_error(engine: str, exc: Exception, model_bytes: bytes = b"") -> EngineCannotLoad:
    """The engine's refusal, reduced (app.engines.errors: its own text may quote what it read)."""
    return reduced(EngineCannotLoad, engine, "cannot load the model", exc, model_bytes)  # type: ignore[return-value]


def _ort(model_bytes: bytes, feeds: dict[str, np.ndarray], precision: str) -> tuple[dict, dict]:
    try:
        session, settings = engine_config.onnxruntime_session(model_bytes, precision)
    except Exception as exc:  # onnxruntime raises its own Fail/InvalidGraph/...: the user's model
        raise _load_error("onnxruntime", exc, model_bytes) from None
    names = [o.name for o in session.get_outputs()]
    values = session.run(names, feeds)
    # The CPU provider computes each node in its declared type: report the model's float type as it ran.
    floats = sorted({SHORT[v.dtype.name] for v in values if v.dtype.name in SHORT})
    return dict(zip(names, values)), {"precision": "/".join(floats) or "model", "kernels": {},
                                      "settings": settings}


def _ov_kernels(compiled: Any) -> dict[str, dict]:
    """ONNX node name -> the kernel that ran it: its precision, type and the other layers fused into it."""
    out: dict[str, dict] = {}
    for op in compiled.get_runtime_model().get_ordered_ops():
        info = op.get_rt_info()
        names = [n for n in info["originalLayersNames"].astype(str).split(",") if n] \
            if "originalLayersNames" in info else []
        kernel = {"precision": info["runtimePrecision"].astype(str) if "runtimePrecision" in info else "",
                  "type": info["layerType"].astype(str) if "layerType" in info else "", "layers": names}
        for n in names:
            out.setdefault(n, kernel)
    return out


def _ov(model_bytes: bytes, feeds: dict[str, np.ndarray], precision: str) -> tuple[dict, dict]:
    import openvino as ov
    try:
        model = ov.Core().read_model(model_bytes, b"")
        compiled, effective = engine_config.openvino_compile(model, precision)
    except Exception as exc:  # OpenVINO raises RuntimeError with the frontend's message: the user's model
        raise _load_error("openvino", exc, model_bytes) from None
    result = compiled(feeds)
    values = {}
    for port in compiled.outputs:
        for name in port.get_names():
            values[name] = result[port]
    return values, {"precision": effective, "kernels": _ov_kernels(compiled),
                    "settings": engine_config.openvino_settings(precision, effective)}  # type: ignore[arg-type]


def _reference(model_bytes: bytes, feeds: dict[str, np.ndarray], precision: str) -> tuple[dict, dict]:
    from onnx.reference import ReferenceEvaluator
    try:
        m = onnx.load_from_string(model_bytes)
        ev = ReferenceEvaluator(m)
    except Exception as exc:  # the evaluator's own message: an op it lacks, a malformed graph
        raise _load_error("onnx-reference", exc, model_bytes) from None
    names = [o.name for o in m.graph.output]
    with np.errstate(all="ignore"):
        values = ev.run(names, feeds)
    out = {n: np.asarray(v) for n, v in zip(names, values)}
    floats = sorted({SHORT[v.dtype.name] for v in out.values() if v.dtype.name in SHORT})
    return out, {"precision": "/".join(floats) or "model", "kernels": {}, "settings": {"evaluator": "numpy"}}


RUNNERS = {"onnxruntime": _ort, "openvino": _ov, "onnx-reference": _reference}


def version(engine: str) -> str:
    if engine == "onnxruntime":
        import onnxruntime
        return str(onnxruntime.__version__)
    if engine == "openvino":
        import openvino
        return str(openvino.get_version())
    return str(onnx.__version__)


def run(engine: str, model_bytes: bytes, feeds: dict[str, np.ndarray], marks: list[str],
        precision: str = "model") -> dict[str, Any]:
    """Run `engine` on the model with `marks` added as outputs. Module-level, so that a sandbox child runs it.

    Returns {"values": {tensor: array}, "precision": as it ran, "kernels": {...}, "version": ...}."""
    marked = with_outputs(model_bytes, marks) if marks else model_bytes
    try:
        values, info = RUNNERS[engine](marked, feeds, precision)
    except ClipBridgeError:
        raise
    except Exception as exc:  # the engine loaded the model but failed running it: its own words, a 4xx
        raise reduced(EngineCannotLoad, engine, "failed running the model", exc, marked) from None
    held = sum(int(np.asarray(v).nbytes) for v in values.values())
    if held > MAX_MARKED_BYTES:
        raise ResultTooLarge(f"{engine}'s results hold {held} bytes (limit {MAX_MARKED_BYTES} bytes per engine "
                             "run): give smaller inputs", "inputs")
    return {"values": {k: np.asarray(v) for k, v in values.items()}, **info, "version": version(engine)}
