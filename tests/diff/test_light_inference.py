"""app/clipbridge/diff/child.py for_inference: shape inference on the model with its large initializers as typed graph
inputs gives every graph tensor the same type and shape as inference on the whole model (the oracle: onnx's own
inference on the model as given)."""

from __future__ import annotations

import random

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from clipbridge.diff import child
from tests.diff import models as M


def full(model: bytes) -> tuple[dict, dict]:
    """The types and sizes from inference on the whole model, as the plan read them before for_inference."""
    m = onnx.load_from_string(model)
    g = onnx.shape_inference.infer_shapes(m, strict_mode=False).graph
    dtypes, sizes = {}, {}
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        tt = vi.type.tensor_type
        if not tt.elem_type:
            continue
        dtypes[vi.name] = np.dtype(helper.tensor_dtype_to_np_dtype(tt.elem_type)).name
        dims = [d.dim_value if d.HasField("dim_value") else -1 for d in tt.shape.dim]
        if tt.HasField("shape") and all(d >= 0 for d in dims):
            sizes[vi.name] = int(np.prod(dims, dtype=np.float64))
    return dtypes, sizes


def weights_model(seed: int) -> bytes:
    """A seeded chain of MatMul, Add, Gather, Reshape and Clip over large and small initializers; the Reshapes'
    shape is a small initializer that inference reads by value."""
    rng = random.Random(seed)
    n = rng.choice([32, 48, 64])
    inits = [numpy_helper.from_array(np.array([-1, n], np.int64), "shape"),
             numpy_helper.from_array(np.float32(0), "lo"), numpy_helper.from_array(np.float32(6), "hi")]
    nodes, t = [], "x"
    for k in range(rng.randint(2, 5)):
        op = rng.choice(["MatMul", "Add", "Gather", "Reshape", "Clip"])
        out = f"t{k}"
        if op == "MatMul":
            inits.append(numpy_helper.from_array(np.ones((n, n), np.float32), f"w{k}"))
            nodes.append(helper.make_node("MatMul", [t, f"w{k}"], [out], name=f"mm{k}"))
        elif op == "Add":
            inits.append(numpy_helper.from_array(np.ones((n,) if rng.random() < .5 else (n, n), np.float32), f"b{k}"))
            nodes.append(helper.make_node("Add", [t, f"b{k}"], [out], name=f"add{k}"))
        elif op == "Gather":
            inits.append(numpy_helper.from_array(np.arange(n * n, dtype=np.int64).reshape(n, n) % n, f"i{k}"))
            nodes.append(helper.make_node("Gather", [t, f"i{k}"], [f"g{k}"], name=f"gather{k}", axis=0))
            nodes.append(helper.make_node("Reshape", [f"g{k}", "shape"], [out], name=f"flat{k}"))
        elif op == "Reshape":
            nodes.append(helper.make_node("Reshape", [t, "shape"], [out], name=f"rs{k}"))
        else:
            nodes.append(helper.make_node("Clip", [t, "lo", "hi"], [out], name=f"clip{k}"))
        t = out
    g = helper.make_graph(nodes, "w", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n, n])],
                          [helper.make_tensor_value_info(t, TensorProto.FLOAT, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()


def with_inits_as_inputs(model: bytes) -> bytes:
    """IR 3 style: every initializer also listed as a graph input."""
    m = onnx.load_from_string(model)
    have = {i.name for i in m.graph.input}
    m.graph.input.extend(helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
                         for t in m.graph.initializer if t.name not in have)
    return m.SerializeToString()


CASES = {
    "mobilenet_v2 (torch export, conv weights)": lambda: M.mobilenet_v2(32),
    "relu chain (no large initializer)": M.relu_chain,
    "weights also listed as inputs": lambda: with_inits_as_inputs(weights_model(3)),
    **{f"generated chain {s}": (lambda s=s: weights_model(s)) for s in range(12)},
}


@pytest.mark.parametrize("make", CASES.values(), ids=CASES.keys())
def test_light_inference_types_every_tensor_alike(make):
    model = make()
    m = onnx.load_from_string(model)
    assert child._types(m, model) == full(model)


def test_large_initializers_leave_inference():
    model = weights_model(1)
    m = onnx.load_from_string(model)
    light, weights = child.for_inference(m, model)
    big = {t.name for t in m.graph.initializer if np.prod(t.dims) >= child.BY_VALUE_MAX}
    assert weights == big and big
    assert {t.name for t in light.graph.initializer} == {t.name for t in m.graph.initializer} - big
    assert len(light.SerializeToString()) < len(model) // 4
