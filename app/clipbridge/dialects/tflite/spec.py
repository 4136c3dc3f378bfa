"""TFLite's clip wire spec and target models, the ops that clip and the tensor types their kernels take."""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import StrictInt, StringConstraints

from clipbridge.core.dtypes import FLOAT32, INT8, INT16, INT32, INT64, UINT8, DType
from clipbridge.dialects.kit.spec_base import Shape, WireNumber, _Strict

NAME = "tflite"
MINMAX = "MINIMUM_MAXIMUM"
# op -> (real lower, real upper): the fixed ranges of the activation kernels.
FIXED: dict[str, tuple[float, float]] = {"RELU6": (0.0, 6.0), "RELU_N1_TO_1": (-1.0, 1.0),
                                         "RELU_0_TO_1": (0.0, 1.0), "RELU": (0.0, math.inf)}
OPS = (*FIXED, MINMAX)
DTYPES: dict[str, DType] = {"float32": FLOAT32, "uint8": UINT8, "int8": INT8, "int16": INT16,
                            "int32": INT32, "int64": INT64}
QUANTIZED = ("uint8", "int8", "int16")
# The kernels' type checks (activations.cc Relu1Eval / Relu0to1Eval error text, observed on ai-edge-litert 2.3.0).
OP_DTYPES: dict[str, tuple[str, ...]] = {"RELU6": ("float32", "uint8", "int8", "int16"),
                                         "RELU": ("float32", "uint8", "int8", "int16"),
                                         "RELU_N1_TO_1": ("float32", "uint8", "int8"),
                                         "RELU_0_TO_1": ("float32", "uint8", "int8"),
                                         MINMAX: tuple(DTYPES)}
# Runtime versions (TensorFlow numbering, tflite op-version table): RELU_0_TO_1 v1 is "2.10.0".
VERSIONS = ("1.5", "2.10", "2.18")


class TfliteQuantization(_Strict):
    """Per-tensor quantization of a uint8/int8/int16 tensor: real = scale * (q - zero_point)."""

    scale: WireNumber
    zero_point: StrictInt = 0


class TfliteSpec(_Strict):
    """A TFLite clip: `op` (RELU6, RELU_N1_TO_1, RELU_0_TO_1, RELU, MINIMUM_MAXIMUM with `min`/`max`), `dtype`,
    optional `quantization` for uint8/int8/int16, `shape`."""

    dialect: Literal["tflite"]
    op: Annotated[str, StringConstraints(max_length=32)]
    dtype: Annotated[str, StringConstraints(max_length=16)] = "float32"
    min: WireNumber | None = None
    max: WireNumber | None = None
    quantization: TfliteQuantization | None = None
    shape: Shape | None = None


class TfliteTarget(_Strict):
    dialect: Literal["tflite"]
    version: Annotated[str, StringConstraints(max_length=16)] | None = None


def target(version: str | None) -> TfliteTarget:
    return TfliteTarget(dialect=NAME, version=version)
