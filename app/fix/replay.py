"""The diff replays a differing clip-like node alone on each engine. In a proof, engine B must replay the node
as the written model computes it: the node (with any bound a rule made explicit) and the Equal/Where guard a
NaN rule put after it. Runs in a child: it parses the written model.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

from app.diff.patterns import constants
from app.errors import ClipBridgeError


def _guard(g: onnx.GraphProto, out: str) -> list[onnx.NodeProto]:
    """The condition (Equal or IsNaN) and Where that a NaN rule wrote after the node whose output is `out`."""
    where = next((n for n in g.node if n.op_type == "Where" and "_where_clipbridge" in n.name
                  and out in n.input[1:]), None)
    if where is None:
        return []
    cond = next((n for n in g.node if n.op_type in ("Equal", "IsNaN") and n.output[0] == where.input[0]), None)
    return [cond, where] if cond is not None else []


def fixed_single(written: bytes, node: str, feeds: dict[str, np.ndarray]) -> bytes:
    """A model of `node` as the written model computes it, fed like the diff's single-node replay."""
    m = onnx.load_from_string(written)
    g = m.graph
    proto = next((n for n in g.node if (n.name or n.output[0]) == node), None)
    if proto is None:
        raise ClipBridgeError(f"the written model has no node {node!r}", "node")
    nodes = [proto, *_guard(g, proto.output[0])]
    made = {o for n in nodes for o in n.output}
    consts = constants(g)
    inits, ins = [], []
    for name in dict.fromkeys(i for n in nodes for i in n.input if i and i not in made):
        if name in feeds:
            a = feeds[name]
            ins.append(helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(a.dtype), list(a.shape)))
        elif name in consts:
            inits.append(numpy_helper.from_array(consts[name], name))
        else:
            raise ClipBridgeError(f"input {name!r} of node {node!r} was not captured", "node")
    outs = [helper.make_empty_tensor_value_info(nodes[-1].output[0])]
    single = helper.make_graph(nodes, f"fixed_{proto.op_type}", ins, outs, inits)
    return helper.make_model(single, opset_imports=list(m.opset_import), ir_version=m.ir_version,
                             producer_name="clipbridge-fix").SerializeToString()
