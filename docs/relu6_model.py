"""Build docs/relu6.onnx, the float32 model the README's diff and fix examples read (python docs/relu6_model.py):
a Conv with a ReLU6 (Clip 0..6) after it, the shape MobileNet repeats 35 times."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from onnx import ModelProto, TensorProto as T, checker, helper, numpy_helper, save


def build() -> ModelProto:
    w = np.linspace(-1, 1, 2 * 1 * 3 * 3, dtype=np.float32).reshape(2, 1, 3, 3)
    nodes = [helper.make_node("Conv", ["x", "w"], ["h"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Clip", ["h", "zero", "six"], ["y"], name="relu6")]
    graph = helper.make_graph(
        nodes, "relu6",
        [helper.make_tensor_value_info("x", T.FLOAT, [1, 1, 4, 4])],
        [helper.make_tensor_value_info("y", T.FLOAT, [1, 2, 4, 4])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.array(0, np.float32), "zero"),
         numpy_helper.from_array(np.array(6, np.float32), "six")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8,
                              producer_name="clipbridge-docs")
    checker.check_model(model, full_check=True)
    return model


if __name__ == "__main__":
    save(build(), Path(__file__).with_name("relu6.onnx"))
