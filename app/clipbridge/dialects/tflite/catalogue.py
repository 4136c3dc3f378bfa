"""TFLite's catalogue data: where its rules are written, its two readings, the lint catalogue's rule texts,
example specs, the artifact description and the /v1/dialects capability rows (read through the registry)."""

from __future__ import annotations

from typing import Any

from clipbridge.core.findings import Code
from clipbridge.core.numbers import format_number
from clipbridge.dialects.tflite.spec import DTYPES, FIXED, MINMAX, NAME, OP_DTYPES, VERSIONS

SRC = "tensorflow/lite/kernels/activations.cc"
MM_SRC = "tensorflow/lite/kernels/maximum_minimum.cc; tensorflow/python/ops/clip_ops.py (tf.clip_by_value)"

READING_XNNPACK = "xnnpack"
READING_BUILTIN = "builtin"
READINGS = {
    READING_XNNPACK: "Interpreter() default: the XNNPACK delegate runs float32 RELU6/RELU_N1_TO_1/RELU/MINIMUM/"
                     "MAXIMUM; NaN inputs propagate, subnormals flush (ai-edge-litert 2.3.0, measured)",
    READING_BUILTIN: "OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES / BUILTIN_REF: maximum_minimum.cc's ternaries "
                     "(MINIMUM(NaN, max) = max), subnormals kept (measured)",
}

READING_LINES = tuple(f"{k}: {v}" for k, v in READINGS.items())

ARTIFACTS = {"tflite_model": "base64 .tflite flatbuffer (schema 3)"}


def capability() -> dict[str, Any]:
    return {"dialect": NAME, "default_target": {"dialect": NAME, "version": VERSIONS[-1]},
            "versions": [{"version": op, "selects": "TFLite runtime >= 2.10" if op == "RELU_0_TO_1" else
                          "TFLite runtime >= 1.5", "dtypes": list(OP_DTYPES[op]), "ranks": "any",
                          "rules": [f"clamp to [{format_number(FIXED[op][0])}, {format_number(FIXED[op][1])}]",
                                    "quantized: zero_point + roundf(act / scale) (float32 quotient, half away "
                                    "from zero), clamped to the type",
                                    "NaN input propagates (measured)"]} for op in FIXED]
            + [{"version": MINMAX, "selects": "any TFLite runtime", "dtypes": list(DTYPES), "ranks": "any",
                "rules": ["MINIMUM(x, max) then MAXIMUM(., min): min > max gives min",
                          "constants: float32 (one rounding) or stored integers of the tensor type",
                          "NaN input propagates under XNNPACK; the builtin kernels give max (reading 'builtin')",
                          "a NaN constant: order-dependent, undocumented"]}]}


RULE_TEXTS = {
    Code.MIN_GREATER_THAN_MAX.value: ("MINIMUM(x, max) then MAXIMUM(., min): min > max gives min", MM_SRC),
    Code.NAN_INPUT.value: ("NaN input propagates under the default XNNPACK delegate; the builtin MINIMUM gives max",
                           f"{MM_SRC}; measured on ai-edge-litert 2.3.0"),
    Code.NAN_BOUND.value: ("`el1 > el2 ? el1 : el2`: a NaN constant's effect depends on operand order", MM_SRC),
    Code.BOUND_ROUNDING.value: ("quantized bounds: zero_point + roundf(act / scale), float32 quotient, half away "
                                "from zero", f"{SRC} QuantizedReluX"),
    Code.BOUND_SATURATION.value: ("quantized bounds clamped to [qmin, qmax]", f"{SRC} QuantizedReluX"),
    Code.BOUND_PRECISION.value: ("MINIMUM/MAXIMUM constants are float32 tensors", "tensorflow/lite/schema/schema.fbs"),
    Code.DTYPE_UNSUPPORTED.value: ("RELU6/RELU: float32, uint8, int8, int16; RELU_N1_TO_1/RELU_0_TO_1: float32, "
                                   "uint8, int8; MINIMUM/MAXIMUM also int32, int64", f"{SRC}; {MM_SRC}"),
    Code.TENSOR_BOUNDS.value: ("only fixed ranges have an op; other bounds are MINIMUM/MAXIMUM constant tensors",
                               "tensorflow/compiler/mlir/lite (tf.clip_by_value lowering)"),
    Code.ENGINE_BEHAVIOUR.value: ("XNNPACK flushes float32 subnormals", "measured on ai-edge-litert 2.3.0"),
}
EXAMPLES = {
    "relu6-float32": {"dialect": NAME, "op": "RELU6", "dtype": "float32", "shape": [1, 4]},
    "relu6-int8-scale-0.07": {"dialect": NAME, "op": "RELU6", "dtype": "int8",
                              "quantization": {"scale": 0.07, "zero_point": 0}},
    "relu-n1-to-1-int8-half-away": {"dialect": NAME, "op": "RELU_N1_TO_1", "dtype": "int8",
                                    "quantization": {"scale": 0.4, "zero_point": 0}},
    "clip-by-value-crossed": {"dialect": NAME, "op": MINMAX, "dtype": "float32", "min": 6, "max": 4},
}
