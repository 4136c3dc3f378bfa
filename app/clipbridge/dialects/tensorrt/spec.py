"""TensorRT kCLIP's spec and target models, the versions and tensor types it is modelled for, and its sources."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from clipbridge.dialects.kit.spec_base import Shape, WireNumber, _Strict
from clipbridge.core.dtypes import FLOAT16, FLOAT32, INT8, DType

NAME = "tensorrt"
VERSIONS = ("8", "9", "10")
OP_VERSION = "IActivationLayer kCLIP"
HEADER_SRC = "NVIDIA/TensorRT include/NvInfer.h (ActivationType::kCLIP)"
ISSUE_SRC = "NVIDIA/TensorRT#4773 (TensorRT 10.16, a report)"
PARSER_SRC = "onnx/onnx-tensorrt onnxOpImporters.cpp (Clip importer)"
# TensorRT's DataType names and clipbridge's, for the types this layer is modelled on.
DTYPES: dict[str, DType] = {"float32": FLOAT32, "float16": FLOAT16, "int8": INT8}
ALIASES = {"kfloat": "float32", "khalf": "float16", "kint8": "int8"}
OTHER_SPELLING = {"fp32": "float32", "fp16": "float16", "f32": "float32", "f16": "float16", "half": "float16",
                  "float": "float32", "i8": "int8"}
TRT_NAME = {"float32": "kFLOAT", "float16": "kHALF", "int8": "kINT8"}
NAME_OF = {dt.name: name for name, dt in DTYPES.items()}


class TensorRtSpec(_Strict):
    """TensorRT kCLIP: `dtype` (float32, float16, int8), `shape`, float `alpha` (lower) and `beta` (upper)."""

    dialect: Literal["tensorrt"]
    version: Annotated[str, StringConstraints(max_length=16)] = "10"
    dtype: Annotated[str, StringConstraints(max_length=16)]
    shape: Shape | None = None
    alpha: WireNumber
    beta: WireNumber
    reading: Annotated[str, StringConstraints(max_length=16)] = Field(
        default="header", description="Which reading is this clip's own meaning: header (default, the documented "
                                      "operator) or observed (TensorRT's engine as reported); "
                                        "a request's `reading` (/v1/execute, /v1/compare) chooses either")


class TensorRtTarget(_Strict):
    dialect: Literal["tensorrt"]
    version: Annotated[str, StringConstraints(max_length=16)] | None = None
