"""The diff replays a differing clip-like node alone on each engine. In a proof, engine B must replay the node
as the written model computes it: the node (with any bound a rule made explicit) and the Equal/Where guard (or
the ThresholdedRelu) a NaN rule put after it, whether alone (fixed_single) or folded into B's marked run
(fixed_with_replays, the twin of clipbridge.diff.child.with_replays). Runs in a child: it parses the written model.
AS_WRITTEN is the written side's replay policy in the proof's diff (clipbridge.diff.sides.Replays).
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from clipbridge.diff import sides, subgraphs
from clipbridge.diff.child import model_errors, replay_inputs, replay_name
from clipbridge.scan.patterns import constants
from clipbridge.core.errors import ClipBridgeError


def _guard(g: onnx.GraphProto, out: str) -> list[onnx.NodeProto]:
    """The condition (Equal or IsNaN) and Where, or the ThresholdedRelu, that a NaN rule wrote after the node
    whose output is `out`."""
    floor = next((n for n in g.node if n.op_type == "ThresholdedRelu" and "_nan_to_zero_clipbridge" in n.name
                  and list(n.input) == [out]), None)
    if floor is not None:
        return [floor]
    # The node's own guard reads `out` as the value it guards, which the rule named after the guard's output
    # (rules._guard: Y_unguarded_clipbridge). A guard on the next node may read `out` too, as the value to give
    # for NaN (nan-guard: Where(Equal(x, x), y', x)); that one belongs to the next node, not to this one.
    where = next((n for n in g.node if n.op_type == "Where" and "_where_clipbridge" in n.name
                  and out in n.input[1:] and out.startswith(f"{n.output[0]}_unguarded_clipbridge")), None)
    if where is None:
        return []
    cond = next((n for n in g.node if n.op_type in ("Equal", "IsNaN") and n.output[0] == where.input[0]), None)
    if cond is None:
        return []
    # softmax-nan-guard tests the row's sum (rules.softmax_nan_guard): its ReduceSum belongs to the guard too
    total = next((n for n in g.node if n.op_type == "ReduceSum" and "_rowsum_clipbridge" in n.name
                  and n.output[0] in cond.input), None)
    return [cond, where] if total is None else [total, cond, where]


def _as_written(g: onnx.GraphProto, node: str) -> list[onnx.NodeProto]:
    """The written node named `node` and the guard after it; the last one gives the original output name."""
    proto = next((n for n in g.node if (n.name or n.output[0]) == node), None)
    if proto is None:
        raise ClipBridgeError(f"the written model has no node {node!r}", "node")
    return [proto, *_guard(g, proto.output[0])]


def _flat(m: onnx.ModelProto) -> tuple[onnx.GraphProto, dict[str, np.ndarray]]:
    """The main graph's nodes and every If branch's and Loop/Scan body's as the diff names them (full paths,
    clipbridge.diff.subgraphs), in one graph to search, and every constant they read."""
    found, _ = subgraphs.bodies(m, {})
    found += subgraphs._all_branches(m, found)
    g = onnx.GraphProto()
    g.node.extend(m.graph.node)
    for b in found:
        g.node.extend(subgraphs.body_nodes(m, b))
    return g, subgraphs.body_constants(m, found)


def fixed_single(written: bytes, node: str, feeds: dict[str, np.ndarray]) -> bytes:
    """A model of `node` as the written model computes it (the diff's exposed twin of it, where the node is in
    a body), fed like the diff's single-node replay."""
    m = onnx.load_from_string(written)
    g, consts = _flat(m) if subgraphs.SUBGRAPH_OPS and any(n.op_type in subgraphs.SUBGRAPH_OPS
                                                           for n in m.graph.node) else (m.graph, constants(m.graph))
    nodes = _as_written(g, node)
    proto = nodes[0]
    made = {o for n in nodes for o in n.output}
    ins, inits = replay_inputs((i for n in nodes for i in n.input if i not in made), feeds, consts, node)
    outs = [helper.make_empty_tensor_value_info(nodes[-1].output[0])]
    single = helper.make_graph(nodes, f"fixed_{proto.op_type}", ins, outs, inits)
    return helper.make_model(single, opset_imports=list(m.opset_import), ir_version=m.ir_version,
                             producer_name="clipbridge-fix").SerializeToString()


def _copy(nodes: list[onnx.NodeProto], k: int, captured: set[str], consts: set[str]) -> list[onnx.NodeProto] | None:
    """The k-th replay copy of `nodes`: captured inputs and their own tensors renamed, constants shared; None
    when one of their inputs is neither (then B replays the node alone, which names the missing input)."""
    made = {o for n in nodes for o in n.output if o}
    if any(i and i not in made | captured | consts for n in nodes for i in n.input):
        return None
    out = []
    for p in nodes:
        c = onnx.NodeProto()
        c.CopyFrom(p)
        c.name = replay_name(k, p.name or p.output[0])
        del c.input[:], c.output[:]
        c.input.extend(replay_name(k, i) if i in made | captured else i for i in p.input)
        c.output.extend(replay_name(k, o) if o else o for o in p.output)
        out.append(c)
    return out


@model_errors
def fixed_with_replays(written_marked: bytes, copies: dict[str, dict[str, tuple[str, list[int]]]]) -> bytes:
    """B's twin of clipbridge.diff.child.with_replays: the written (marked) model plus, per named node, a copy of the
    node as written with its guard, fed the same replay inputs and giving the same replay output name (a guard's
    Where carries the node's original output name). Every replay input becomes a graph input, used or not, so
    that the feeds the diff passes fit."""
    m = onnx.load_from_string(written_marked)
    g = m.graph
    consts = {i.name for i in g.initializer} | {o for n in g.node if n.op_type == "Constant" for o in n.output}
    for k, (node, inputs) in enumerate(copies.items()):
        nodes = _copy(_as_written(g, node), k, set(inputs), consts)
        if nodes is not None:
            g.node.extend(nodes)
            g.output.append(helper.make_empty_tensor_value_info(nodes[-1].output[0]))
        for i, (dtype, shape) in inputs.items():
            elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
            g.input.append(helper.make_tensor_value_info(replay_name(k, i), elem, shape))
    return m.SerializeToString()


# The written side's replay policy (clipbridge.fix.proof): a node, alone or folded, as the written model computes it.
AS_WRITTEN = sides.Replays(folded=fixed_with_replays, alone=fixed_single, body=fixed_single)
