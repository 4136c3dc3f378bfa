"""Rows: bounds, rounding, saturation, float-to-int casts, the precision an engine runs a type in, and the order
of a sum. Data only (clipbridge.behaviour.model.Row)."""

from __future__ import annotations

from clipbridge.behaviour.model import Row, frozen, measured

ALL = ("onnxruntime", "openvino", "onnx-reference")

NUMBERS = (
    Row("omitted-bound-default", ("Clip", "Clamp", "clip", "Maximum", "Minimum"), ALL,
        "a Clip-11+ bound left out",
        frozen({"spec": "numeric_limits<T>::lowest()/max() (float16: -+65504)", "onnxruntime": "lowest()/max()",
                "openvino": "lowest()/max()", "onnx-reference": "-inf/+inf inputs stay -inf/+inf (np.clip with None)",
                "coreml": "clip(-FLT_MAX, .)"}),
        "ONNX Operators.md Clip-11+; " + measured("onnxruntime", "openvino", "onnx-reference"),
        "tests/fix/test_facts.py::test_omitted_bound", "bound",
        frozen({"onnxruntime": "limit", "openvino": "limit", "onnx-reference": "open"}),
        cause="default-bound",
        phrases=("keeps +-inf (its clip skips the bound)", "onnx.reference keeps +-inf",
                 "onnx.reference leaves that side open")),
    Row("onnxruntime-float16-clip11-open-bound", ("Clip",), ("onnxruntime",),
        "a float16 Clip-11 with a bound left out (Clip-12 and later: the spec's +-65504)",
        frozen({"spec": "float16's lowest()/max(): -+65504", "onnxruntime": "-inf/+inf inputs stay -inf/+inf (its "
                "float16 default is not float16's lowest()/max())"}),
        measured("onnxruntime"), "tests/behaviour/test_measured.py::test_float16_clip11_open_bound", "bound",
        frozen({"onnxruntime": "open"})),
    Row("clip-min-greater-than-max", ("Clip",), ALL, "Clip-13 with min > max",
        frozen({"spec": "max everywhere", "onnxruntime": "max (or min: the reading order differs)",
                "openvino": "max (or min)", "onnx-reference": "max (or min)"}),
        "ONNX Operators.md Clip-13: min > max makes every output max", "tests/diff/test_causes.py::test_element_cause",
        "bound", frozen({"onnxruntime": "max", "openvino": "max", "onnx-reference": "max"}),
        cause="min-greater-than-max"),
    Row("clip6-crossed-refused", ("Clip",), ALL, "a Clip-6 with attributes min > max",
        frozen({"onnxruntime": "refuses the model (Clip_6Base: min_ <= max_ was false)",
                "openvino": "refuses the model: Check 'm_min <= m_max' failed: Attribute 'min' must be less or equal "
                            "than 'max'",
                "onnx-reference": "runs it: max everywhere"}),
        measured("onnxruntime", "openvino", "onnx-reference"), "tests/fix/test_facts.py::test_crossed_clip6_loads",
        "bound", frozen({"onnxruntime": "refuses", "openvino": "refuses", "onnx-reference": "runs"}),
        phrases=('min_ <= max_ was false', "'min' must be less or equal than 'max'")),
    Row("float16-bound-held-as-inf", ("Clip",), ALL, "a float16 tensor, a constant bound beyond 65504",
        frozen({"spec": "the bound cast to float16: +-inf", "onnxruntime": "+-inf", "openvino": "+-inf",
                "onnx-reference": "+-inf"}),
        measured("onnxruntime", "openvino", "onnx-reference"),
        "tests/diff/test_f16_bounds.py::test_nan_through_a_float16_bound_beyond_range", "rounding"),
    Row("float16-bound-overflow", ("Clip", "Clamp"), ALL, "a float16 tensor, a finite bound beyond 65504, "
        "an element beyond 65504",
        frozen({"spec": "the bound as float16 holds it (+-inf)", "onnxruntime": "+-inf or 65504",
                "openvino": "65504 (Clamp keeps bounds as double)", "onnx-reference": "+-inf"}),
        "ONNX Clip-6's float attribute; OpenVINO Clamp-1's double attributes; "
        + measured("onnxruntime", "openvino", "onnx-reference"), "tests/diff/test_causes.py::test_element_cause",
        "saturation", cause="float16-bound-overflow"),
    Row("bound-rounding", ("Clip", "Clamp"), ALL, "a bound that is no value of the tensor's type, the element "
        "between its two readings",
        frozen({"spec": "the bound cast to T", "openvino": "ceil for min, floor for max on integers",
                "onnxruntime": "cast to T", "onnx-reference": "cast to T"}),
        "ONNX Operators.md Clip: bounds of type T; OpenVINO Clamp-1 (ceil/floor on integers)",
        "tests/diff/test_causes.py::test_element_cause", "rounding", cause="bound-rounding"),
    Row("cast-out-of-range", ("Cast",), ALL, "Cast-19 of NaN, +-inf or a float beyond the integer type",
        frozen({"spec": "undefined (C++ float-to-int conversion)", "onnxruntime": "INT64_MIN for an int64",
                "onnx-reference": "INT64_MIN for an int64", "openvino": "through int32 (INT32_MIN)",
                "8-bit": "wraps"}),
        "ONNX Operators.md Cast-19; " + measured("onnxruntime", "openvino", "onnx-reference"),
        "tests/diff/test_op_causes.py::test_cause_measured", "cast", cause="cast-out-of-range",
        phrases=('converts through int32', 'int64 cast goes through int32')),
    Row("openvino-int64-as-int32", ("Identity", "Unsqueeze", "Add", "Mul", "Clamp"), ("openvino",),
        "an int64 tensor with a value beyond int32",
        frozen({"spec": "int64", "openvino": "int32: the value wraps to its low 32 bits"}), measured("openvino"),
        "tests/diff/test_op_causes.py::test_int64_as_int32_names_only_the_wrap", "precision",
        frozen({"openvino": "int32"}), cause="inference-precision", phrases=('computes int64 tensors in int32',)),
    Row("openvino-inference-precision", ("*",), ("openvino",),
        "a float32 model on a CPU with avx512_bf16/AMX (PERFORMANCE mode) or ARM",
        frozen({"spec": "the model's type", "openvino": "bf16 (f16 on ARM) unless INFERENCE_PRECISION_HINT=f32 "
                "or EXECUTION_MODE_HINT=ACCURACY"}),
        "OpenVINO CPU plugin documentation (INFERENCE_PRECISION_HINT); " + measured("openvino"),
        "tests/diff/test_precision_cause.py::test_a_conv_run_narrower_is_inference_precision", "precision",
        frozen({"openvino": "host"}), cause="inference-precision"),
    Row("accumulation-order", ("Conv", "MatMul", "Gemm", "ReduceSum"), ALL,
        "a sum of n products: each engine sums in an order of its own (blocking, SIMD lanes, FMA)",
        frozen({"spec": "the exact sum, within gamma_n * sum|a_i b_i| in any order"}),
        "Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., 2002, §3.1, eq. (3.5)",
        "tests/diff/test_op_causes.py::test_accumulation_bound_against_float64", "accumulation",
        cause="accumulation-order"),
    Row("quantize-saturation", ("QuantizeLinear", "DequantizeLinear", "Clip"), ALL,
        "a clip on a quantization grid, its input beyond a bound (or a non-finite input of QuantizeLinear)",
        frozen({"spec": "QuantizeLinear-13 saturates to the integer range", "onnxruntime": "the bound, or a grid "
                "value within one step inside it", "openvino": "the bound, or a grid value within one step inside "
                "it (the clip folded into the integer range)"}),
        "ONNX Operators.md QuantizeLinear-13; " + measured("onnxruntime", "openvino"),
        "tests/diff/test_quantized.py::test_quantized_rules", "saturation", cause="quantize-saturation"),
    Row("quantize-rounding", ("QuantizeLinear",), ALL, "an element exactly between two quantization steps",
        frozen({"spec": "rounding to nearest ties to even", "onnxruntime": "one of the two neighbours",
                "openvino": "one of the two neighbours (may round half away from zero)"}),
        "ONNX Operators.md QuantizeLinear-13: 'rounding to nearest ties to even'; "
        + measured("onnxruntime", "openvino"), "tests/diff/test_quantized.py::test_quantized_rules", "rounding",
        cause="quantize-rounding"),
)
