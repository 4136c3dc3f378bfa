"""A generator of clip-like chains for the fix's property tests: x -> op -> op ... -> Identity -> y.

It covers what a user's exporter writes: Clip with either bound omitted or crossed, Relu, HardSigmoid, Neg (which
moves values between the bounds), and Max/Min with the constant on either side, in either order and mixed with
Clip. An op is a tuple: (kind,) or ("max"|"min", constant, constant_first)."""

from __future__ import annotations

import numpy as np
import onnx
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

Op = tuple
CLIPS = {"clip": (-1.0, 2.0), "clip-omit-min": (None, 2.0), "clip-omit-max": (-1.0, None), "clip-crossed": (2.0, -1.0)}
UNARY = {"relu": "Relu", "hardsigmoid": "HardSigmoid", "neg": "Neg"}
CONSTANTS = (-1.0, 0.5, 2.0)

OPS = st.one_of(
    st.sampled_from([(k,) for k in (*CLIPS, *UNARY)]),
    st.tuples(st.sampled_from(["max", "min"]), st.sampled_from(CONSTANTS), st.booleans()),
)
ENGINES = ["onnxruntime", "openvino", "onnx-reference"]
PAIRS = st.permutations(ENGINES).map(lambda p: tuple(p[:2]))


def fused_pair(ops: list[Op], pair: tuple[str, str]) -> bool:
    """The known gap (docs/testing.md): OpenVINO on either side and a Max next to a Min, both with the constant
    first. Each alone propagates NaN on OpenVINO, so the diff finds no clip cause at either and the fix writes no
    rule, but OpenVINO fuses the pair into a Clamp that sends NaN to a bound (fix.facts.fuses_min_max_into_clamp)."""
    def first(op: Op) -> str | None:
        return op[0] if op[0] in ("max", "min") and op[2] else None
    adjacent = any(first(a) and first(b) and first(a) != first(b) for a, b in zip(ops, ops[1:]))
    return "openvino" in pair and adjacent


def chain(ops: list[Op], opset: int = 17, shape: tuple[int, ...] = (2, 5)) -> onnx.ModelProto:
    nodes, inits, cur = [], [], "x"
    for i, op in enumerate(ops):
        out = f"t{i}"

        def const(v: float, n: str) -> str:
            inits.append(numpy_helper.from_array(np.array(v, np.float32), f"{n}{i}"))
            return f"{n}{i}"
        if op[0] in CLIPS:
            lo, hi = CLIPS[op[0]]
            ins = [cur, const(lo, "lo") if lo is not None else "", const(hi, "hi") if hi is not None else ""]
            while ins[-1] == "":
                ins.pop()
            nodes.append(helper.make_node("Clip", ins, [out], name=f"n{i}"))
        elif op[0] in ("max", "min"):
            c = const(op[1], "c")
            nodes.append(helper.make_node(op[0].capitalize(), [c, cur] if op[2] else [cur, c], [out], name=f"n{i}"))
        else:
            nodes.append(helper.make_node(UNARY[op[0]], [cur], [out], name=f"n{i}"))
        cur = out
    nodes.append(helper.make_node("Identity", [cur], ["y"], name="out"))
    g = helper.make_graph(nodes, "main_graph", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(shape))], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m
