"""Run an ONNX model (bytes) on one engine, with chosen tensors marked as outputs. Runs in a sandbox child.

Marking is done on the ONNX graph (extra graph outputs), so that every engine sees the same marked model.
OpenVINO's runtime model is read back after compiling: each executed kernel's `rt_info` names the ONNX
nodes it was built from (`originalLayersNames`) and the type it ran in (`runtimePrecision`).
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib.util import find_spec
from typing import Any

import numpy as np
import onnx

from clipbridge.engines import config as engine_config
from clipbridge.engines.extras import DIFF_INSTALL, INSTALL_HINT
from clipbridge.engines.errors import reduced
from clipbridge.diff import child
from clipbridge.diff.child import model_errors
from clipbridge.core.errors import BackendUnavailable, ClipBridgeError

SHORT = {"float32": "f32", "float16": "f16", "float64": "f64", "bfloat16": "bf16"}


class EngineCannotLoad(ClipBridgeError):
    """An engine refused the model; the message quotes the engine's own words."""

    status = 422
    title = "An engine cannot load the model"


# engine -> the module it runs on; onnx-reference is the core's own onnx, so only the [diff] extra's two can be missing
ENGINE_MODULES = {"onnxruntime": "onnxruntime", "openvino": "openvino", "onnx-reference": "onnx"}


class EngineNotInstalled(BackendUnavailable):
    """An engine the diff needs is not installed here: the install's fault, never the model's (issue 37)."""

    title = "An engine is not installed"


def installed(engine: str) -> bool:
    """Whether the engine's module is on the path (found, not imported: importing OpenVINO costs a second)."""
    try:
        return find_spec(ENGINE_MODULES.get(engine, engine)) is not None
    except (ImportError, ValueError):  # a broken or half-removed install
        return False


def not_installed(names: Iterable[str], loc: str = "engine") -> EngineNotInstalled:
    """The 422 naming the one-step install command, for engines that cannot be imported."""
    names = list(dict.fromkeys(names))
    return EngineNotInstalled(f"{' and '.join(names)} {'is' if len(names) == 1 else 'are'} not installed: "
                              f"{DIFF_INSTALL} installs the diff's engines, onnxruntime and OpenVINO (from a "
                              f"checkout: {INSTALL_HINT['diff']}); the model was not run", loc)


def require(names: Iterable[str], loc: str = "engine") -> None:
    """Refuse, before any work, a diff or fix whose engines are not all installed (`loc`: the option naming them)."""
    absent = [e for e in names if e in ENGINE_MODULES and not installed(e)]
    if absent:
        raise not_installed(absent, loc)
class ResultTooLarge(ClipBridgeError):
    """A marked run's results pass its share of the diff's memory budget (counted in the child, before anything
    is sent): tensors shape inference could not size (clipbridge.diff.passes sizes the others before the run)."""

    status = 422
    title = "The model's tensors are too large to diff"


@model_errors
def with_outputs(model_bytes: bytes, names: list[str], dtypes: dict[str, str] | None = None) -> bytes:
    """The model with `names` appended as graph outputs, typed from `dtypes` (the plan's, read once by the
    diff's prepare) or else by shape inference; an untyped output is still read by the engines. Skipping a
    second inference matters on large models (a 21 MB model: ~0.2 s of the diff)."""
    m = onnx.load_from_string(model_bytes)
    have = {o.name for o in m.graph.output}
    wanted = [n for n in dict.fromkeys(names) if n and n not in have]
    if not wanted:
        return model_bytes
    if dtypes is not None:
        typed = {n: onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtypes[n])) for n in wanted if n in dtypes}
        return child.appended(model_bytes, outputs=[onnx.helper.make_tensor_value_info(n, typed[n], None) if n in typed
                                                    else onnx.helper.make_empty_tensor_value_info(n) for n in wanted])
    try:
        inferred = {v.name: v for v in onnx.shape_inference.infer_shapes(model_bytes, strict_mode=False).graph.value_info}
    except Exception:  # inference is a best effort; an untyped output is still read by the engines
        inferred = {}
    return child.appended(model_bytes, outputs=[inferred.get(n) or onnx.helper.make_empty_tensor_value_info(n)
                                                for n in wanted])


def _load_error(engine: str, exc: Exception, model_bytes: bytes = b"") -> ClipBridgeError:
    """The engine's refusal, reduced (clipbridge.engines.errors: its own text may quote what it read)."""
    if isinstance(exc, ImportError):  # found on the path but not importable: the install, not the model
        return not_installed([engine])
    return reduced(EngineCannotLoad, engine, "cannot load the model", exc, model_bytes)


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


def _ov(model_bytes: bytes, feeds: dict[str, np.ndarray], precision: str, kernels: bool = True) -> tuple[dict, dict]:
    try:
        model = engine_config.ov_core().read_model(model_bytes, b"")
        compiled, effective = engine_config.openvino_compile(model, precision)
    except Exception as exc:  # OpenVINO raises RuntimeError with the frontend's message: the user's model
        raise _load_error("openvino", exc, model_bytes) from None
    # A graph input no node reads is not a port of the compiled model (OpenVINO drops it): feed only the ports.
    ports = {n for p in compiled.inputs for n in p.get_names()}
    result = compiled({k: v for k, v in feeds.items() if k in ports})
    values = {}
    for port in compiled.outputs:
        for name in port.get_names():
            values[name] = result[port]
    return values, {"precision": effective, "kernels": _ov_kernels(compiled) if kernels else {},
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
        precision: str = "model", kernels: bool = True, limit: tuple[int, str] | None = None) -> dict[str, Any]:
    """Run `engine` on the model with `marks` added as outputs. Module-level, so that a sandbox child runs it.
    `limit`: (bytes, the setting naming them) the results may hold, a diff's marked runs' share of its budget.

    Returns {"values": {tensor: array}, "precision": as it ran, "kernels": {...}, "version": ...}."""
    require([engine])  # here too, for every caller (fix, bundles): a missing engine is never the model's fault
    marked = with_outputs(model_bytes, marks) if marks else model_bytes
    try:
        # The runtime model's kernels are read where the walk uses them (the marked run), not in a plain run.
        values, info = (_ov(marked, feeds, precision, kernels) if engine == "openvino"
                        else RUNNERS[engine](marked, feeds, precision))
    except ClipBridgeError:
        raise
    except Exception as exc:  # the engine loaded the model but failed running it: its own words, a 4xx
        raise reduced(EngineCannotLoad, engine, "failed running the model", exc, marked) from None
    held = sum(int(np.asarray(v).nbytes) for v in values.values())
    if limit is not None and held > limit[0]:
        raise ResultTooLarge(f"{engine}'s results hold {held} bytes (limit {limit[0]} bytes per engine run, its "
                             f"share of the diff's memory budget): raise {limit[1]}", limit[1])
    return {"values": {k: np.asarray(v) for k, v in values.items()}, **info, "version": version(engine)}
