"""float16 Clips whose bound lies beyond 65504 (float16 holds it as +-inf), built here for the cause tests."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T, helper, numpy_helper


def clip6_f16(lo: float | None = None, hi: float | None = None, n: int = 8) -> bytes:
    """Relu -> float16 Clip-6 with float attributes (a Relu first would hide the NaN: Identity instead)."""
    attrs = {k: v for k, v in (("min", lo), ("max", hi)) if v is not None}
    nodes = [helper.make_node("Identity", ["x"], ["y"], name="pass"),
             helper.make_node("Clip", ["y"], ["z"], name="clip_f16", **attrs)]
    g = helper.make_graph(nodes, "f16_bound", [helper.make_tensor_value_info("x", T.FLOAT16, [1, n])],
                          [helper.make_tensor_value_info("z", T.FLOAT16, [1, n])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 6)], ir_version=7)
    onnx.checker.check_model(m, full_check=True)
    return m.SerializeToString()


def clip13_f16(lo: float, hi: float, n: int = 8) -> bytes:
    """A float16 Clip-13 whose bounds are float16 initializers (a bound beyond 65504 is stored as +-inf)."""
    inits = [numpy_helper.from_array(np.array(lo, np.float16), "lo"),
             numpy_helper.from_array(np.array(hi, np.float16), "hi")]
    nodes = [helper.make_node("Identity", ["x"], ["y"], name="pass"),
             helper.make_node("Clip", ["y", "lo", "hi"], ["z"], name="clip_f16")]
    g = helper.make_graph(nodes, "f16_bound13", [helper.make_tensor_value_info("x", T.FLOAT16, [1, n])],
                          [helper.make_tensor_value_info("z", T.FLOAT16, [1, n])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    onnx.checker.check_model(m, full_check=True)
    return m.SerializeToString()
