"""A structure-aware ONNX mutator aimed at the native code behind /v1/models/* (onnx's version converter,
checker and shape inference): models that parse and scan, so that most rewrite calls reach the converter.

What varies, per the audit of issue 23: the number of inputs per node (the crash was a one-input Mul before
opset 7), default-domain opsets 1-5 as often as newer ones, model-local functions whose opsets differ from
the model's, sparse initializers, unknown ops and domains, graph and function attributes of every type, and
every TensorProto field (through strategies.tensors). Some models then get a byte-level mutation.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from onnx import AttributeProto, TensorProto, helper

from tests.hostile.strategies import mutated, tensors

OPS = ["Clip", "Clip", "Clip", "Mul", "Add", "Sub", "Max", "Min", "Sum", "Relu", "Identity", "Cast", "Concat",
       "Reshape", "BatchNormalization", "Upsample", "Dropout", "Gemm", "Pad", "Squeeze", "Split", "Softmax",
       "Constant", "If", "Loop", "Scan", "Resize", "ReduceMean", "NotAnOnnxOp"]
ELEMS = [TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.INT64, TensorProto.INT8,
         TensorProto.BFLOAT16, TensorProto.UINT8]
OPSETS = st.one_of(st.integers(1, 5), st.integers(6, 10), st.integers(11, 21))
# rewrite targets: version- and feature-level ones (the directml:5_0 among them)
TARGETS = ["directml:5_0", "directml", "openvino:opset13", "onnx:13", "webnn", "tensorrt:10", "coreml:iOS17",
           "tflite:2.18", "stablehlo:1", "tosa:1.0"]
REWRITE_OPSETS = [None, 11, 12, 13, 17, 18, 21]


@st.composite
def _attribute(draw, name: str, depth: int, names: list[str]) -> AttributeProto:
    """One attribute of any type, GRAPH and GRAPHS included (subgraphs nest up to depth 2)."""
    kinds = ["float", "int", "string", "floats", "ints", "tensor", "sparse"] + (["graph", "graphs"] if depth < 2
                                                                               else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "float":
        value: Any = draw(st.floats(width=32))
    elif kind == "int":
        value = draw(st.integers(-(2**63), 2**63 - 1))
    elif kind == "string":
        value = draw(st.binary(max_size=8))
    elif kind == "floats":
        value = draw(st.lists(st.floats(width=32), max_size=3))
    elif kind == "ints":
        value = draw(st.lists(st.integers(-4, 2**40), max_size=3))
    elif kind == "tensor":
        value = draw(tensors(f"{name}_t"))
    elif kind == "sparse":
        value = draw(_sparse(f"{name}_s"))
    elif kind == "graph":
        value = draw(_graph(depth + 1, names, f"{name}_g"))
    else:
        value = [draw(_graph(depth + 1, names, f"{name}_g{i}")) for i in range(draw(st.integers(0, 2)))]
    try:
        return helper.make_attribute(name, value)
    except (ValueError, TypeError):  # an empty list has no type: say INTS
        return helper.make_attribute(name, [], attr_type=AttributeProto.INTS)


@st.composite
def _sparse(draw, name: str) -> Any:
    values = draw(tensors(f"{name}_v", TensorProto.FLOAT))
    indices = draw(tensors(f"{name}_i", TensorProto.INT64))
    return helper.make_sparse_tensor(values, indices, draw(st.lists(st.integers(0, 4), max_size=2)))


@st.composite
def _node(draw, i: int, depth: int, names: list[str], inits: list, prefix: str) -> Any:
    op = draw(st.sampled_from(OPS))
    count = draw(st.sampled_from([0, 1, 1, 2, 2, 3, 4]))  # one input to a binary op: the converter's crash
    inputs = []
    for _ in range(count):
        pick = draw(st.sampled_from(["name", "name", "init", "empty", "missing"]))
        if pick == "init":
            w = f"{prefix}w{i}_{len(inputs)}"
            inits.append(draw(tensors(w, draw(st.sampled_from(ELEMS)))))
            inputs.append(w)
        else:
            inputs.append({"name": draw(st.sampled_from(names)), "empty": "", "missing": "nowhere"}[pick])
    attrs = []
    if op == "Clip" and draw(st.booleans()):  # Clip-1/6's bounds, sometimes of the wrong type
        attrs += [helper.make_attribute(k, draw(st.floats(-10, 10, width=32))) for k in ("min", "max")
                  if draw(st.booleans())]
    for a in range(draw(st.integers(0, 2))):
        name = draw(st.sampled_from(["then_branch", "else_branch", "body", "to", "axis", "value", "mode",
                                     "min", "max", f"attr{a}"]))
        attrs.append(draw(_attribute(name, depth, names)))
    node = helper.make_node(op, inputs, [f"{prefix}n{i}"], name=f"{prefix}node{i}",
                            domain=draw(st.sampled_from(["", "", "", "ai.onnx", "local", "com.unknown"])))
    node.attribute.extend(attrs)
    return node


@st.composite
def _graph(draw, depth: int, outer: list[str], name: str) -> Any:
    elem = draw(st.sampled_from(ELEMS))
    names = list(outer) + [f"{name}_x"]
    inits: list = []
    nodes = []
    for i in range(draw(st.integers(1, 5 if depth == 0 else 2))):
        nodes.append(draw(_node(i, depth, names, inits, f"{name}_")))
        names.append(nodes[-1].output[0])
    shape = draw(st.sampled_from([[2], [], [1, 2], ["n"]]))
    inputs = [helper.make_tensor_value_info(f"{name}_x", elem, shape)] if depth == 0 or draw(st.booleans()) else []
    outputs = [helper.make_tensor_value_info(names[-1], elem, shape)]
    sparse = [draw(_sparse(f"{name}_sp{i}")) for i in range(draw(st.sampled_from([0, 0, 1, 2])))]
    return helper.make_graph(nodes, name, inputs, outputs, inits, sparse_initializer=sparse)


@st.composite
def _function(draw, model_opset: int) -> Any:
    """A model-local function whose default-domain opset may differ from the model's."""
    opset = draw(st.one_of(st.just(model_opset), OPSETS))
    inits: list = []
    nodes = [draw(_node(i, 1, ["fx"], inits, "f_")) for i in range(draw(st.integers(1, 3)))]
    nodes = [helper.make_node("Constant", [], [t.name], value=t) for t in inits] + nodes
    attrs = draw(st.lists(st.sampled_from(["alpha", "min", "max"]), max_size=2, unique=True))
    return helper.make_function("local", "fn", ["fx"], [nodes[-1].output[0]], nodes,
                                [helper.make_opsetid("", opset)], attributes=attrs)


@st.composite
def converter_models(draw) -> bytes:
    """A serialized ModelProto meant to reach onnx.version_converter (and the checker, shape inference)."""
    opset = draw(OPSETS)
    g = draw(_graph(0, [], "g"))
    functions = []
    if draw(st.integers(0, 3)) == 0:
        functions.append(draw(_function(opset)))
        call = helper.make_node("fn", [g.input[0].name], ["fn_out"], domain="local", name="call")
        g.node.insert(0, call)
    opsets = [helper.make_opsetid("", opset)]
    if functions or draw(st.integers(0, 4)) == 0:
        opsets.append(helper.make_opsetid(draw(st.sampled_from(["local", "com.unknown", "ai.onnx.ml"])),
                                          draw(st.integers(1, 3))))
    if draw(st.integers(0, 9)) == 0:  # a second, different default-domain opset
        opsets.append(helper.make_opsetid("", draw(OPSETS)))
    model = helper.make_model(g, opset_imports=opsets, functions=functions, producer_name="")
    model.ir_version = draw(st.sampled_from([1, 2, 3, 3, 4, 5, 6, 7, 8, 9, 10]))
    data = model.SerializeToString()
    return draw(mutated(data)) if draw(st.integers(0, 4)) == 0 else data


def rewrite_params(draw_target: str, opset: int | None) -> dict[str, Any]:
    return {"target": draw_target} | ({"opset": opset} if opset is not None else {})
