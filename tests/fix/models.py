"""Hand-built ONNX models for the fix tests: a Conv block feeding each clip-like op the issue names."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SHAPE = [1, 3, 8, 8]
CHANNELS = 4


def _c(v: float, name: str, dt=np.float32) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(v, dt), name)


def block(op_nodes: list[onnx.NodeProto], inits: list[onnx.TensorProto], opset: int = 17,
          dt: int = TensorProto.FLOAT, conv: bool = True) -> onnx.ModelProto:
    """x -> Conv (named like a dynamo export) -> the given nodes (reading 'c', writing 'y')."""
    np_dt = helper.tensor_dtype_to_np_dtype(dt)
    rng = np.random.default_rng(7)
    nodes, out_shape = [], list(SHAPE)
    if conv:
        w = (rng.standard_normal((CHANNELS, SHAPE[1], 3, 3)) * 0.5).astype(np_dt)
        inits = [numpy_helper.from_array(w, "w"), *inits]
        nodes.append(helper.make_node("Conv", ["x", "w"], ["c"], name="node_Conv_1", pads=[1, 1, 1, 1]))
        out_shape = [1, CHANNELS, *SHAPE[2:]]
    else:
        nodes.append(helper.make_node("Identity", ["x"], ["c"], name="node_Identity_1"))
    g = helper.make_graph(nodes + op_nodes, "main_graph", [helper.make_tensor_value_info("x", dt, SHAPE)],
                          [helper.make_tensor_value_info("y", dt, out_shape)], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="clipbridge-tests")
    m.ir_version = 8
    return m


def clip(lo: float | None, hi: float | None, opset: int = 17, dt: int = TensorProto.FLOAT,
         conv: bool = False) -> onnx.ModelProto:
    np_dt = helper.tensor_dtype_to_np_dtype(dt)
    if opset < 11:
        attrs = {k: v for k, v in (("min", lo), ("max", hi)) if v is not None}
        return block([helper.make_node("Clip", ["c"], ["y"], name="n4", **attrs)], [], opset, dt, conv)
    inits = [_c(v, k, np_dt) for k, v in (("lo", lo), ("hi", hi)) if v is not None]
    ins = ["c", "lo" if lo is not None else "", "hi" if hi is not None else ""]
    while ins[-1] == "":
        ins.pop()
    return block([helper.make_node("Clip", ins, ["y"], name="n4")], inits, opset, dt, conv)


def unary(op: str, **attrs: float) -> onnx.ModelProto:
    return block([helper.make_node(op, ["c"], ["y"], name=f"n_{op}", **attrs)], [], conv=False)


def one_sided(op: str, value: float, x_first: bool = True) -> onnx.ModelProto:
    ins = ["c", "k"] if x_first else ["k", "c"]
    return block([helper.make_node(op, ins, ["y"], name=f"n_{op}")], [_c(value, "k")], conv=False)


def mobilenet_like() -> onnx.ModelProto:
    """Conv-ReLU6, SE-style Relu + HardSigmoid gate, Max(x, 0) and Min(x, 6): every rule in one graph."""
    nodes = [helper.make_node("Clip", ["c", "lo", "hi"], ["r6"], name="n4"),
             helper.make_node("Relu", ["r6"], ["r"], name="n5"),
             helper.make_node("HardSigmoid", ["r"], ["g"], name="n6", alpha=1 / 6, beta=0.5),
             helper.make_node("Mul", ["r6", "g"], ["m"], name="node_Mul_7"),
             helper.make_node("Max", ["m", "zero"], ["mx"], name="n8"),
             helper.make_node("Min", ["mx", "six"], ["y"], name="n9")]
    return block(nodes, [_c(0, "lo"), _c(6, "hi"), _c(0, "zero"), _c(6, "six")])


# The models: each clip-like op fed straight from the graph input (so that generated NaN, +-inf and
# boundary values reach it), a Conv-fed ReLU6, and a MobileNet-shaped mix of all of them.
CASES = {
    "conv-clip-0-6": (lambda: clip(0.0, 6.0, conv=True)),
    "clip-0-6": (lambda: clip(0.0, 6.0)),
    "clip-omitted-min": (lambda: clip(None, 6.0)),
    "clip-omitted-max": (lambda: clip(0.0, None)),
    "clip13-min-gt-max": (lambda: clip(6.0, 0.0)),
    "clip6-0-6": (lambda: clip(0.0, 6.0, opset=6)),
    "relu": (lambda: unary("Relu")),
    "hardsigmoid": (lambda: unary("HardSigmoid", alpha=1 / 6, beta=0.5)),
    "max-x-0": (lambda: one_sided("Max", 0.0)),
    "min-x-6": (lambda: one_sided("Min", 6.0)),
    "max-0-x": (lambda: one_sided("Max", 0.0, x_first=False)),
    "f16-clip-omitted-max": (lambda: clip(0.0, None, dt=TensorProto.FLOAT16)),
    "f16-clip-omitted-min": (lambda: clip(None, 6.0, dt=TensorProto.FLOAT16)),
    "mobilenet-like": mobilenet_like,
}
