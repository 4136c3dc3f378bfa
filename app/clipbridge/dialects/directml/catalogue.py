"""DirectML's data for the lint catalogue, the inspector, `clipbridge explain` and the docs: its rule per finding
code with its source, example specs (the first is the inspector's starting spec), its readings, and the
/v1/dialects capability rows."""

from __future__ import annotations

from typing import Any

from clipbridge.core.findings import Code
from clipbridge.dialects.directml.dtypes import dml_name
from clipbridge.dialects.directml.meaning import CURRENT_DOC, DOC_2022
from clipbridge.dialects.directml.tensor import CLIP, CLIP1, FEATURE_LEVELS, NEWEST_LEVEL, tensor_support_directml

DML_SRC = "DML_ELEMENT_WISE_CLIP_OPERATOR_DESC / _CLIP1_ remarks (reference/directml-clip-operator-desc.md)"

_RULES: dict[Code, str] = {
    Code.BOUND_ROUNDING: "CLIP: FLOAT Min/Max cast to T, integers truncate toward zero",
    Code.BOUND_SATURATION: "out-of-range FLOAT->T cast undocumented (read as saturating)",
    Code.BOUND_PRECISION: "CLIP: FLOAT Min/Max (exact to 2^24); CLIP1: typed",
    Code.DEFAULT_BOUND: "Min and Max are required",
    Code.MIN_GREATER_THAN_MAX: "CLIP: 2022 document gives Max, current document gives Min; CLIP1: Min",
    Code.NAN_INPUT: "undocumented (executed as propagating)",
    Code.NAN_BOUND: "undocumented (executed as ignored)",
    Code.INFINITE_BOUND: "FLOAT Min/Max may be +-inf; integer cast undocumented",
    Code.FLOAT16_BOUND_OVERFLOW: "FLOAT Min/Max cast to FLOAT16",
    Code.DTYPE_UNSUPPORTED: "tensor-support table per feature level (never f64, bf16)",
    Code.VERSION_UNSUPPORTED: "the feature levels clipbridge knows; others are refused as invalid",
    Code.RANK_UNSUPPORTED: "FL < 3.0: exactly 4 dimensions; 3.0+: 1 to 8",
    Code.SCALE_BIAS: "DML_SCALE_BIAS: x*Scale+Bias, precision undocumented (read as float32, two roundings)",
    Code.STRIDES: "DML_BUFFER_TENSOR_DESC.Strides",
    Code.DYNAMIC_BOUNDS: "Min/Max are desc fields: constants only",
    Code.TENSOR_BOUNDS: "Min/Max are scalar desc fields",
    Code.DTYPE_PROMOTION: "OutputTensor.DataType equals InputTensor.DataType",
    Code.SHAPE_UNKNOWN: "DML_BUFFER_TENSOR_DESC.Sizes are concrete",
    Code.ENGINE_BEHAVIOUR: "no engine on Linux",
}
RULE_TEXTS: dict[str, tuple[str, str]] = {code.value: (text, DML_SRC) for code, text in _RULES.items()}


def _tensor(data_type: str, sizes: list[int]) -> dict[str, Any]:
    return {"DataType": data_type, "Sizes": sizes}


# The inspector's starting spec first (app/clipbridge/static/examples.js TEMPLATES.directml), then its DirectML examples.
EXAMPLES: dict[str, dict[str, Any]] = {
    "start": {"dialect": "directml", "feature_level": "6_4", "operator": "ELEMENT_WISE_CLIP",
              "desc": {"InputTensor": _tensor("FLOAT32", [1, 1, 1, 4]),
                       "OutputTensor": _tensor("FLOAT32", [1, 1, 1, 4]), "Min": 0, "Max": 6}},
    "dml-scalebias": {"dialect": "directml", "feature_level": "6_4", "operator": "ELEMENT_WISE_CLIP",
                      "desc": {"InputTensor": _tensor("FLOAT16", [1, 3, 8, 8]),
                               "OutputTensor": _tensor("FLOAT16", [1, 3, 8, 8]),
                               "ScaleBias": {"Scale": 0.5, "Bias": 1}, "Min": 0, "Max": 6}},
}

# ELEMENT_WISE_CLIP's min > max only (CLIP1 has one document): the first is the default.
READINGS = {
    CURRENT_DOC: "max(Min, min(x, Max)): min > max gives Min (the current DML_ELEMENT_WISE_CLIP_OPERATOR_DESC page, "
                 "reference/directml-clip-operator-desc.md); the default",
    DOC_2022: "min(Max, max(Min, x)): min > max gives Max (the same page as published in 2022)",
}


def capability() -> dict[str, Any]:
    """The /v1/dialects row: per feature level its data types, ranks, operators and rules."""
    versions = []
    for lv in FEATURE_LEVELS:
        dts, (rmin, rmax) = tensor_support_directml(lv)
        ops = [CLIP] + ([CLIP1] if lv >= "5_0" else [])
        versions.append({
            "version": lv, "selects": f"feature_level {lv}", "dtypes": [dml_name(d) for d in dts],
            "ranks": f"{rmin}" if rmin == rmax else f"{rmin}-{rmax}", "operators": ops,
            "rules": ["CLIP: FLOAT Min/Max cast to T (integers truncate toward zero, float16 nearest even)",
                      "CLIP: min > max ambiguous (2022 doc gives Max, current doc gives Min)",
                      *(["CLIP1: MinMaxDataType == OutputTensor.DataType; min > max gives Min"] if lv >= "5_0"
                        else []),
                      "ScaleBias x*Scale+Bias before clipping", "NaN undocumented",
                      "input and output: same DataType, DimensionCount, Sizes"]})
    return {"dialect": "directml", "default_target": {"dialect": "directml", "feature_level": NEWEST_LEVEL},
            "versions": versions}
