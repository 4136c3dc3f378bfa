"""Walking the graphs inside a model: If branches and Loop/Scan bodies of the main graph.

No engine lets a caller read a tensor inside a subgraph, and inlining a branch changes what an engine computes
(measured: OpenVINO's Clamp NaN row, behaviour openvino-clamp-nan-to-lower, holds inside an If's branch, and
no longer once the same Clip is inlined beside the Clip that shares its input,
openvino-merged-clip-nan-propagates). So the engines keep running the model's own If, Loop and Scan,
and each body's tensors are made readable from outside:
- an `If` whose condition is a graph input or a constant (the branch taken is known before the run) returns
  every tensor of the taken branch as an extra output (the other branch returns an empty tensor of the same
  type there, never read);
- a `Loop` or `Scan` body returns every tensor of its body as an extra scan output: the engine stacks the
  iterations on axis 0, so each captured body tensor holds every iteration.
The walk then reads the body's nodes as nodes of the main graph, named by their full path
(`gate/then_branch/relu6_then`, `loop/body/clip`), their tensors named alike. A body whose tensors cannot be
exposed (an If whose condition is computed at run time, a nested body, a tensor of unknown type) is listed in
`views` as not walked, with the reason, and the walk says so at its node instead of blaming the node.

Runs in a sandbox child (it parses the uploaded model); imported by clipbridge.diff.run, clipbridge.diff.report, clipbridge.fix.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from clipbridge.core.errors import ClipBridgeError
from clipbridge.diff.child import NodeInfo, Plan, external_inputs, model_errors, replay_inputs
from clipbridge.diff.child import _types as types_of
from clipbridge.diff import functions
from clipbridge.scan.constant_reader import read
from clipbridge.scan.patterns import clip_like, constants, find, opset_of

SUBGRAPH_OPS = ("If", "Loop", "Scan")
STACKED = "each iteration, stacked on axis 0"


@dataclass
class WalkedPlan(Plan):
    """The diff's plan with the bodies' nodes in it: body node path -> how its tensors were read."""

    bodies: dict[str, str] = field(default_factory=dict)  # body node -> its view ("the branch taken", STACKED)


def node_name(n: onnx.NodeProto) -> str:
    return n.name or (n.output[0] if n.output else n.op_type)


def _graphs(n: onnx.NodeProto) -> list[onnx.AttributeProto]:
    return [a for a in n.attribute if a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)]


def _known(m: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {**constants(m.graph), **{k: np.asarray(v) for k, v in feeds.items()}}


def _cond(n: onnx.NodeProto, known: dict[str, np.ndarray]) -> bool | None:
    """The If's condition when it is a graph input or a constant, else None (computed at run time)."""
    v = known.get(n.input[0]) if n.input else None
    return None if v is None or v.size != 1 else bool(v.reshape(-1)[0])


@dataclass
class Body:
    """One body the walk reads: its node in the main graph, the graph, its path and how its tensors map out."""

    index: int
    node: onnx.NodeProto
    graph: onnx.GraphProto
    path: str  # "gate/then_branch/"
    view: str
    names: dict[str, str] = field(default_factory=dict)  # body tensor -> the main-graph tensor that holds it


def bodies(m: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> tuple[list[Body], list[dict]]:
    """The bodies of the main graph that can be walked, and a view of every subgraph-holding node."""
    known, found, views = _known(m, feeds), [], []
    for i, n in enumerate(m.graph.node):
        if n.domain not in ("", "ai.onnx") or n.op_type not in SUBGRAPH_OPS:
            if _graphs(n):
                views.append(_view(n, False, reason=f"{n.op_type} is not an op whose body the diff reads"))
            continue
        if n.op_type == "If":
            cond = _cond(n, known)
            if cond is None:
                views.append(_view(n, False, reason="its condition is computed at run time (the branch taken is "
                                                    "not known before the run), and no engine lets a caller "
                                                    "read a tensor inside a branch"))
                continue
            branch = "then_branch" if cond else "else_branch"
            g = next(a.g for a in n.attribute if a.name == branch)
            view = f"the branch taken: {n.input[0]} is {cond}"
        else:
            branch = "body"
            g = next(a.g for a in n.attribute if a.name == "body")
            view = STACKED
        body = Body(i, n, g, f"{node_name(n)}/{branch}/", view)
        nested = [node_name(p) for p in g.node if _graphs(p)]
        views.append(_view(n, True, graph=body.path.rstrip("/"), view=view,
                           reason=f"nested bodies not walked: {', '.join(nested[:4])}" if nested else None))
        found.append(body)
    return found, views


def _view(n: onnx.NodeProto, walked: bool, **kw: Any) -> dict:
    graph = kw.pop("graph", ", ".join(f"{node_name(n)}/{a.name}" for a in _graphs(n)))
    return {"node": node_name(n), "op": n.op_type, "walked": walked, "graph": graph, "view": kw.get("view"),
            "reason": kw.get("reason")}


def _body_types(m: onnx.ModelProto) -> dict[int, dict[str, tuple[int, list | None]]]:
    """Main-graph node index -> (element type, dims) of every tensor its bodies' shape inference knows."""
    try:
        inferred = onnx.shape_inference.infer_shapes(m, strict_mode=False)
    except Exception:  # a best effort: an untyped body tensor is simply not exposed
        return {}
    out: dict[int, dict[str, tuple[int, list | None]]] = {}
    for i, n in enumerate(inferred.graph.node):
        for a in _graphs(n):
            for g in [a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs):
                for vi in [*g.input, *g.value_info, *g.output]:
                    tt = vi.type.tensor_type
                    if vi.type.HasField("tensor_type") and tt.elem_type:
                        dims = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim] \
                            if tt.HasField("shape") else None
                        out.setdefault(i, {})[vi.name] = (tt.elem_type, dims)
    return out


def _expose_if(m: onnx.ModelProto, b: Body, types: dict[str, tuple[int, list | None]]) -> None:
    """Every tensor of the taken branch as an extra If output; the other branch gives an empty tensor of the same
    type and rank there (OpenVINO's CPU plugin refuses an If output of unknown rank, measured), never read. A
    tensor of unknown rank is not exposed."""
    outs = {o.name: b.node.output[k] for k, o in enumerate(b.graph.output)}
    b.names.update(outs)
    other = next(a.g for a in b.node.attribute if a.name in ("then_branch", "else_branch") and a.g is not b.graph)
    for p in b.graph.node:
        for t in p.output:
            if not t or t in outs or t not in types or types[t][1] is None:
                continue
            elem, dims = types[t]
            # The same shape where it is static (then the If's output is static too), else empty of that rank.
            shape = dims if all(d is not None for d in dims) else [0] * len(dims)
            b.graph.output.append(helper.make_tensor_value_info(t, elem, dims))
            empty = f"clipbridge_empty/{b.path}{t}"
            dtype = helper.tensor_dtype_to_np_dtype(elem)
            other.node.append(helper.make_node("Constant", [], [empty], name=empty,
                                               value=numpy_helper.from_array(np.zeros(shape, dtype))))
            other.output.append(helper.make_tensor_value_info(empty, elem, shape))
            b.names[t] = b.path + t
            b.node.output.append(b.path + t)


def _expose_loop(m: onnx.ModelProto, b: Body, types: dict[str, tuple[int, list | None]]) -> None:
    """Every float or integer tensor of the body as an extra scan output (the engine stacks the iterations on
    axis 0), through an Identity of its own: a body output may not repeat a name, and OpenVINO refuses a Loop
    whose condition is read twice (measured), so boolean tensors are left out."""
    n_state = len(b.node.input) - 2 if b.node.op_type == "Loop" else \
        len(b.node.input) - next((a.i for a in b.node.attribute if a.name == "num_scan_inputs"), 0)
    declared = [o.name for o in b.graph.output]
    scans = declared[n_state + (1 if b.node.op_type == "Loop" else 0):]
    first_scan = len(b.node.output) - len(scans)
    b.names.update({t: b.node.output[first_scan + k] for k, t in enumerate(scans) if first_scan + k < len(b.node.output)})
    extra = 0
    for p in list(b.graph.node):
        for t in p.output:
            if not t or t not in types or types[t][0] == onnx.TensorProto.BOOL or t in b.names:
                continue
            copy = f"clipbridge_expose/{t}"
            b.graph.node.append(helper.make_node("Identity", [t], [copy], name=copy))
            b.graph.output.append(helper.make_tensor_value_info(copy, types[t][0], types[t][1]))
            b.names[t] = b.path + t
            b.node.output.append(b.path + t)
            extra += 1
    if b.node.op_type == "Scan" and extra:  # scan_output_axes/directions, when given, name every scan output
        for a in b.node.attribute:
            if a.name in ("scan_output_axes", "scan_output_directions"):
                a.ints.extend([0] * extra)


def expose_model(m: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> tuple[onnx.ModelProto, list[Body], list]:
    inlined = functions.inline(m)  # local functions first: a call's nodes are main-graph nodes from here on
    found, views = bodies(m, feeds)
    views = inlined + views
    types = _body_types(m)
    for b in found:
        (_expose_if if b.node.op_type == "If" else _expose_loop)(m, b, types.get(b.index, {}))
    return m, found, views


@model_errors
def expose(model_bytes: bytes, feeds: dict[str, np.ndarray]) -> bytes:
    """The model with its walkable bodies' tensors as extra outputs (the proof exposes the written model alike)."""
    m, _, _ = expose_model(onnx.load_from_string(model_bytes), feeds)
    return m.SerializeToString()


def body_nodes(m: onnx.ModelProto, b: Body) -> list[onnx.NodeProto]:
    """The body's nodes as main-graph nodes: full-path names, tensors renamed to what holds them outside; a
    body constant goes by its path, an outer-scope tensor by its own name, a body input (an iteration's state)
    by its path (not captured)."""
    consts = set(constants(b.graph))
    rename = {**{t: b.path + t for t in consts}, **b.names}
    rename.update({i.name: b.path + i.name for i in b.graph.input})
    out = []
    for p in b.graph.node:
        if p.op_type == "Constant":
            continue
        c = onnx.NodeProto()
        c.CopyFrom(p)
        c.name = b.path + node_name(p)
        c.input[:] = [rename.get(i, i) for i in p.input]
        c.output[:] = [rename.get(o, b.path + o) if o else o for o in p.output]
        out.append(c)
    return out


def body_constants(m: onnx.ModelProto, found: list[Body]) -> dict[str, np.ndarray]:
    """Every small constant the walk may read: the main graph's, and each body's under its path."""
    out = constants(m.graph)  # the checked reader's Constants: unreadable ones wait in `bad`, raised when used
    for b in found:
        own = constants(b.graph)
        out.update({b.path + k: v for k, v in own.items()})
        out.bad.update({b.path + k: e for k, e in own.bad.items()})
    return out


@model_errors
def replan(exposed: bytes, original: bytes, plan: Plan) -> tuple[WalkedPlan, list[dict]]:
    """The diff's plan with each walkable body's nodes in place of its If/Loop/Scan node (an If is replaced by
    its branch; a Loop or Scan stays, its body's nodes after it), and the views of every body."""
    m = onnx.load_from_string(original)
    ex = onnx.load_from_string(exposed)
    _, found, views = expose_model(m, plan.feeds)
    by_index = {b.index: b for b in found}
    consts = body_constants(m, found)
    opset = opset_of(m)
    clips, nodes, kinds = find(m), [], {}  # main-graph clip-like nodes, local functions inlined
    for i, n in enumerate(m.graph.node):
        if n.op_type == "Constant":
            continue
        b = by_index.get(i)
        for p in body_nodes(m, b) if b is not None else []:  # a body's nodes before its Loop/Scan's own row
            exposed = set(b.names.values())  # a tensor not exposed (untyped, boolean) is not captured: no mark
            nodes.append(NodeInfo(p.name, p.op_type, list(p.input), [o if o in exposed else "" for o in p.output]))
            kinds[p.name] = b.view
            c = clip_like(p, consts, opset)
            if c is not None:
                clips[p.name] = c
        if b is None or b.node.op_type != "If":
            nodes.append(NodeInfo(node_name(n), n.op_type, list(n.input), list(ex.graph.node[i].output)))
    dtypes, sizes = types_of(ex, exposed)
    walked = WalkedPlan(nodes, clips, plan.feeds, plan.given, plan.outputs,
                        set(plan.constants) | set(consts), dtypes, sizes, bodies=kinds)
    return walked, views


@model_errors
def single_node(model_bytes: bytes, node: str, feeds: dict[str, np.ndarray]) -> bytes:
    """A model of the body node `node` alone (child.single_node's twin for a node inside a body): its constants
    as initializers, the others as graph inputs typed like `feeds`."""
    m = onnx.load_from_string(model_bytes)
    _, found, _ = expose_model(m, {})  # the names are the same whichever branch is taken
    found += _all_branches(m, found)
    proto = next((p for b in found for p in body_nodes(m, b) if p.name == node), None)
    if proto is None:
        raise ClipBridgeError(f"the model has no node {node!r}", "node")
    consts = {k: v for k, v in body_constants(m, found).items() if k in proto.input}
    for t in m.graph.initializer:  # the node's own constant inputs, whatever their size (checked reader)
        if t.name in proto.input and (v := read(t, limit=None)) is not None:
            consts[t.name] = v
    stubs = external_inputs(m.graph, proto)  # weights left in their files (an OnDisk model): read by the engine
    ins, inits = replay_inputs([i for i in proto.input if i not in stubs], feeds, consts, node)
    inits += stubs.values()
    outs = [helper.make_empty_tensor_value_info(o) for o in proto.output if o]
    g = helper.make_graph([proto], f"single_{proto.op_type}", ins, outs, inits)
    return helper.make_model(g, opset_imports=list(m.opset_import), ir_version=m.ir_version,
                             producer_name="clipbridge-diff").SerializeToString()


def _all_branches(m: onnx.ModelProto, found: list[Body]) -> list[Body]:
    """Both branches of every If (single_node is called without the feeds that chose one)."""
    seen = {(b.index, b.path) for b in found}
    out = []
    for i, n in enumerate(m.graph.node):
        if n.op_type != "If":
            continue
        for a in n.attribute:
            path = f"{node_name(n)}/{a.name}/"
            if a.type == onnx.AttributeProto.GRAPH and (i, path) not in seen:
                b = Body(i, n, a.g, path, "")
                b.names.update({o.name: n.output[k] for k, o in enumerate(a.g.output) if k < len(n.output)})
                out.append(b)
    return out


def may_have_bodies(plan: Plan) -> bool:
    """From the plan alone (no parsing in the parent): a node that holds a body, or one that is no ONNX op (a
    local function's call)."""
    return any(n.op in SUBGRAPH_OPS or not onnx.defs.has(n.op) for n in plan.nodes)


def walkable(execute: Any, model: Any, plan: Plan) -> tuple[Any, Plan, list[dict]]:
    """(the models every engine's marked run gets, the plan, the views of the bodies); (None, plan, []) when the
    model holds no bodies. `model`: each side's (clipbridge.diff.sides.Models), each exposed alike; the plan is
    the first side's. Each step runs through `execute` (the sandbox on the server)."""
    if not may_have_bodies(plan):
        return None, plan, []
    exposed = model.map(execute, expose, plan.feeds)
    walked, views = execute("diff:prepare", replan, exposed.first, model.first, plan)
    return exposed, walked, views


def refused(views: list[dict], message: str = "") -> list[dict]:
    """The views once an engine refused the model with its bodies exposed: none walked, and why."""
    why = "an engine refused the model with this body's tensors exposed (the engine's words are not relayed)"
    return [{**v, "walked": False, "view": None, "reason": why} if v["walked"] else v for v in views]


def is_body_node(plan: Plan, node: str) -> bool:
    return node in getattr(plan, "bodies", {})
