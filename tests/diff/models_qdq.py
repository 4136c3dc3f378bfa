"""QDQ int8 models (QuantizeLinear/DequantizeLinear around a ReLU6 and a Clip), built here for the quantized
diff tests: a scale that puts 3.0 exactly on a rounding tie (3.0 / s = 63.5), and inputs past the int8 range."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T, helper, numpy_helper

TIE_SCALE = np.float32(3.0 / 63.5)  # 3.0 / TIE_SCALE rounds half to even (64) or away from zero (64): see tie_inputs


def _c(name: str, v, dt) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(v, dt), name)


def qdq_relu6_clip(n: int = 64, scale: float = 0.1) -> bytes:
    """x -> Q/DQ -> Clip(0, 6) 'q_r6' -> Q/DQ -> Clip(-2, 2) 'q_c2' -> Q/DQ -> Relu 'relu' -> y (int8, zp 0)."""
    nodes, inits = [], [_c("s", scale, np.float32), _c("zp", 0, np.int8), _c("zero", 0.0, np.float32),
                        _c("six", 6.0, np.float32), _c("lo2", -2.0, np.float32), _c("hi2", 2.0, np.float32)]
    t = "x"
    for k, (op, name, extra) in enumerate((("Clip", "q_r6", ["zero", "six"]), ("Clip", "q_c2", ["lo2", "hi2"]),
                                           ("Relu", "relu", []))):
        nodes += [helper.make_node("QuantizeLinear", [t, "s", "zp"], [f"q{k}"], name=f"quant_{k}"),
                  helper.make_node("DequantizeLinear", [f"q{k}", "s", "zp"], [f"d{k}"], name=f"dequant_{k}"),
                  helper.make_node(op, [f"d{k}", *extra], [f"c{k}"], name=name)]
        t = f"c{k}"
    nodes += [helper.make_node("QuantizeLinear", [t, "s", "zp"], ["qy"], name="quant_out"),
              helper.make_node("DequantizeLinear", ["qy", "s", "zp"], ["y"], name="dequant_out")]
    g = helper.make_graph(nodes, "qdq", [helper.make_tensor_value_info("x", T.FLOAT, [1, n])],
                          [helper.make_tensor_value_info("y", T.FLOAT, [1, n])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    onnx.checker.check_model(m, full_check=True)
    return m.SerializeToString()


def inputs(n: int = 64, scale: float = 0.1) -> np.ndarray:
    """Ordinary values, values on a rounding tie (k + 0.5 steps), beyond int8 (+-20), NaN and +-inf."""
    rng = np.random.default_rng(7)
    x = rng.uniform(-8, 8, n).astype(np.float32)
    ties = (np.arange(-6, 6) + 0.5) * np.float32(scale)
    x[: ties.size] = ties
    x[ties.size: ties.size + 6] = [20.0, -20.0, np.nan, np.inf, -np.inf, 6.05]
    return x.reshape(1, n)
