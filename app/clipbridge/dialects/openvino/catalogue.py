"""What the lint catalogue, `clipbridge explain`, the docs, /v1/dialects and the inspector show of OpenVINO: its
capability row, its rule per finding code (with where the rule is written), its artifacts and example specs."""

from __future__ import annotations

from typing import Any

from clipbridge.core.dtypes import ALL
from clipbridge.core.findings import Code
from clipbridge.dialects.openvino.dtypes import element_type_name
from clipbridge.dialects.openvino.meaning import CLAMP_VERSION, LATEST_OPSET
from clipbridge.dialects.openvino.spec import NAME

SPEC_SRC = "OpenVINO Clamp-1 specification (reference/openvino-clamp-1.rst)"
OBSERVED_SRC = "tests/test_engines_differential.py"
UNRESOLVED = "unresolved-clip"  # clipbridge.lint.rules.UNRESOLVED: the scan's unresolvable clip (lint is above dialects)


def capability() -> dict[str, Any]:
    """The /v1/dialects row: Clamp-1 for every opsetN, every numeric element type, any rank."""
    return {"dialect": NAME, "default_target": {"dialect": NAME, "version": f"opset{LATEST_OPSET}"},
            "versions": [{"version": CLAMP_VERSION, "selects": f"opset1..opset{LATEST_OPSET}",
                          "dtypes": [element_type_name(d) for d in ALL], "ranks": "any",
                          "rules": ["min/max are double attributes; min <= max required (NaN rejected)",
                                    "integral T: ceil(min), floor(max), saturated",
                                    "floating T: plain cast (nearest even)",
                                    "min(max(x, min), max): ceil(min) > floor(max) gives max",
                                    "NaN input propagates (CPU plugin: clamps to min)"]}]}


ARTIFACTS = {"ir_xml": "OpenVINO IR v11 XML", "ir_bin": "base64 IR weights, when the IR has constants"}

# Finding code -> (OpenVINO's rule, where it is written): the lint catalogue's openvino rows, in its order.
RULE_TEXTS: dict[str, tuple[str, str]] = {
    Code.BOUND_ROUNDING.value: ("integral T: ceil(min), floor(max), saturated", SPEC_SRC),
    Code.BOUND_SATURATION.value: ("saturating conversion of the double attribute to T", SPEC_SRC),
    Code.BOUND_PRECISION.value: ("min/max are double attributes (exact to 2^53)", SPEC_SRC),
    Code.DEFAULT_BOUND.value: ("min and max are required", SPEC_SRC),
    Code.MIN_GREATER_THAN_MAX.value: ("m_min <= m_max is checked: the model is refused", SPEC_SRC),
    Code.NAN_INPUT.value: ("NaN propagates (reference); CPU plugin clamps it to min", SPEC_SRC),
    Code.NAN_BOUND.value: ("rejected: min <= max fails", SPEC_SRC),
    Code.INFINITE_BOUND.value: ("inf double attribute; integer T saturates; pre-2026 IR readers misread 'inf'",
                                SPEC_SRC),
    Code.FLOAT16_BOUND_OVERFLOW.value: ("double attribute cast to f16", SPEC_SRC),
    Code.DTYPE_UNSUPPORTED.value: ("every numeric element type", SPEC_SRC),
    Code.VERSION_UNSUPPORTED.value: ("opset1 .. the newest opset clipbridge knows; others are refused as invalid",
                                     SPEC_SRC),
    Code.RANK_UNSUPPORTED.value: ("any rank", SPEC_SRC),
    Code.SCALE_BIAS.value: ("expressed as Multiply -> Add before Clamp (the CPU plugin fuses them: one rounding)",
                            SPEC_SRC),
    Code.STRIDES.value: ("tensors are dense", SPEC_SRC),
    Code.DYNAMIC_BOUNDS.value: ("min/max are attributes: constants only", SPEC_SRC),
    Code.TENSOR_BOUNDS.value: ("min and max are scalar attributes", SPEC_SRC),
    Code.DTYPE_PROMOTION.value: ("the output has the input's element type", SPEC_SRC),
    Code.SHAPE_UNKNOWN.value: ("shapes may be dynamic", SPEC_SRC),
    Code.ENGINE_BEHAVIOUR.value: ("openvino 2026.4 CPU plugin, observed", OBSERVED_SRC),
    UNRESOLVED: ("Clamp-1 attributes and element types", SPEC_SRC),
}

# Named example specs, the first the inspector's starting spec (app/clipbridge/static/examples.js TEMPLATES.openvino, then
# its EXAMPLES entry of this dialect).
EXAMPLES: dict[str, dict[str, Any]] = {
    "start": {"dialect": NAME, "version": "opset1", "element_type": "f32", "min": 0, "max": 6},
    "int8-fractional": {"dialect": NAME, "version": "opset1", "element_type": "i8", "min": 0.5, "max": 100.7},
}
