"""Models with clips inside bodies (If branches, Loop and Scan bodies) for the subgraph walk's tests.

Each is built here, never downloaded: a Clip after a MatMul inside a branch (the shape of docs/example.onnx),
the same If with its condition computed at run time (no view), a Loop whose body clips each iteration, and a
Scan whose body clips each slice."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T, helper, numpy_helper

F32 = T.FLOAT
N = 16


def _c(name: str, v, dt=np.float32) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(v, dt), name)


def _model(nodes, inputs, outputs, inits, opset: int = 17) -> bytes:
    g = helper.make_graph(nodes, "subgraphs", inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)
    onnx.checker.check_model(m, full_check=True)
    return m.SerializeToString()


def _branches() -> tuple[onnx.GraphProto, onnx.GraphProto]:
    then_g = helper.make_graph([helper.make_node("Mul", ["h", "two"], ["h2"], name="double"),
                                helper.make_node("Clip", ["h2", "zero", "six"], ["t"], name="relu6_then")],
                               "then", [], [helper.make_tensor_value_info("t", F32, [1, N])])
    else_g = helper.make_graph([helper.make_node("Identity", ["h"], ["e"], name="pass_else")], "else", [],
                               [helper.make_tensor_value_info("e", F32, [1, N])])
    return then_g, else_g


def if_clip(computed_cond: bool = False) -> bytes:
    """MatMul -> If(flag){Mul, Clip(0, 6)} else {Identity}; `flag` a graph input, or computed (k > 0, k an input
    of its own, so that the NaN in x does not reach the condition)."""
    then_g, else_g = _branches()
    nodes = [helper.make_node("MatMul", ["x", "W"], ["h"], name="fc")]
    ins = [helper.make_tensor_value_info("x", F32, [1, N])]
    inits = [_c("W", np.eye(N)), _c("zero", 0.0), _c("six", 6.0), _c("two", 2.0)]
    if computed_cond:
        nodes.append(helper.make_node("Greater", ["k", "zero"], ["flag"], name="decide"))
        ins.append(helper.make_tensor_value_info("k", F32, []))
    else:
        ins.append(helper.make_tensor_value_info("flag", T.BOOL, []))
    nodes.append(helper.make_node("If", ["flag"], ["branch"], name="gate", then_branch=then_g, else_branch=else_g))
    return _model(nodes, ins, [helper.make_tensor_value_info("branch", F32, [1, N])], inits)


def loop_clip(trips: int = 3) -> bytes:
    """Loop of `trips` iterations: state s -> Clip(s * 2, 0, 6) (loop-carried), scan output the clipped value."""
    body = helper.make_graph(
        [helper.make_node("Mul", ["s_in", "two"], ["s2"], name="double"),
         helper.make_node("Clip", ["s2", "zero", "six"], ["s_out"], name="relu6_body"),
         helper.make_node("Identity", ["cond_in"], ["cond_out"], name="keep_going"),
         helper.make_node("Identity", ["s_out"], ["scan"], name="emit")],
        "body", [helper.make_tensor_value_info("i", T.INT64, []), helper.make_tensor_value_info("cond_in", T.BOOL, []),
                 helper.make_tensor_value_info("s_in", F32, [1, N])],
        [helper.make_tensor_value_info("cond_out", T.BOOL, []), helper.make_tensor_value_info("s_out", F32, [1, N]),
         helper.make_tensor_value_info("scan", F32, [1, N])])
    nodes = [helper.make_node("MatMul", ["x", "W"], ["h"], name="fc"),
             helper.make_node("Loop", ["trips", "yes", "h"], ["final", "stacked"], name="repeat", body=body)]
    inits = [_c("W", np.eye(N)), _c("zero", 0.0), _c("six", 6.0), _c("two", 2.0), _c("trips", trips, np.int64),
             _c("yes", True, np.bool_)]
    return _model(nodes, [helper.make_tensor_value_info("x", F32, [1, N])],
                  [helper.make_tensor_value_info("final", F32, [1, N]),
                   helper.make_tensor_value_info("stacked", F32, [trips, 1, N])], inits)


def scan_clip() -> bytes:
    """Scan over the rows of x: each row Clip(row * 2, 0, 6), a running sum as state."""
    body = helper.make_graph(
        [helper.make_node("Mul", ["row", "two"], ["r2"], name="double"),
         helper.make_node("Clip", ["r2", "zero", "six"], ["rc"], name="relu6_row"),
         helper.make_node("Add", ["acc_in", "rc"], ["acc_out"], name="accumulate")],
        "scan_body", [helper.make_tensor_value_info("acc_in", F32, [N]), helper.make_tensor_value_info("row", F32, [N])],
        [helper.make_tensor_value_info("acc_out", F32, [N]), helper.make_tensor_value_info("rc", F32, [N])])
    nodes = [helper.make_node("MatMul", ["x", "W"], ["h"], name="fc"),
             helper.make_node("Scan", ["acc0", "h"], ["acc", "rows"], name="rows", body=body, num_scan_inputs=1)]
    inits = [_c("W", np.eye(N)), _c("zero", 0.0), _c("six", 6.0), _c("two", 2.0), _c("acc0", np.zeros(N))]
    return _model(nodes, [helper.make_tensor_value_info("x", F32, [4, N])],
                  [helper.make_tensor_value_info("acc", F32, [N]), helper.make_tensor_value_info("rows", F32, [4, N])],
                  inits)


def function_clip() -> bytes:
    """Abs -> a call of the model-local function local.OpenRelu (Clip(a, 0) with max omitted): +inf stays +inf
    through Abs (a MatMul would turn it into NaN)."""
    f = helper.make_function("local", "OpenRelu", ["a"], ["b"], [
        helper.make_node("Constant", [], ["z"], value=_c("z", 0.0)),
        helper.make_node("Clip", ["a", "z"], ["b"], name="clip_in_fn")], [helper.make_opsetid("", 17)])
    g = helper.make_graph([helper.make_node("Abs", ["x"], ["h"], name="magnitude"),
                           helper.make_node("OpenRelu", ["h"], ["y"], name="act", domain="local")], "g",
                          [helper.make_tensor_value_info("x", F32, [1, N])],
                          [helper.make_tensor_value_info("y", F32, [1, N])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("local", 1)],
                          functions=[f], ir_version=8)
    onnx.checker.check_model(m, full_check=True)
    return m.SerializeToString()
