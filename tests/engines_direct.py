"""The independent oracle for whole models: a model run directly on onnxruntime and OpenVINO through their own
Python APIs, and their outputs compared here. No clipbridge code runs or compares anything (tests/test_architecture.py
keeps this module free of clipbridge imports).

Settings, from each engine's documentation, are those of `clipbridge diff --precision model` (docs/diff.md):
onnxruntime's CPU provider with graph optimizations off; OpenVINO's CPU plugin at the model's own float precision
in accuracy mode with denormals kept. Equality: same shape and dtype, NaN where the other has NaN, infinities
exact, finite values within a float32 tolerance written here (a Conv sums in an order each engine picks)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import onnx

TOLERANCE = {np.dtype(np.float32): (1e-4, 1e-5), np.dtype(np.float16): (1e-2, 1e-3)}


def onnxruntime_outputs(model: bytes, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
    return [np.asarray(v) for v in session.run(None, feeds)]


def openvino_outputs(model: bytes, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    import openvino as ov
    core = ov.Core()
    with tempfile.TemporaryDirectory() as tmp:  # OpenVINO reads an ONNX model from a file
        path = Path(tmp) / "m.onnx"
        path.write_bytes(model)
        read = core.read_model(str(path))
    # The model's own precision: f16 for an all-float16 model where the CPU plugin computes f16, else f32.
    half = _half_only(model) and "FP16" in core.get_property("CPU", "OPTIMIZATION_CAPABILITIES")
    config = {"INFERENCE_PRECISION_HINT": "f16" if half else "f32", "EXECUTION_MODE_HINT": "ACCURACY",
              "CPU_DENORMALS_OPTIMIZATION": False}
    compiled = core.compile_model(read, "CPU", config)
    result = compiled.create_infer_request().infer(feeds)
    return [np.asarray(result[out]) for out in compiled.outputs]


def _half_only(model: bytes) -> bool:
    """Whether every float tensor the graph declares is float16 (OpenVINO then runs it in f16, as `model` asks)."""
    g = onnx.load_from_string(model).graph
    types = {t.data_type for t in g.initializer} | {v.type.tensor_type.elem_type for v in [*g.input, *g.output]}
    floats = types & {onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE, onnx.TensorProto.FLOAT16}
    return floats == {onnx.TensorProto.FLOAT16}


RUNNERS = {"onnxruntime": onnxruntime_outputs, "openvino": openvino_outputs}


def run(engine: str, model: bytes, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    return RUNNERS[engine](model, feeds)


def agree(a: list[np.ndarray], b: list[np.ndarray]) -> bool:
    """Every output pair the same shape and dtype, NaN at the same places, infinities exact, the rest close."""
    return len(a) == len(b) and all(_agree(x, y) for x, y in zip(a, b))


def _agree(x: np.ndarray, y: np.ndarray) -> bool:
    if x.shape != y.shape or x.dtype != y.dtype:
        return False
    if x.dtype.kind != "f":
        return bool(np.array_equal(x, y))
    rtol, atol = TOLERANCE.get(x.dtype, (1e-9, 1e-12))
    return bool(np.allclose(x.astype(np.float64), y.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True))
