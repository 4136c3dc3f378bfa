"""The part of a diffed model's graph that the inspector draws: the nodes on the paths from the graph inputs
to the outputs through every differing node, or, past a bound, each differing node's neighbourhood.

Pure Python over the plan the sandbox child already read (app/clipbridge/diff/child.Plan): nothing here touches the
uploaded bytes. The answer's size is bounded (MAX_NODES nodes, MAX_PORTS tensors a side, names cut at
MAX_NAME), so a model of any size adds at most a few hundred kilobytes to the diff response.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from clipbridge.diff.child import NodeInfo, Plan

MAX_NODES = 160  # nodes drawn; a layered layout of more is no longer readable on a screen
MAX_PORTS = 16  # inputs (and outputs) listed per node; a Concat of 300 tensors shows 16
MAX_NAME = 120  # characters of a node or tensor name
MAX_HOPS = 3  # the widest neighbourhood tried when the paths do not fit


def _cut(name: str) -> str:
    return name if len(name) <= MAX_NAME else name[: MAX_NAME - 1] + "…"


def _links(nodes: list[NodeInfo]) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Each node's producers (upstream) and consumers (downstream), by node name."""
    producer = {o: n.name for n in nodes for o in n.outputs if o}
    up: dict[str, set[str]] = {n.name: set() for n in nodes}
    down: dict[str, set[str]] = {n.name: set() for n in nodes}
    for n in nodes:
        for i in n.inputs:
            p = producer.get(i)
            if p is not None and p != n.name:
                up[n.name].add(p)
                down[p].add(n.name)
    return up, down


def _reach(start: set[str], step: dict[str, set[str]], hops: int | None = None) -> set[str]:
    """Every node reached from `start` along `step` (at most `hops` steps; None: any number)."""
    seen = set(start)
    frontier = deque((s, 0) for s in start)
    while frontier:
        name, depth = frontier.popleft()
        if hops is not None and depth >= hops:
            continue
        for nxt in step.get(name, ()):
            if nxt not in seen:
                seen.add(nxt)
                frontier.append((nxt, depth + 1))
    return seen


def _choose(differing: set[str], up: dict[str, set[str]], down: dict[str, set[str]]) -> tuple[set[str], str]:
    """The paths through the differing nodes when they fit; else the widest neighbourhood that does."""
    paths = _reach(differing, up) | _reach(differing, down)
    if len(paths) <= MAX_NODES:
        return paths, "paths"
    for hops in range(MAX_HOPS, 0, -1):
        near = _reach(differing, up, hops) | _reach(differing, down, hops)
        if len(near) <= MAX_NODES:
            return near, f"neighbourhood-{hops}"
    return set(differing), "differing"


def view(plan: Plan, body: dict[str, Any]) -> dict[str, Any] | None:
    """The drawn subset of the graph for a diff body (None when nothing differs: there is nothing to draw)."""
    differing = {row["node"] for row in body.get("nodes", [])}
    if body.get("first_divergence"):
        differing.add(body["first_divergence"]["node"])
    known = {n.name for n in plan.nodes}
    differing &= known
    if not differing:
        return None
    up, down = _links(plan.nodes)
    keep, scope = _choose(differing, up, down)
    drawn = [n for n in plan.nodes if n.name in keep]  # topological, as the plan lists them
    truncated = len(drawn) > MAX_NODES
    drawn = drawn[:MAX_NODES]
    hidden = set(plan.constants)
    used = {i for n in drawn for i in n.inputs}
    made = {o for n in drawn for o in n.outputs}
    return {
        "scope": scope,
        "total_nodes": len(plan.nodes),
        "truncated": truncated,
        "inputs": [_cut(t) for t in plan.feeds if t in used][:MAX_PORTS],
        "outputs": [_cut(t) for t in plan.outputs if t in made][:MAX_PORTS],
        "nodes": [{"name": _cut(n.name), "op": _cut(n.op),
                   "inputs": [_cut(i) for i in n.inputs if i and i not in hidden][:MAX_PORTS],
                   "outputs": [_cut(o) for o in n.outputs if o][:MAX_PORTS]} for n in drawn],
    }
