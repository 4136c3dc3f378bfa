"""A T5-style block for the precision trace: MatMul -> residual Add -> RMSNorm (Pow, ReduceMean, Add eps,
Sqrt, Div, Mul weight), float32, whose weights push a few elements of the MatMul past float16's 65504."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T, helper, numpy_helper

D, ROWS = 64, 8


def _c(name: str, v) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(v, np.float32), name)


def t5_block(big: float = 1200.0) -> bytes:
    """Column 0 of the MatMul weight is `big`: a row of x summing past 65504 / big overflows there."""
    rng = np.random.default_rng(5)
    w = (rng.standard_normal((D, D)) * 0.05).astype(np.float32)
    w[:, 0] = big
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"], name="ff"),
             helper.make_node("Add", ["x", "h"], ["r"], name="residual"),
             helper.make_node("Pow", ["r", "two"], ["sq"], name="square"),
             helper.make_node("ReduceMean", ["sq"], ["ms"], name="mean", axes=[-1], keepdims=1),
             helper.make_node("Add", ["ms", "eps"], ["mse"], name="add_eps"),
             helper.make_node("Sqrt", ["mse"], ["rms"], name="rms"),
             helper.make_node("Div", ["r", "rms"], ["n"], name="normalize"),
             helper.make_node("Mul", ["n", "gamma"], ["y"], name="scale")]
    g = helper.make_graph(nodes, "t5_block", [helper.make_tensor_value_info("x", T.FLOAT, [1, ROWS, D])],
                          [helper.make_tensor_value_info("y", T.FLOAT, [1, ROWS, D])],
                          [_c("w", w), _c("two", 2.0), _c("eps", 1e-6), _c("gamma", np.ones(D))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    onnx.checker.check_model(m, full_check=True)
    return m.SerializeToString()


def t5_inputs() -> np.ndarray:
    """Positive rows (no cancellation in the sum: float16's rounding of x stays within its tolerance); rows 0
    and 1 shifted so that their sum times the weight passes 65504, the others stay below it."""
    x = np.abs(np.random.default_rng(6).standard_normal((1, ROWS, D)).astype(np.float32)) * 0.5
    x[0, :2] += 1.0  # sum ~ 64 -> 64 * 1200 = 76800 > 65504
    return x
