"""TOSA's catalogue data: where CLAMP's rules are written (and their quoted conditions), the lint catalogue's rule
texts, example specs, the artifact descriptions and the /v1/dialects capability row (read through the registry)."""

from __future__ import annotations

from typing import Any

from clipbridge.core.findings import Code
from clipbridge.dialects.tosa.spec import DTYPES, NAME, OP_VERSION, PROFILES, VERSIONS

SPEC_SRC = "arm/tosa-specification pseudocode/operators/CLAMP.tosac"
DOC_SRC = "arm/tosa-specification chapters/activation_funcs.adoc"
TYPESUPPORT = "CLAMP typesupport (tosa.xml, TOSA 1.0): i8_t, i16_t, fp16_t, bf16_t, fp32_t"
ERROR_ORDER = "ERROR_IF(max_val < min_val)"
ERROR_NAN = "ERROR_IF(is_a_NaN(min_val) || is_a_NaN(max_val))"
LATITUDE = ("signed zero: 'The sign of a zero is ignored'; a zero result may be +0.0 or -0.0 (either sign "
            "permitted)", "subnormals: bf16/fp16/fp32 subnormal values may be flushed to zero before computation "
            "(x=1e-40 in fp32 may give 1e-40 or 0)")

ARTIFACTS = {"tosa_mlir": "MLIR text: func.func @main with tosa.clamp (TOSA 1.0 attributes)",
             "tosa_flatbuffer": "base64 TOSA 1.0 flatbuffer (.tosa) with one CLAMP, when tosa-tools is installed"}


def capability() -> dict[str, Any]:
    return {"dialect": NAME, "default_target": {"dialect": NAME, "version": VERSIONS[-1]},
            "versions": [{"version": OP_VERSION, "selects": "TOSA 1.0", "dtypes": list(DTYPES),
                          "ranks": "0 to MAX_RANK",
                          "rules": [f"{ERROR_ORDER}: min > max is an invalid graph",
                                    f"{ERROR_NAN}: NaN bounds are an invalid graph",
                                    "min_val/max_val required, of type in_out_t (no defaults, no rounding)",
                                    "nan_mode PROPAGATE (default): NaN in, NaN out; IGNORE: NaN in, min_val out",
                                    *LATITUDE,
                                    "no int32/int64/uint8/fp64 CLAMP (typesupport)",
                                    "profiles: " + ", ".join(f"{k} {v}" for k, v in PROFILES.items())]}]}


RULE_TEXTS = {
    Code.MIN_GREATER_THAN_MAX.value: (f"{ERROR_ORDER}: an invalid graph (the reference model refuses it)", SPEC_SRC),
    Code.NAN_BOUND.value: (f"{ERROR_NAN}: an invalid graph", SPEC_SRC),
    Code.NAN_INPUT.value: ("nan_mode PROPAGATE: a NaN input gives NaN; IGNORE: it gives min_val "
                           "(compare_nan returns the non-NaN operand)", DOC_SRC),
    Code.DEFAULT_BOUND.value: ("no defaults: min_val and max_val are required attributes", "tosa.xml CLAMP"),
    Code.BOUND_PRECISION.value: ("min_val/max_val have the input's type in_out_t; no rounding rule is given",
                                 "tosa.xml CLAMP"),
    Code.DTYPE_UNSUPPORTED.value: (TYPESUPPORT, "tosa.xml CLAMP"),
}

EXAMPLES = {
    "relu6-fp32": {"dialect": "tosa", "version": "1.0", "dtype": "fp32", "shape": [1, 4], "min_val": 0,
                   "max_val": 6, "nan_mode": "PROPAGATE"},
    "nan-ignore": {"dialect": "tosa", "dtype": "fp16", "min_val": 0, "max_val": 6, "nan_mode": "IGNORE"},
    "int8-quantized-relu": {"dialect": "tosa", "dtype": "int8", "min_val": -128, "max_val": 127},
    "crossed-rejected": {"dialect": "tosa", "dtype": "fp32", "min_val": 3, "max_val": 1},
}
