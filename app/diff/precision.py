"""Engine precision for the diff: a thin local stand-in for app.engine_config until that module lands.

`model` pins each engine to the model's own types (OpenVINO: INFERENCE_PRECISION_HINT f32 and
EXECUTION_MODE_HINT ACCURACY); `deployed` keeps each engine's defaults (OpenVINO's CPU plugin then picks bf16
on CPUs with avx512_bf16/AMX). The precision each engine really ran at is read back, never assumed.
"""

from __future__ import annotations

from typing import Any, Literal

Precision = Literal["model", "deployed"]


def openvino_compile(model: Any, precision: str = "model", device: str = "CPU") -> tuple[Any, str]:
    """(compiled model, the inference precision it runs at, read back from the compiled model)."""
    import openvino as ov
    config = {"INFERENCE_PRECISION_HINT": "f32", "EXECUTION_MODE_HINT": "ACCURACY"} if precision == "model" else {}
    compiled = ov.Core().compile_model(model, device, config)
    return compiled, compiled.get_property("INFERENCE_PRECISION_HINT").get_type_name()


def onnxruntime_session(model_bytes: bytes, precision: str = "model") -> tuple[Any, dict]:
    """(session, its settings): the CPU provider computes in the model's types at either precision."""
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(model_bytes, options, providers=["CPUExecutionProvider"])
    return session, {"precision": "model", "providers": session.get_providers()}
