"""Hypothesis strategies for issue 34: external data in every place a tensor can live, graphs that amplify a
few hundred bytes into gigabytes, and clip-like nodes whose constants are any tensor (the strategies of
tests/hostile/strategies.py supply the tensors)."""

from __future__ import annotations

import os
from typing import Any

from hypothesis import strategies as st
from onnx import AttributeProto, TensorProto, helper

from tests.hostile.strategies import ELEM, _bound


# --- ONNX models with external data in every place a tensor can live (issue 34) -------------------------------

PLACES = ("initializer", "constant", "constant-sparse", "sparse-values", "sparse-indices", "if-initializer",
          "if-constant", "loop-body", "scan-body", "function-constant", "function-attribute-default",
          "attribute-tensors")


def external_locations(canary: str) -> list[str]:
    """Where an external tensor may point, for a canary file at the absolute path `canary` (its directory is
    the server's working directory in the tests): relative, './', a detour, '..' back in, absolute, a symlink
    next to it ('link.bin'), a system file, and empty."""
    d, base = os.path.split(canary)
    return [base, f"./{base}", f"sub/../{base}", f"../{os.path.basename(d)}/{base}", canary, "link.bin",
            "/etc/passwd", ""]


def _external(name: str, location: str, offset: str | None, length: str | None, elem: int = TensorProto.FLOAT,
              dims: tuple[int, ...] = (4,)) -> TensorProto:
    t = TensorProto()
    t.name, t.data_type = name, elem
    t.dims.extend(dims)
    t.data_location = TensorProto.EXTERNAL
    t.external_data.add(key="location", value=location)
    for key, value in (("offset", offset), ("length", length)):
        if value is not None:
            t.external_data.add(key=key, value=value)
    return t


def _sparse(values: TensorProto, indices: TensorProto) -> Any:
    from onnx import SparseTensorProto
    sp = SparseTensorProto()
    sp.values.CopyFrom(values)
    sp.indices.CopyFrom(indices)
    sp.dims.extend([4])
    return sp


def _placed(place: str, t: TensorProto) -> tuple[list, list, list, list]:
    """(nodes, initializers, sparse initializers, functions) computing y = Clip(x, w) with the external tensor
    `t` (named w, or used inside a subgraph or function) in `place`."""
    x, w = "x", t.name
    inline = helper.make_tensor("w_inline", TensorProto.FLOAT, [4], [0.0] * 4)
    clip = helper.make_node("Max", [x, w], ["y"], name="max")
    if place == "initializer":
        return [clip], [t], [], []
    if place == "constant":
        return [helper.make_node("Constant", [], [w], value=t), clip], [], [], []
    idx = helper.make_tensor("w_idx", TensorProto.INT64, [4], [0, 1, 2, 3])
    vals = helper.make_tensor(w, TensorProto.FLOAT, [4], [0.0] * 4)
    if place == "constant-sparse":
        return [helper.make_node("Constant", [], [w], sparse_value=_sparse(t, idx)), clip], [], [], []
    if place in ("sparse-values", "sparse-indices"):
        t2 = TensorProto()
        t2.CopyFrom(t)
        if place == "sparse-indices":
            t2.name, t2.data_type = "w_idx", TensorProto.INT64
        sp = _sparse(t2, idx) if place == "sparse-values" else _sparse(vals, t2)
        return [clip], [], [sp], []
    out = helper.make_tensor_value_info(w, TensorProto.FLOAT, [4])
    if place in ("if-initializer", "if-constant"):
        body = ([], [t]) if place == "if-initializer" else ([helper.make_node("Constant", [], [w], value=t)], [])
        then = helper.make_graph(body[0] + [helper.make_node("Identity", [w], ["w_then"])] if body[0] else
                                 [helper.make_node("Identity", [w], ["w_then"])], "then", [],
                                 [helper.make_tensor_value_info("w_then", TensorProto.FLOAT, [4])], body[1])
        other = helper.make_graph([helper.make_node("Constant", [], ["w_else"], value=inline)], "else", [],
                                  [helper.make_tensor_value_info("w_else", TensorProto.FLOAT, [4])])
        cond = helper.make_node("Constant", [], ["cond"], value=helper.make_tensor("c", TensorProto.BOOL, [], [1]))
        return [cond, helper.make_node("If", ["cond"], [w], then_branch=then, else_branch=other), clip], [], [], []
    if place in ("loop-body", "scan-body"):
        st_in = helper.make_tensor_value_info("s_in", TensorProto.FLOAT, [4])
        st_out = helper.make_tensor_value_info("s_out", TensorProto.FLOAT, [4])
        add = helper.make_node("Add", ["s_in", w], ["s_out"])
        if place == "loop-body":
            body = helper.make_graph([helper.make_node("Identity", ["c_in"], ["c_out"]), add], "body",
                                     [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                                      helper.make_tensor_value_info("c_in", TensorProto.BOOL, []), st_in],
                                     [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []), st_out], [t])
            n = helper.make_node("Constant", [], ["trip"], value=helper.make_tensor("t", TensorProto.INT64, [], [1]))
            return [n, helper.make_node("Loop", ["trip", "", x], [w], body=body), clip], [], [], []
        body = helper.make_graph([add, helper.make_node("Identity", ["s_out"], ["e_out"])], "body",
                                 [st_in, helper.make_tensor_value_info("e_in", TensorProto.FLOAT, [4])],
                                 [st_out, helper.make_tensor_value_info("e_out", TensorProto.FLOAT, [4])], [t])
        xs = helper.make_node("Unsqueeze", [x, "ax"], ["xs"])
        ax = helper.make_node("Constant", [], ["ax"], value=helper.make_tensor("a", TensorProto.INT64, [1], [0]))
        return [ax, xs, helper.make_node("Scan", [x, "xs"], [w, "ys"], body=body, num_scan_inputs=1), clip], \
            [], [], []
    if place == "function-constant":
        f = helper.make_function("local", "ExtConst", [], ["o"], [helper.make_node("Constant", [], ["o"], value=t)],
                                 [helper.make_opsetid("", 17)])
        return [helper.make_node("ExtConst", [], [w], domain="local"), clip], [], [], [f]
    if place == "function-attribute-default":  # issue 46: a function attribute's default value is a tensor too
        body = helper.make_node("Constant", [], ["o"])
        body.attribute.append(AttributeProto(name="value", type=AttributeProto.TENSOR, ref_attr_name="value"))
        f = helper.make_function("local", "ExtDefault", [], ["o"], [body], [helper.make_opsetid("", 17)])
        f.attribute_proto.append(helper.make_attribute("value", t))
        return [helper.make_node("ExtDefault", [], [w], domain="local"), clip], [], [], [f]
    # attribute-tensors: a TENSORS attribute of a node in a domain no engine knows (still walked)
    node = helper.make_node("Holder", [], ["unused"], domain="local.attr")
    node.attribute.append(helper.make_attribute("tensors", [t]))
    return [helper.make_node("Constant", [], [w], value=inline), node, clip], [], [], []


def external_model(place: str, location: str, offset: str | None = None, length: str | None = None) -> bytes:
    """y = Max(x, w) with one tensor's data named as an external file at `location`, in `place`."""
    nodes, inits, sparse, funcs = _placed(place, _external("w", location, offset, length))
    g = helper.make_graph(nodes, "ext", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], inits, sparse_initializer=sparse)
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("local", 1), helper.make_opsetid("local.attr", 1)]
    return helper.make_model(g, opset_imports=opsets, ir_version=8, functions=funcs).SerializeToString()


@st.composite
def external_models(draw, canary: str) -> bytes:
    """external_model in a drawn place, pointing at a drawn location near the canary, with drawn offset and
    length (absent, 0, small, huge, negative, not a number)."""
    return external_model(draw(st.sampled_from(PLACES)), draw(st.sampled_from(external_locations(canary))),
                          draw(st.sampled_from([None, "0", "4", str(2**62), "-1"])),
                          draw(st.sampled_from([None, "16", "38", str(2**63), "x"])))


# --- shape- and dtype-amplifying graphs: a few hundred bytes that ask for gigabytes -----------------------------

AMPLIFIERS = ("constant-of-shape", "expand", "tile", "cast-float64", "data-dependent")


@st.composite
def amplifying_models(draw) -> bytes:
    """amplifying_model of a drawn kind and size (2**20 to 2**31 elements)."""
    return amplifying_model(draw(st.sampled_from(AMPLIFIERS)), draw(st.integers(20, 31)))


def amplifying_model(kind: str, k: int) -> bytes:
    """x (float32, [1]) -> a tensor of 2**k elements made by ConstantOfShape, Expand, Tile, a Cast to float64,
    or a shape read from the input at run time (unknown to shape inference) -> ReduceMax -> Max(., 0): a
    clip-like node behind an amplifier, the whole model a few hundred bytes."""
    f32, i64 = TensorProto.FLOAT, TensorProto.INT64
    shape = helper.make_node("Constant", [], ["shape"], value=helper.make_tensor("s", i64, [1], [2**k]))
    zero = helper.make_node("Constant", [], ["zero"], value=helper.make_tensor("z", f32, [], [0.0]))
    if kind == "constant-of-shape":
        big = [shape, helper.make_node("ConstantOfShape", ["shape"], ["big"],
                                       value=helper.make_tensor("v", TensorProto.DOUBLE, [1], [1.0]))]
    elif kind == "expand":
        big = [shape, helper.make_node("Expand", ["x", "shape"], ["big"])]
    elif kind == "tile":
        big = [shape, helper.make_node("Tile", ["x", "shape"], ["big"])]
    elif kind == "cast-float64":
        big = [shape, helper.make_node("Expand", ["x", "shape"], ["e"]),
               helper.make_node("Cast", ["e"], ["big"], to=TensorProto.DOUBLE)]
    else:  # the count is x itself, cast to int64: known only when the engine runs
        big = [helper.make_node("Cast", ["x"], ["n"], to=i64),
               helper.make_node("ConstantOfShape", ["n"], ["big"],
                                value=helper.make_tensor("v", TensorProto.DOUBLE, [1], [1.0]))]
    tail = [helper.make_node("ReduceMax", ["big"], ["r"], keepdims=1), helper.make_node("Cast", ["r"], ["rf"], to=f32),
            zero, helper.make_node("Max", ["rf", "zero"], ["y"], name="clip_like")]
    g = helper.make_graph(big + tail, "amp", [helper.make_tensor_value_info("x", f32, [1])],
                          [helper.make_tensor_value_info("y", f32, [1])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()


# --- clip-like nodes whose constants are any tensor, in every place the patterns read one ---------------------

CLIP_LIKE = ("Clip", "Max", "Min", "HardSigmoid", "LeakyRelu", "Relu")


@st.composite
def clip_like_models(draw) -> bytes:
    """x -> one clip-like op whose constant operand (Clip's min/max, Max/Min's other operand) is a drawn tensor of
    any type, dims and data field, as an initializer or a Constant node's value; attributes of any type."""
    op = draw(st.sampled_from(CLIP_LIKE))
    nodes: list = []
    inits: list = []
    ins = ["x"]
    if op in ("Clip", "Max", "Min"):
        for side in (["lo", "hi"] if op == "Clip" else ["c"]):
            ins.append(draw(_bound(side, draw(st.one_of(ELEM, st.none())), inits, nodes)))  # None: any type
        if op != "Clip" and draw(st.booleans()):
            ins.reverse()
    node = helper.make_node(op, ins, ["y"], name="n")
    if op in ("HardSigmoid", "LeakyRelu") and draw(st.booleans()):
        value = draw(st.one_of(st.floats(width=32), st.integers(-3, 3), st.just("abc"), st.just([1.0, 2.0])))
        node.attribute.append(helper.make_attribute("alpha", value))
    g = helper.make_graph(nodes + [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], inits)
    opset = draw(st.sampled_from([6, 13, 17]))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8).SerializeToString()
