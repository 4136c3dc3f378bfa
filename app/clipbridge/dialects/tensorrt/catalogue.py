"""TensorRT kCLIP's catalogue: its readings, rule texts (finding code -> (rule, source)), named examples, artifact
descriptions and capability row; what the lint catalogue, the inspector, `clipbridge explain` and the docs read
through the registry."""

from __future__ import annotations

from typing import Any

from clipbridge.dialects.tensorrt.spec import DTYPES, HEADER_SRC, ISSUE_SRC, NAME, OP_VERSION, PARSER_SRC, VERSIONS
from clipbridge.core.findings import Code

READINGS = {
    "header": f"only max(alpha, min(beta, x)) as documented ({HEADER_SRC}); a NaN input is undocumented (executed "
              "as propagate): the default, the specification, as every dialect's default is",
    "observed": f"a NaN input gives alpha, the lower bound ({ISSUE_SRC}): TensorRT's engine as observed, not a "
                "document; what `basis: engine` runs",
}
# The reading that models TensorRT's engine as observed (Dialect.engine_reading; /v1/execute `basis: engine`).
ENGINE_READING = "observed"

ARTIFACTS = {"tensorrt_python": "TensorRT Python API: network.add_activation(x, trt.ActivationType.CLIP), alpha, "
                                "beta", "tensorrt_cpp": "TensorRT C++ API: addActivation(kCLIP), setAlpha, setBeta"}


def capability() -> dict[str, Any]:
    return {"dialect": NAME, "default_target": {"dialect": NAME, "version": VERSIONS[-1]},
            "versions": [{"version": OP_VERSION, "selects": "TensorRT " + ", ".join(VERSIONS), "dtypes": list(DTYPES),
                          "ranks": "any",
                          "rules": ["max(alpha, min(beta, x)): alpha > beta gives alpha",
                                    "alpha/beta are float attributes: rounded to float, then to the tensor type",
                                    "int8: bounds nearest-even and saturated (inferred); scale 1",
                                    "NaN input: undocumented (header, the default) or alpha (observed engine, #4773)",
                                    "NaN alpha/beta: undocumented",
                                    "no engine here: nothing executed on TensorRT",
                                    *(f"reading {k}: {v}" for k, v in READINGS.items())]}]}


RULE_TEXTS = {
    Code.MIN_GREATER_THAN_MAX.value: ("max(alpha, min(beta, x)): alpha > beta gives alpha (min wins)", HEADER_SRC),
    Code.NAN_INPUT.value: ("a NaN input is undocumented (the header is silent); TensorRT 10.16 was reported to give "
                            "alpha (the observed reading)", HEADER_SRC),
    Code.NAN_BOUND.value: ("NaN alpha/beta: undocumented", HEADER_SRC),
    Code.BOUND_PRECISION.value: ("alpha/beta are float: a bound rounds to float, then to the tensor type",
                                 HEADER_SRC),
    Code.DEFAULT_BOUND.value: ("onnx-tensorrt fills a missing Clip bound with -FLT_MAX/FLT_MAX", PARSER_SRC),
    Code.DTYPE_UNSUPPORTED.value: ("onnx-tensorrt: INT32/INT64 Clip via elementwise max then min; UINT8 rejected",
                                   PARSER_SRC),
}

EXAMPLES = {
    "relu6-float32": {"dialect": "tensorrt", "version": "10", "dtype": "float32", "shape": [1, 4], "alpha": 0,
                      "beta": 6},
    "crossed-alpha-wins": {"dialect": "tensorrt", "dtype": "float32", "alpha": 3, "beta": 1},
    "float16-observed-reading": {"dialect": "tensorrt", "dtype": "float16", "alpha": -1, "beta": 1,
                                 "reading": "observed"},
    "int8-fractional": {"dialect": "tensorrt", "dtype": "int8", "alpha": -2.5, "beta": 100.5},
}
