"""StableHLO's catalogue data: where its rules are written, the lint catalogue's rule texts, example specs, the
artifact descriptions and the /v1/dialects capability row (read through the registry, never branched on)."""

from __future__ import annotations

from typing import Any

from clipbridge.core.findings import Code
from clipbridge.dialects.stablehlo.spec import ELEMENT_TYPES, NAME, OP_VERSION, VERSIONS

SPEC_SRC = "openxla/stablehlo docs/spec.md#clamp"

ARTIFACTS = {"stablehlo_mlir": "StableHLO MLIR text: func.func @main with clamp"}

RULE_TEXTS = {
    Code.BOUND_ROUNDING.value: ("min/max are typed like the operand (C3): an integer type takes integer "
                                "literals only, no rounding", SPEC_SRC),
    Code.BOUND_SATURATION.value: ("a bound must be a value of the element type: out of range is an error",
                                  SPEC_SRC),
    Code.BOUND_PRECISION.value: ("a float literal rounds once to the element type (nearest even)", SPEC_SRC),
    Code.DEFAULT_BOUND.value: ("min and max are required operands: no defaults", SPEC_SRC),
    Code.MIN_GREATER_THAN_MAX.value: ("minimum(maximum(x, min), max): min > max gives max", SPEC_SRC),
    Code.NAN_INPUT.value: ("NaN propagates (IEEE-754 maximum/minimum)", SPEC_SRC),
    Code.NAN_BOUND.value: ("a NaN bound propagates: every output is NaN", SPEC_SRC),
    Code.INFINITE_BOUND.value: ("+-inf are values of float types; not of integer types", SPEC_SRC),
    Code.FLOAT16_BOUND_OVERFLOW.value: ("an f16 literal beyond 65504 rounds to inf", SPEC_SRC),
    Code.DTYPE_UNSUPPORTED.value: ("f16, bf16, f32, f64, i8..i64, ui8..ui64 modelled; i1 not yet", SPEC_SRC),
    Code.VERSION_UNSUPPORTED.value: ("clamp is one op in every StableHLO 1.x version", SPEC_SRC),
    Code.RANK_UNSUPPORTED.value: ("any rank", SPEC_SRC),
    Code.SCALE_BIAS.value: ("no ScaleBias: a multiply and add before clamp would be needed", SPEC_SRC),
    Code.STRIDES.value: ("tensors are dense", SPEC_SRC),
    Code.DYNAMIC_BOUNDS.value: ("min and max are operands: they may be computed", SPEC_SRC),
    Code.TENSOR_BOUNDS.value: ("min and max are rank 0 or have the operand's shape (C1, C2): per-element "
                               "bounds", SPEC_SRC),
    Code.DTYPE_PROMOTION.value: ("the result has the operand's type (C3)", SPEC_SRC),
    Code.SHAPE_UNKNOWN.value: ("shapes may be dynamic (tensor<?xf32>)", SPEC_SRC),
    Code.ENGINE_BEHAVIOUR.value: ("jax 0.10 XLA CPU flushes f32/f64/bf16 subnormals, observed",
                                  "tests/dialects/test_stablehlo.py"),
}

EXAMPLES = {
    "relu6-f32": {"dialect": NAME, "element_type": "f32", "shape": [1, 4], "min": 0, "max": 6},
    "i8-crossed": {"dialect": NAME, "element_type": "i8", "min": 5, "max": 2},
    "nan-bound": {"dialect": NAME, "element_type": "f16", "min": "nan", "max": 6},
}


def capability() -> dict[str, Any]:
    return {"dialect": NAME, "default_target": {"dialect": NAME, "version": VERSIONS[-1]},
            "versions": [{"version": OP_VERSION, "selects": "StableHLO 1.x", "dtypes": list(ELEMENT_TYPES),
                          "ranks": "any",
                          "rules": ["minimum(maximum(operand, min), max): min > max gives max",
                                    "min and max required, typed like the operand",
                                    "min/max rank 0 or the operand's shape (per-element bounds)",
                                    "NaN propagates from the operand and the bounds (IEEE-754)",
                                    "signed zeros ordered -0 < +0",
                                    "i1 (boolean): not modelled yet"]}]}
