"""Models for issue 44's tests (the verdict is about the outputs): a float16 T5-style clamp whose bound is computed
at run time, as transformers' T5 writes it."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T, helper, numpy_helper

D, ROWS = 64, 8


def t5_clamp_f16(big: float = 1200.0) -> bytes:
    """float16: h = x @ w (column 0 of w is `big`, so rows of x summing past 65504 / big overflow there), then
    transformers' T5 clamp: `clamp_value = where(isinf(h).any(), finfo.max - 1000, finfo.max)` and
    `clamp(h, -clamp_value, clamp_value)`; finfo.max - 1000 = 64504 is 64512 in float16."""
    rng = np.random.default_rng(5)
    w = (rng.standard_normal((D, D)) * 0.05).astype(np.float16)
    w[:, 0] = big
    f16 = lambda v, n: numpy_helper.from_array(np.asarray(v, np.float16), n)  # noqa: E731
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"], name="ff"),
             helper.make_node("IsInf", ["h"], ["inf"], name="isinf"),
             helper.make_node("Cast", ["inf"], ["inf_f"], name="inf_as_float", to=T.FLOAT16),
             helper.make_node("ReduceMax", ["inf_f"], ["any_f"], name="any", keepdims=0),
             helper.make_node("Greater", ["any_f", "zero"], ["any_inf"], name="any_inf"),
             helper.make_node("Where", ["any_inf", "lower_max", "max"], ["clamp_value"], name="clamp_value"),
             helper.make_node("Neg", ["clamp_value"], ["neg_clamp"], name="neg_clamp"),
             helper.make_node("Clip", ["h", "neg_clamp", "clamp_value"], ["y"], name="clamp")]
    g = helper.make_graph(nodes, "t5_clamp", [helper.make_tensor_value_info("x", T.FLOAT16, [1, ROWS, D])],
                          [helper.make_tensor_value_info("y", T.FLOAT16, [1, ROWS, D])],
                          [f16(w, "w"), f16(0.0, "zero"), f16(65504.0 - 1000.0, "lower_max"), f16(65504.0, "max")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)], ir_version=9)  # IsInf-20 takes float16
    onnx.checker.check_model(m, full_check=True)
    return m.SerializeToString()


def t5_inputs() -> np.ndarray:
    """Positive rows; rows 0 and 1 shifted so that their sum times the weight passes 65504 in float16."""
    x = np.abs(np.random.default_rng(6).standard_normal((1, ROWS, D))) * 0.5
    x[0, :2] += 1.0  # sum ~ 64 -> 64 * 1200 = 76800 > 65504
    return x.astype(np.float16)
