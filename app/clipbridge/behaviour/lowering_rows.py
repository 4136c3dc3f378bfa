"""Rows: what a converter's lowering of a torch clamp computes (LiteRT builtin kernels, Core ML, torch eager
itself). Data only (clipbridge.behaviour.model.Row); chain's rules (clipbridge.chain.rules) read these."""

from __future__ import annotations

from clipbridge.behaviour.model import Row, frozen, measured

NOTES = "../shared/design/converter-chain-notes.md"
T_RULE = "tests/chain/test_rules.py::test_rule"

LOWERING = (
    Row("litert-builtin-nan-to-constant", ("MAXIMUM", "MINIMUM"), ("tflite:builtin",),
        "a NaN input of MAXIMUM/MINIMUM against a constant (BUILTIN_WITHOUT_DEFAULT_DELEGATES)",
        frozen({"torch": "NaN", "tflite:builtin": "the constant operand", "tflite:xnnpack": "NaN"}),
        f"{NOTES}; " + measured("litert"), T_RULE, "lowering", frozen({"tflite:builtin": "constant"}),
        phrases=('return the constant operand for a nan input',)),
    Row("coreml-min-ge-max-fill", ("clip", "fill", "const"), ("coreml",),
        "a torch clamp whose constant min >= max (coremltools folds it into fill(max))",
        frozen({"torch": "NaN for NaN", "coreml": "max for every input, NaN included"}),
        f"coremltools' torch frontend clamp lowering ({NOTES})", T_RULE, "lowering", frozen({"coreml": "fill"}),
        phrases=('folds a clamp whose constant min >= max',)),
    Row("torch-hardswish-overflow", ("hardswish", "HardSwish", "HSwish", "HARD_SWISH"), ("torch", "tflite:builtin"),
        "hardswish of x beyond about FLT_MAX / 6",
        frozen({"torch": "x * min(max(x + 3, 0), 6) / 6 in float32: overflows to inf",
                "spec": "ONNX HardSwish-14: x * max(0, min(1, x/6 + 0.5)): finite",
                "openvino": "HSwish: finite", "tflite:builtin": "(x * f32(1/6)) * relu6(x + 3): an ulp up"}),
        f"{NOTES}; " + measured("torch", "litert"), T_RULE, "saturation",
        phrases=('overflows to inf above about flt_max / 6',)),
    Row("coreml-int-literal-refused", ("clamp_min", "clamp_max"), ("coreml",),
        "a torch clamp_min/clamp_max with an int literal bound",
        frozen({"torch": "runs", "coreml": "the conversion fails (clamp_min/clamp_max assert x.dtype == y.dtype)"}),
        f"{NOTES}, measured", "tests/chain/test_rules.py::test_int_literal_refused_is_predicted_from_the_source",
        "lowering", frozen({"coreml": "refuses"}), phrases=('asserts x.dtype == y.dtype',)),
    Row("litert-conv-saturates-inf", ("CONV_2D", "DEPTHWISE_CONV_2D"), ("tflite:builtin",),
        "a builtin CONV_2D/DEPTHWISE_CONV_2D with no fused activation, an output of +-inf",
        frozen({"torch": "+-inf", "tflite:xnnpack": "+-inf", "tflite:builtin": "+-FLT_MAX (clamped to [lowest, max])"}),
        f"{NOTES}; " + measured("litert"),
        "tests/chain/test_litert_chain.py::test_a_builtin_convolution_saturates_inf", "saturation",
        frozen({"tflite:builtin": "saturates"}),
        phrases=('clamps its output to [lowest, max]', 'clamp their output to [lowest, max]')),
)
