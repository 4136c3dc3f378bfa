"""A dialect-neutral view of one graph scope, and the clip patterns found in it.

ONNX graphs and OpenVINO IR bodies are both read into `Graph`: nodes with named input and output
tensors (IR ports become "layer:port" names), a constant lookup that never guesses, and a dtype lookup.
The patterns (Min/Max pairs, Mul/Add feeding a clip) are then written once.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any
from typing import Callable

import numpy as np

from clipbridge.core.dtypes import DType
from clipbridge.core.errors import ArtifactError


@dataclass(slots=True)
class Node:
    op: str
    name: str
    inputs: list[str]
    outputs: list[str]
    attrs: Any = None  # the scanner's own handle on the node (an IR layer element, an ONNX {"proto": ...})
    index: int = 0


@dataclass(frozen=True)
class Const:
    """A tensor's value when the model fixes it; otherwise why not (`why`).

    `unread_scalar`: a scalar constant of the model whose value the scan did not read (an IR Const whose .bin
    was not given, ONNX external data): still a clip's bound, so a Min/Max pair is reported, not missed."""

    value: np.ndarray | None
    why: str = ""
    unread_scalar: bool = False
    unread: bool = False  # a constant of the model of any size whose values were not read (stub, external data)

    @property
    def known(self) -> bool:
        return self.value is not None


@dataclass
class Graph:
    path: str
    nodes: list[Node]
    const: Callable[[str], Const]
    dtype_of: Callable[[str], tuple[DType | None, list | None]]
    producers: dict[str, Node] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for k, n in enumerate(self.nodes):
            if n.index != k:
                raise ValueError(f"Node.index must be the node's position ({n.name!r}: {n.index} at {k})")
            for o in n.outputs:
                if o:
                    self.producers[o] = n


def check_acyclic(g: Graph) -> None:
    """Kahn's algorithm over the scope's own edges: a cycle is a malformed model, not a scan result."""
    indeg = [0] * len(g.nodes)  # by Node.index, its position (lists: the IR scan's peak counts per node)
    users: dict[int, list[Node]] = {}  # only nodes that have users
    for n in g.nodes:
        for i in set(n.inputs):
            p = g.producers.get(i)
            if p is not None:
                indeg[n.index] += 1
                users.setdefault(p.index, []).append(n)
    ready = deque(n for n in g.nodes if indeg[n.index] == 0)
    done = 0
    while ready:
        n = ready.popleft()
        done += 1
        for u in users.get(n.index, ()):
            indeg[u.index] -= 1
            if indeg[u.index] == 0:
                ready.append(u)
    if done != len(g.nodes):
        stuck = [n.name or f"#{n.index}" for n in g.nodes if indeg[n.index] > 0][:5]
        raise ArtifactError(f"the graph {g.path!r} is cyclic (nodes in or after a cycle: {', '.join(stuck)})",
                            "model")


def scalar(c: Const) -> bool:
    """A constant one-element real number: Min/Max/Mul/Add take numeric T only (ONNX, OpenVINO), never a bool."""
    return c.value is not None and c.value.size == 1 and c.value.dtype.kind in "iuf"


@dataclass(frozen=True)
class MinMax:
    """A clip written as two element-wise ops with constant scalar bounds."""

    outer: Node
    inner: Node
    x: str
    lo: Const
    hi: Const
    max_wins: bool  # Min(Max(x, lo), hi): lo > hi gives hi; Max(Min(x, hi), lo): gives lo
    pattern: str


def numeric(c: Const) -> bool:
    """A constant real-number tensor with at least one element (a per-element bound when it has more than one)."""
    return c.value is not None and c.value.size >= 1 and c.value.dtype.kind in "iuf"


def runtime(c: Const) -> bool:
    """A value computed at run time (a graph input, another node's output), not a constant of the model."""
    return not c.known and not c.unread_scalar and not c.unread


def _split(g: Graph, n: Node, unread_ok: bool = False, tensors: bool = False) -> tuple[str, Const] | None:
    """(the non-constant input, the constant scalar one) of a two-input node, when it has that form.
    With `unread_ok`, a scalar constant whose value was not read counts as the constant one; with `tensors`,
    a constant tensor does too (a per-element bound)."""
    if len(n.inputs) != 2:
        return None
    a, b = (g.const(i) for i in n.inputs)

    def bound(c: Const) -> bool:
        return scalar(c) or (tensors and (numeric(c) or c.unread)) or (unread_ok and c.unread_scalar)

    if bound(b) and runtime(a):
        return n.inputs[0], b
    if bound(a) and runtime(b):
        return n.inputs[1], a
    return None


def _outer(g: Graph, n: Node, want: str, tensors: bool) -> tuple[str, Const] | None:
    """With `tensors` (exporters' forms): the outer node of a pair may take a run-time bound (clamp(x, a, t) with
    a tensor input t), found from its other input being the opposite op; else the scalar-constant form only."""
    outer = _split(g, n, unread_ok=True, tensors=tensors)
    if outer is not None or not tensors or len(n.inputs) != 2:
        return outer
    for k in (0, 1):
        p = g.producers.get(n.inputs[k])
        other = g.const(n.inputs[1 - k])
        if p is not None and p.op == want and runtime(other) and n.inputs[1 - k] != n.inputs[k]:
            return n.inputs[k], other
    return None


def min_max_pairs(g: Graph, min_op: str, max_op: str, tensors: bool = False) -> list[MinMax]:
    """`Min(Max(x, a), b)` and `Max(Min(x, b), a)` where a and b are constant scalars (with `tensors`: constant
    tensors too, and an outer bound computed at run time)."""
    out = []
    for n in g.nodes:
        if n.op not in (min_op, max_op):
            continue
        want = max_op if n.op == min_op else min_op
        outer = _outer(g, n, want, tensors)
        if outer is None:
            continue
        inner_node = g.producers.get(outer[0])
        if inner_node is None or inner_node.op != want:
            continue
        inner = _split(g, inner_node, unread_ok=True, tensors=tensors)
        if inner is None:
            continue
        if runtime(outer[1]) and inner[0] in n.inputs:
            continue  # Min(Max(x, a), x): x is not a bound of itself
        if n.op == min_op:
            out.append(MinMax(n, inner_node, inner[0], inner[1], outer[1], True,
                              f"{min_op}({max_op}(x, a), b)"))
        else:
            out.append(MinMax(n, inner_node, inner[0], outer[1], inner[1], False,
                              f"{max_op}({min_op}(x, b), a)"))
    return out


@dataclass(frozen=True)
class OneSided:
    """A clip with one bound: `Max(x, a)` (clamp(min=a)) or `Min(x, b)` (clamp(max=b)), a constant a or b."""

    node: Node
    x: str
    bound: Const
    is_max: bool  # Max(x, a): a lower bound

    @property
    def pattern(self) -> str:
        return f"{self.node.op}(x, a)" if self.is_max else f"{self.node.op}(x, b)"


def one_sided(g: Graph, min_op: str, max_op: str, taken: set[int]) -> list[OneSided]:
    """Every `Max(x, a)` / `Min(x, b)` with a constant a or b (scalar or tensor) not part of a pair (`taken`:
    node indices already in one); a node of two run-time values is an ordinary max/min, not a clip."""
    out = []
    for n in g.nodes:
        if n.op not in (min_op, max_op) or n.index in taken:
            continue
        split = _split(g, n, unread_ok=True, tensors=True)
        if split is not None:
            out.append(OneSided(n, split[0], split[1], n.op == max_op))
    return out


@dataclass(frozen=True)
class ScaleBiasCandidate:
    scale: np.ndarray | None
    bias: np.ndarray | None
    nodes: tuple[str, ...]
    x: str


def scale_bias_candidate(g: Graph, x: str, mul_op: str, add_op: str) -> ScaleBiasCandidate | None:
    """`Add(Mul(x, s), b)`, `Mul(x, s)` or `Add(x, b)` with constant scalars feeding a clip's input."""
    p = g.producers.get(x)
    if p is None or p.op not in (mul_op, add_op):
        return None
    first = _split(g, p)
    if first is None:
        return None
    if p.op == mul_op:
        return ScaleBiasCandidate(first[1].value, None, (p.name,), first[0])
    q = g.producers.get(first[0])
    if q is not None and q.op == mul_op:
        second = _split(g, q)
        if second is not None:
            return ScaleBiasCandidate(second[1].value, first[1].value, (q.name, p.name), second[0])
    return ScaleBiasCandidate(None, first[1].value, (p.name,), first[0])
