"""ONNX's data for the catalogue: its rule per finding code with the source, its example specs, and its
/v1/dialects capability row (read by the lint catalogue, `clipbridge explain`, the docs and the inspector)."""

from __future__ import annotations

from typing import Any

from clipbridge.core.findings import Code
from clipbridge.dialects.onnx.dtypes import onnx_name
from clipbridge.dialects.onnx.meaning import order_onnx
from clipbridge.dialects.onnx.spec import NAME
from clipbridge.dialects.onnx.versions import CLIP_VERSIONS, NEWEST_OPSET

SRC = "ONNX Operators.md, Clip-1/6/11/12/13 (reference/onnx-clip.txt)"
UNRESOLVED = "unresolved-clip"  # the lint catalogue's id for a clip the scan cannot resolve (app/clipbridge/lint/rules.py)

RULE_TEXTS: dict[str, tuple[str, str]] = {
    Code.BOUND_ROUNDING.value: ("Clip-11+: bounds are typed scalars of T (no rounding)", SRC),
    Code.BOUND_SATURATION.value: ("Clip-11+: a bound must be a value of T", SRC),
    Code.BOUND_PRECISION.value: ("Clip-1/6: FLOAT attributes; Clip-11+: typed", SRC),
    Code.DEFAULT_BOUND.value: ("Clip-6: +-3.402823e+38 cast to T; Clip-1, 11+: numeric_limits<T>::lowest()/max()",
                               SRC),
    Code.MIN_GREATER_THAN_MAX.value: ("Clip-13: min > max gives max (earlier versions silent, read the same)", SRC),
    Code.NAN_INPUT.value: ("NaN propagates (onnx.reference)", SRC),
    Code.NAN_BOUND.value: ("the Clip-13 formula gives all NaN (onnxruntime ignores the bound)", SRC),
    Code.INFINITE_BOUND.value: ("+-inf are values of float T; not of integer T", SRC),
    Code.FLOAT16_BOUND_OVERFLOW.value: ("Clip-6 FLOAT attributes cast to float16 (nearest even, overflow to inf)",
                                        SRC),
    Code.DTYPE_UNSUPPORTED.value: ("type constraint T per Clip version", SRC),
    Code.VERSION_UNSUPPORTED.value: ("any opset >= 1 is valid; the artifact is built and checked with the installed "
                                     "onnx package, which knows opsets up to onnx.defs.onnx_opset_version()", SRC),
    Code.RANK_UNSUPPORTED.value: ("any rank", SRC),
    Code.SCALE_BIAS.value: ("expressed as Cast(float32) -> Mul -> Add -> Cast before Clip", SRC),
    Code.STRIDES.value: ("tensors are dense", SRC),
    Code.DYNAMIC_BOUNDS.value: ("Clip-11+ min/max are inputs: they may be computed", SRC),
    Code.TENSOR_BOUNDS.value: ("Clip-11+: min and max must be scalars (tensors of empty shape)", SRC),
    Code.DTYPE_PROMOTION.value: ("T: the output has the input's type", SRC),
    Code.SHAPE_UNKNOWN.value: ("shapes may be symbolic", SRC),
    Code.ENGINE_BEHAVIOUR.value: ("onnxruntime 1.31 (CPU), observed", "tests/test_engines_differential.py"),
    UNRESOLVED: ("the Clip version's type constraints and inputs", SRC),
}

# The inspector's specs (app/clipbridge/static/examples.js), the starting spec first.
EXAMPLES: dict[str, dict[str, Any]] = {
    "start": {"dialect": NAME, "opset": 13, "elem_type": "FLOAT", "min": 0, "max": 6},
    "relu6-f16": {"dialect": NAME, "opset": 13, "elem_type": "FLOAT16", "shape": [1, 3, 224, 224], "min": 0, "max": 6},
    "min-gt-max": {"dialect": NAME, "opset": 13, "elem_type": "INT8", "min": 5, "max": 2},
    "int64-big": {"dialect": NAME, "opset": 13, "elem_type": "INT64", "min": 0, "max": "9007199254740993"},
    "clip6-defaults": {"dialect": NAME, "opset": 6, "elem_type": "FLOAT16"},
}


def capability() -> dict[str, Any]:
    """The /v1/dialects row: one entry per Clip version, with the opsets it is in force at and its rules."""
    versions = []
    schemas = CLIP_VERSIONS.values()
    for i, s in enumerate(schemas):
        nxt = schemas[i + 1].since - 1 if i + 1 < len(schemas) else None
        order, order_rule = order_onnx(s)
        defaults = ("missing bound: the FLT_MAX literals -3.402823e+38 / 3.402823e+38 cast to T (float16: +-inf)"
                    if s.since == 6 else "missing bound: numeric_limits<T>::lowest() / max()")
        versions.append({
            "version": s.name,
            "selects": f"opset {s.since}" + (f"..{nxt}" if nxt else "+") if nxt != s.since else f"opset {s.since}",
            "dtypes": [onnx_name(d) for d in s.dtypes], "ranks": "any",
            "rules": [s.summary, "bounds: float attributes cast to T" if s.attributes else
                      "bounds: typed scalar inputs of T", defaults, order_rule,
                      "NaN input propagates; NaN bound gives all NaN"]})
    return {"dialect": NAME, "default_target": {"dialect": NAME, "opset": NEWEST_OPSET}, "versions": versions}
