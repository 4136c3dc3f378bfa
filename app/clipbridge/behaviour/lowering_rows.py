"""Rows: what a converter's lowering of a torch clamp computes (LiteRT builtin kernels, Core ML, torch eager
itself). Data only (clipbridge.behaviour.model.Row); chain's rules (clipbridge.chain.rules) read these."""

from __future__ import annotations

from clipbridge.behaviour.model import Row, frozen, measured

NOTES = "../shared/design/converter-chain-notes.md"
LITERT = ("tflite", "tflite:builtin")
LITERT_MEASURED = measured("litert-torch", "litert")
T_STATIC = "tests/chain/test_litert_static.py::test_the_lowering_is_predicted_from_the_source"
T_RULE = "tests/chain/test_rules.py::test_rule"

LOWERING = (
    # How litert-torch lowers a torch clamp (tflite = LiteRT with XNNPACK, tflite:builtin = its builtin kernels);
    # chain.litert_static predicts `became` from these, and the conversion the run makes confirms them.
    Row("litert-lowers-hardswish", ("hardswish", "HARD_SWISH"), LITERT, "torch hardswish",
        frozen({"torch": "hardswish", "tflite": "HARD_SWISH, never fused", "tflite:builtin": "HARD_SWISH"}),
        LITERT_MEASURED, T_STATIC, "lowering"),
    Row("litert-lowers-hardsigmoid", ("hardsigmoid", "ADD", "MUL"), LITERT, "torch hardsigmoid",
        frozen({"torch": "relu6(x + 3) / 6", "tflite": "ADD(x, 3) with RELU6 fused, then MUL(x, 1/6); after a "
                "convolution the + 3 folds into its bias: CONV_2D (fused RELU6), then MUL"}),
        LITERT_MEASURED, T_STATIC, "lowering"),
    Row("litert-lowers-relu6", ("clamp", "relu6", "hardtanh", "RELU6"), LITERT, "a clamp with bounds [0, 6]",
        frozen({"torch": "clamp(x, 0, 6), int or float bounds", "tflite": "RELU6"}), LITERT_MEASURED, T_STATIC,
        "lowering"),
    Row("litert-lowers-relu-n1-to-1", ("clamp", "hardtanh", "RELU_N1_TO_1"), LITERT, "a clamp with bounds [-1, 1]",
        frozen({"torch": "clamp(x, -1, 1) (hardtanh's default)", "tflite": "RELU_N1_TO_1"}), LITERT_MEASURED,
        T_STATIC, "lowering"),
    Row("litert-lowers-relu-0-to-1", ("clamp", "RELU_0_TO_1"), LITERT, "a clamp with bounds [0, 1]",
        frozen({"torch": "clamp(x, 0, 1)", "tflite": "RELU_0_TO_1, never fused (no activation function of that "
                "name)"}), LITERT_MEASURED, T_STATIC, "lowering"),
    Row("litert-lowers-relu", ("clamp", "clamp_min", "relu", "RELU", "MINIMUM"), LITERT,
        "a clamp whose min is 0",
        frozen({"torch": "clamp(x, min=0), relu, clamp_min(x, 0)", "tflite": "RELU; with a max c as well: RELU, "
                "then MINIMUM(x, c)"}), LITERT_MEASURED, T_STATIC, "lowering"),
    Row("litert-lowers-maximum-minimum", ("clamp", "MAXIMUM", "MINIMUM"), LITERT, "a clamp with any other bounds",
        frozen({"torch": "clamp(x, lo, hi)", "tflite": "MAXIMUM(x, lo), then MINIMUM(x, hi), tensor first, the "
                "constants as written (+-inf and min > max kept)"}), LITERT_MEASURED, T_STATIC, "lowering"),
    Row("litert-fuses-activation", ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "MUL", "SUB", "ADD"), LITERT,
        "a RELU, RELU6 or RELU_N1_TO_1 whose input is a convolution, linear, mul, div by a constant, sub or add "
        "it is the only user of",
        frozen({"torch": "the op, then the clamp", "tflite": "the op with the activation fused in its options (an "
                "add of a constant fuses hardtanh's and hardsigmoid's only)"}), LITERT_MEASURED, T_STATIC,
        "fusion"),
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
        "a builtin CONV_2D/DEPTHWISE_CONV_2D whose output is +-inf (with no fused activation, or a fused RELU that "
        "lets inf through)",
        frozen({"torch": "+-inf", "tflite:xnnpack": "+-inf", "tflite:builtin": "+-FLT_MAX (clamped to [lowest, max])"}),
        f"{NOTES}; " + measured("litert"),
        "tests/chain/test_litert_chain.py::test_a_builtin_convolution_saturates_inf", "saturation",
        frozen({"tflite:builtin": "saturates"}),
        phrases=('clamps its output to [lowest, max]', 'clamp their output to [lowest, max]')),
    Row("litert-arith-saturates-inf", ("ADD", "SUB", "MUL", "DIV", "FULLY_CONNECTED", "AVERAGE_POOL_2D", "MAX_POOL_2D"),
        ("tflite:builtin",),
        "a builtin ADD/SUB/MUL/DIV/FULLY_CONNECTED/AVERAGE_POOL_2D/MAX_POOL_2D whose output is +-inf (with no fused "
        "activation, or a fused RELU that lets inf through): the ops whose builtin options carry a fused activation, "
        "as CONV_2D's (litert-conv-saturates-inf)",
        frozen({"torch": "+-inf", "tflite:xnnpack": "+-inf",
                "tflite:builtin": "+-FLT_MAX (the kernel's activation range is [lowest, max] with none fused); NaN "
                "kept (MAX_POOL_2D drops it)"}),
        f"{NOTES}; " + measured("litert", "litert-torch") + ", torch 2.13.0 (2026-11-28: one model of 28 ops on "
        "+-inf, NaN and normal inputs, BUILTIN_WITHOUT_DEFAULT_DELEGATES against the default XNNPACK delegate: "
        "these ops and CONV_2D wrote +-FLT_MAX for every +-inf torch gave, XNNPACK kept +-inf in all; MEAN, SUM, "
        "REDUCE_MAX, BATCH_MATMUL, CONCATENATION, MAXIMUM, SELECT, EXP, SQRT and ABS kept +-inf on both)",
        "tests/chain/test_litert_chain.py::test_builtin_arithmetic_saturates_inf", "saturation",
        frozen({"tflite:builtin": "saturates"}),
        phrases=('activation range is [lowest, max] with none fused',)),
)
