"""Build docs/example.onnx, the model the README's scan example reads (python docs/example_model.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from onnx import TensorProto as T, checker, helper, numpy_helper, save


def c(name: str, v, dt=np.float16):
    return numpy_helper.from_array(np.array(v, dt), name)


def build() -> "onnx.ModelProto":  # noqa: F821
    then_g = helper.make_graph([helper.make_node("Clip", ["h", "zero", "six"], ["t"], name="relu6_then")], "then",
                               [], [helper.make_tensor_value_info("t", T.FLOAT16, [1, 64])])
    else_g = helper.make_graph([helper.make_node("Identity", ["h"], ["e"], name="pass_else")], "else", [],
                               [helper.make_tensor_value_info("e", T.FLOAT16, [1, 64])])
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["h"], name="fc"),
        helper.make_node("Clip", ["h", "zero"], ["relu_open"], name="clip_no_max"),
        helper.make_node("Max", ["h", "zero"], ["m"], name="relu6_max"),
        helper.make_node("Min", ["m", "six"], ["relu6"], name="relu6_min"),
        helper.make_node("Mul", ["h", "scale"], ["hs"], name="scale"),
        helper.make_node("Add", ["hs", "bias"], ["hb"], name="shift"),
        helper.make_node("Clip", ["hb", "zero", "six"], ["sb_clip"], name="clip_after_scale_bias"),
        helper.make_node("Clip", ["h", "zero", "limit"], ["dyn"], name="clip_dynamic_max"),
        helper.make_node("If", ["flag"], ["branch"], name="gate", then_branch=then_g, else_branch=else_g),
    ]
    outs = ["relu_open", "relu6", "sb_clip", "dyn", "branch"]
    graph = helper.make_graph(
        nodes, "example",
        [helper.make_tensor_value_info("x", T.FLOAT16, [1, 64]), helper.make_tensor_value_info("flag", T.BOOL, []),
         helper.make_tensor_value_info("limit", T.FLOAT16, [])],
        [helper.make_tensor_value_info(o, T.FLOAT16, [1, 64]) for o in outs],
        [numpy_helper.from_array(np.eye(64, dtype=np.float16), "W"), c("zero", 0), c("six", 6), c("scale", 0.5),
         c("bias", 1)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)], ir_version=6,
                              producer_name="clipbridge-docs")
    checker.check_model(model, full_check=True)
    return model


if __name__ == "__main__":
    save(build(), Path(__file__).with_name("example.onnx"))
