"""PyTorch's catalogue: its rule texts (finding code -> (rule, source)), named examples, artifact descriptions and
capability rows; what the lint catalogue, the inspector, `clipbridge explain` and the docs read through the
registry. PyTorch has one reading (torch 2.13.0 as run), so no `readings`."""

from __future__ import annotations

from typing import Any

from clipbridge.dialects.pytorch.meaning import RULES
from clipbridge.dialects.pytorch.spec import DTYPES, NAME, OPS, SRC_C10, SRC_HARDTANH, SRC_META, VERSIONS
from clipbridge.core.findings import Code

ARTIFACTS = {
    "pytorch_python": "the PyTorch call (x is the input tensor)",
    "onnx_torchscript": "the ONNX nodes torch.onnx.export(dynamo=False, opset_version=17) writes, predicted",
    "onnx_dynamo": "the ONNX nodes torch.onnx.export(dynamo=True, opset_version=18) writes, predicted",
}


def capability() -> dict[str, Any]:
    return {"dialect": NAME, "default_target": {"dialect": NAME, "version": VERSIONS[-1]},
            "versions": [{"version": v, "selects": f"torch {v}.x and later until the next modelled release",
                          "dtypes": list(DTYPES), "ranks": "any",
                          "rules": [f"ops: {', '.join(OPS)}", *RULES]}
                         for v in VERSIONS]}


RULE_TEXTS = {
    Code.MIN_GREATER_THAN_MAX.value: ("torch.clamp: min > max sets every element to max; F.hardtanh raises "
                                      "ValueError, nn.Hardtanh asserts max_val > min_val", "torch/_torch_docs.py "
                                      "clamp; torch/nn/functional.py hardtanh"),
    Code.NAN_BOUND.value: ("A scalar NaN bound fills the whole output with NaN, one-sided too; a tensor bound's "
                           "NaN element gives NaN there", SRC_META),
    Code.NAN_INPUT.value: ("NaN input propagates (std::min/std::max keep it)", "TensorCompareKernel.cpp"),
    Code.DTYPE_PROMOTION.value: ("An integral tensor with a float scalar bound returns float32; hardtanh never "
                                 "promotes", SRC_META),
    Code.TENSOR_BOUNDS.value: ("min/max may be tensors broadcast against the input (both scalars or both "
                               "tensors)", "torch/_torch_docs.py clamp"),
    Code.BOUND_ROUNDING.value: ("Hardtanh truncates float limits on integral tensors (toLong)", SRC_HARDTANH),
    Code.BOUND_SATURATION.value: ("An out-of-range integer bound raises (negatives down to -max wrap into "
                                  "unsigned types)", SRC_C10),
    Code.BOUND_PRECISION.value: ("half/bfloat16 bounds round through float32 (two roundings)", SRC_C10),
    Code.DEFAULT_BOUND.value: ("At least one of min/max is required; None is no bound (+-inf)", SRC_META),
    Code.DTYPE_UNSUPPORTED.value: ("uint16/uint32/uint64 have no CPU clamp kernel; bool and complex are refused",
                                   "torch 2.13.0 (NotImplementedError)"),
}
EXAMPLES = {
    "relu6 float32": {"dialect": NAME, "op": "relu6", "dtype": "float32"},
    "clamp int32 promoted by min=1.5": {"dialect": NAME, "op": "clamp", "dtype": "int32", "min": 1.5},
    "clamp float32 NaN min (all NaN)": {"dialect": NAME, "op": "clamp", "dtype": "float32", "min": "nan"},
    "clamp uint8 min=-1 wraps to 255": {"dialect": NAME, "op": "clamp", "dtype": "uint8", "min": -1},
    "hardtanh int32 truncates": {"dialect": NAME, "op": "hardtanh", "dtype": "int32", "min": -1.9, "max": 1.9},
    "clamp per-element min": {"dialect": NAME, "op": "clamp", "dtype": "float32", "shape": [3],
                              "min": [0.0, "nan", 2.0], "max": [1.0, 1.0, 1.0]},
}
