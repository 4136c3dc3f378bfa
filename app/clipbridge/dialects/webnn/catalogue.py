"""WebNN clamp's catalogue: its readings, rule texts (finding code -> (rule, source)), named examples, artifact
descriptions and capability row; what the lint catalogue, the inspector, `clipbridge explain` and the docs read
through the registry."""

from __future__ import annotations

from typing import Any

from clipbridge.dialects.webnn.spec import (CHROMIUM_SRC, DATA_TYPES, ISSUE_874, NAME, NOT_IN_WEBNN, OP_VERSION, SPEC_SRC,
                                     VERSIONS)
from clipbridge.core.findings import Code

SPEC, CHROMIUM = "spec", "chromium"
READINGS = {
    SPEC: f"the W3C text ({SPEC_SRC}): ConvertToFloat/ConvertToInt casts (round half to even), the uint32 cast "
          "as written (through signed 32-bit), omitted bound = no clamp, NaN bound and NaN input unspecified",
    CHROMIUM: f"what Chromium ships ({CHROMIUM_SRC}): base::saturated_cast truncates integer bounds, float16 "
              f"bounds go double -> float -> half, a NaN bound acts as omitted ({ISSUE_874})",
}

ARTIFACTS = {"webnn_js": "JavaScript: MLGraphBuilder input, clamp and build calls"}


def capability() -> dict[str, Any]:
    return {"dialect": NAME, "default_target": {"dialect": NAME, "version": VERSIONS[-1]},
            "versions": [{"version": OP_VERSION, "selects": "the W3C WebNN Candidate Recommendation Draft "
                          "(index.bs @c515210, 2026-06-26); WebNN has no op versions", "dtypes": list(DATA_TYPES),
                          "ranks": "0 to 5 required; more where opSupportLimits() allows",
                          "rules": ["min(max(x, minValue), maxValue); an omitted bound is no clamp",
                                    "minValue > maxValue after the casts: TypeError",
                                    "spec reading: ConvertToFloat / ConvertToInt (round half to even, saturate); "
                                    "uint32 through signed 32-bit as written",
                                    "chromium reading: saturated_cast truncates integer bounds; float16 bounds "
                                    "double -> float -> half; a NaN bound acts as omitted",
                                    f"NaN input unspecified; NaN bound: spec unspecified ({ISSUE_874})",
                                    f"no {', '.join(NOT_IN_WEBNN)}; bounds are JS Numbers unless written '123n'"]}]}


RULE_TEXTS: dict[str, tuple[str, str]] = {
    Code.MIN_GREATER_THAN_MAX.value: ("minValue > maxValue after the casts throws a TypeError (method step 5); "
                                      "minValue == maxValue is legal", SPEC_SRC),
    Code.NAN_INPUT.value: ("not specified; Chromium's backends differ", f"{SPEC_SRC}; {ISSUE_874}"),
    Code.NAN_BOUND.value: ("spec: a NaN bound passes step 5 and its result is unspecified; Chromium: as if the "
                           "option were not given (older web-platform-tests: 0)", ISSUE_874),
    Code.BOUND_ROUNDING.value: ("spec: ConvertToInt rounds half to even; Chromium: base::saturated_cast "
                                "truncates toward zero", f"{SPEC_SRC} (Casting); chromium ml_number.cc"),
    Code.BOUND_SATURATION.value: ("integer bounds saturate to the dataType; the spec casts uint32 through signed "
                                  "32-bit as written (a typo read literally)", f"{SPEC_SRC} (Casting)"),
    Code.BOUND_PRECISION.value: ("a JS Number bound loses integer precision above 2^53 (write a BigInt '123n'); "
                                 "Chromium rounds float16 bounds twice (double -> float -> half)",
                                 f"{SPEC_SRC} (MLNumber note); chromium ml_number.cc"),
    Code.DEFAULT_BOUND.value: ("an omitted minValue/maxValue is no clamp (EMULATED note; the steps' inverted "
                               "+Infinity/-Infinity defaults are a spec erratum)", SPEC_SRC),
    Code.FLOAT16_BOUND_OVERFLOW.value: ("ConvertToFloat(x, 16): |x| >= 65520 becomes +-Infinity",
                                        f"{SPEC_SRC} (Casting)"),
    Code.DTYPE_UNSUPPORTED.value: ("MLOperandDataType has float32, float16, int32, uint32, int64, uint64, int8, "
                                   "uint8 (no bfloat16, float64, int16, uint16)", f"{SPEC_SRC} (line 1650)"),
    Code.RANK_UNSUPPORTED.value: ("ranks 0 to 5 are required of every implementation; more where "
                                  "opSupportLimits() allows", f"{SPEC_SRC} (tensor limits)"),
    Code.TENSOR_BOUNDS.value: ("minValue/maxValue are scalars (MLNumber)", SPEC_SRC),
    Code.SCALE_BIAS.value: ("none: clamp has no scale or bias", SPEC_SRC),
}

EXAMPLES: dict[str, dict[str, Any]] = {
    "relu6-float32": {"dialect": NAME, "dataType": "float32", "shape": [1, 4], "minValue": 0, "maxValue": 6},
    "lower-only-float16": {"dialect": NAME, "dataType": "float16", "shape": [8], "minValue": 0},
    "int64-fraction-readings-differ": {"dialect": NAME, "dataType": "int64", "shape": [1], "minValue": 3.9},
    "uint32-signed-cast-typo": {"dialect": NAME, "dataType": "uint32", "shape": [1], "maxValue": 4294967290},
    "float16-double-rounding": {"dialect": NAME, "dataType": "float16", "shape": [1],
                                "minValue": "1.0004882812509095"},
    "int64-bigint-bound": {"dialect": NAME, "dataType": "int64", "shape": [1], "maxValue": "9007199254740993n"},
    "nan-bound": {"dialect": NAME, "dataType": "float32", "shape": [1], "minValue": "nan", "maxValue": 6},
}
