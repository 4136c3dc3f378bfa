"""The fix's rewrite over every graph of a model: the main graph and each If branch, Loop/Scan body nested in
it. A body reads the constants of the graphs around it (an outer initializer used as a Clip's bound), so the
constant walk carries them inward; each rule's note names the node by its full path (`gate/then_branch/relu6_then`,
as the diff and the scan do). Runs in a child with clipbridge.fix.apply.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import onnx

from clipbridge.fix.found import allows
from clipbridge.scan.constant_reader import Constants
from clipbridge.fix.rules import RULES, Edit, Site


@dataclass
class Rewritten:
    """What write_fixed reads from a rewrite: the rules applied, whether any node was inserted, the skips."""

    applied: list[dict] = field(default_factory=list)
    after: dict[str, int] = field(default_factory=dict)  # graph path -> nodes inserted there


def _name(n: onnx.NodeProto) -> str:
    return n.name or (n.output[0] if n.output else n.op_type)


def scopes(g: onnx.GraphProto, outer: dict[str, np.ndarray], path: str,
           consts_of) -> Iterator[tuple[onnx.GraphProto, dict[str, np.ndarray], str]]:
    """(graph, the constants it can read, its path) for g and every graph nested in it; a name a body defines
    itself shadows the outer constant of that name."""
    own = {i.name for i in g.input}
    consts = _scoped(outer, own, consts_of(g))
    yield g, consts, path
    for n in list(g.node):
        for a in n.attribute:
            subs = [a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)
            for k, sub in enumerate(subs):
                suffix = f"[{k}]" if a.type == onnx.AttributeProto.GRAPHS else ""
                yield from scopes(sub, consts, f"{path}{_name(n)}/{a.name}{suffix}/", consts_of)


def _scoped(outer: dict[str, np.ndarray], shadowed: set[str], inner: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The outer constants less the shadowed names, then the graph's own, keeping the reader's kind: a checked
    reader's Constants carries `bad` (the constants that could not be read, raised only when a rule uses them)."""
    merged = type(inner)() if isinstance(inner, Constants) else {}
    merged.update({k: v for k, v in outer.items() if k not in shadowed})
    merged.update(inner)
    if isinstance(merged, Constants):
        outer_bad = getattr(outer, "bad", {})
        merged.bad.update({k: e for k, e in outer_bad.items() if k not in shadowed and k not in inner})
        merged.bad.update(inner.bad)  # type: ignore[attr-defined]
    return merged


def all_types(model: onnx.ModelProto) -> dict[str, int]:
    """Element types of every tensor shape inference knows, in every graph (bodies included)."""
    inferred = onnx.shape_inference.infer_shapes(model)
    out: dict[str, int] = {}
    for g, _, _ in scopes(inferred.graph, {}, "", lambda g: {}):
        out.update({t.name: t.data_type for t in g.initializer})
        for vi in [*g.input, *g.value_info, *g.output]:
            if vi.type.HasField("tensor_type") and vi.type.tensor_type.elem_type:
                out.setdefault(vi.name, vi.type.tensor_type.elem_type)
    return out


def sites_in(g: onnx.GraphProto, consts: dict[str, np.ndarray], types: dict[str, int], opset: int, path: str,
             floats: dict[int, np.dtype], node_of) -> tuple[list[Site], list[dict]]:
    """The clip-like nodes of one graph (apply._node reads each), and the ones skipped with why."""
    sites, skipped = [], []
    for i, p in enumerate(g.node):
        if p.domain not in ("", "ai.onnx") or not p.input or p.input[0] == "":
            continue
        dt = floats.get(types.get(p.input[0], 0))
        found = node_of(p, dt or np.dtype(np.float32), consts, opset)
        if found is None:
            continue
        if dt is None:
            skipped.append({"node": path + (p.name or f"#{i}"), "op": p.op_type,
                            "reason": "its element type is not float32 or float16 (or is unknown)"})
            continue
        sites.append(Site(i, p, found[0], found[1], path=path))
    return sites, skipped


def names(model: onnx.ModelProto) -> set[str]:
    """Every name in every graph: a fresh name must not shadow or collide with one in any scope."""
    taken: set[str] = set()
    for g, _, _ in scopes(model.graph, {}, "", lambda g: {}):
        taken |= {t.name for t in g.initializer} | {v.name for v in [*g.input, *g.output, *g.value_info]}
        for n in g.node:
            taken.update(n.input)
            taken.update(n.output)
            taken.add(n.name)
    return taken


def rewrite(model: onnx.ModelProto, reference: str, target: str, opset: int, floats: dict[int, np.dtype],
            consts_of, node_of, allowed: dict[str, list[str]] | None = None) -> tuple[Rewritten, list[dict]]:
    """Apply the rules to the clip-like nodes of every graph, inserting each rule's nodes after its node (or
    before it, for a guard on its input); with
    `allowed` (clipbridge.fix.found), a rule only where the diff of the original found its cause."""
    types, taken = all_types(model), names(model)
    out, skipped = Rewritten(), []
    for g, consts, path in scopes(model.graph, {}, "", consts_of):  # lazily: a rewrite re-creates the nodes
        sites, sk = sites_in(g, consts, types, opset, path, floats, node_of)
        skipped += sk
        e = Edit(g, taken, opset)
        for s in sites:
            key = s.path + (s.proto.name or (s.proto.output[0] if s.proto.output else ""))
            for rule in RULES:
                if allows(allowed, key, rule.__name__):
                    rule(e, s, reference, target)
        if e.after or e.before:
            nodes = list(g.node)
            del g.node[:]
            for i, n in enumerate(nodes):
                g.node.extend(e.before.get(i, []))  # a guard on the node's input (rules.maxpool_nan_guard)
                g.node.append(n)
                g.node.extend(e.after.get(i, []))
            out.after[path] = sum(len(v) for v in [*e.after.values(), *e.before.values()])
        out.applied += e.applied
    return out, skipped
