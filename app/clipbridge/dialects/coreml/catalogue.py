"""Core ML's catalogue data: where clip's rules are written, the lint catalogue's rule texts, example specs, the
artifact description and the /v1/dialects capability rows (read through the registry)."""

from __future__ import annotations

from typing import Any

from clipbridge.core.findings import Code
from clipbridge.dialects.coreml.spec import DTYPES, NAME, OPSETS

SRC15 = "apple/coremltools coremltools/converters/mil/mil/ops/defs/iOS15/elementwise_unary.py (clip)"
SRC17 = "apple/coremltools coremltools/converters/mil/mil/ops/defs/iOS17/elementwise_unary.py (clip)"
NAN_UNDOCUMENTED = (f"NaN on device: not documented ({SRC15} docstring; Apple's MIL op reference); coremltools' "
                    "value_inference (NumPy) propagates it")

ARTIFACTS = {"coreml_mil": "MIL program text (coremltools mb.program with mb.clip)"}


def capability() -> dict[str, Any]:
    return {"dialect": NAME, "default_target": {"dialect": NAME, "version": OPSETS[-1]},
            "versions": [{"version": "clip (iOS15)", "selects": "opsets iOS13 to iOS16", "dtypes": list(DTYPES),
                          "ranks": "any", "rules": ["np.minimum(np.maximum(x, alpha), beta): alpha > beta gives beta",
                                                    "alpha, beta: const scalars of T", NAN_UNDOCUMENTED]},
                         {"version": "clip (iOS17)", "selects": "opsets iOS17, iOS18", "dtypes": list(DTYPES),
                          "ranks": "any", "rules": ["alpha >= beta: ValueError when the program is built",
                                                    "alpha, beta: const scalars of T", NAN_UNDOCUMENTED]}]}


RULE_TEXTS = {
    Code.MIN_GREATER_THAN_MAX.value: ("iOS15: alpha > beta gives beta; iOS17: alpha >= beta is a ValueError",
                                      f"{SRC15}; {SRC17}"),
    Code.NAN_INPUT.value: ("not documented; value_inference (NumPy) propagates", SRC15),
    Code.NAN_BOUND.value: ("not documented; value_inference (NumPy) propagates", SRC15),
    Code.DTYPE_UNSUPPORTED.value: ("T: fp16, fp32", SRC15),
    Code.FLOAT16_BOUND_OVERFLOW.value: ("alpha/beta are consts of T: beyond fp16's range they become inf", SRC15),
    Code.TENSOR_BOUNDS.value: ("alpha and beta are const scalars", SRC15),
}
EXAMPLES = {
    "relu6-fp32-ios17": {"dialect": NAME, "opset": "iOS17", "dtype": "fp32", "alpha": 0, "beta": 6, "shape": [1, 4]},
    "crossed-ios15-gives-beta": {"dialect": NAME, "opset": "iOS15", "dtype": "fp32", "alpha": 5, "beta": 2},
    "equal-ios17-rejected": {"dialect": NAME, "opset": "iOS17", "dtype": "fp16", "alpha": 1, "beta": 1},
}
