"""The graph being rewritten and the node a rule rewrites (the rules: clipbridge.fix.rules and
clipbridge.fix.op_guards)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import numpy_helper

from clipbridge.fix.facts import Node


@dataclass
class Site:
    """One clip-like node of the main graph, with what the rules read and change."""

    index: int
    proto: onnx.NodeProto
    x: str  # the data input
    node: Node
    done: bool = False  # a NaN rule has rewritten it
    path: str = ""  # the graph's path: "" for the main graph, "gate/then_branch/" inside an If's branch

    @property
    def name(self) -> str:
        return self.proto.name or f"#{self.index}"


@dataclass
class Edit:
    """The graph being rewritten: fresh names, new initializers and the nodes to insert after each site."""

    graph: onnx.GraphProto
    taken: set[str]
    opset: int
    after: dict[int, list[onnx.NodeProto]] = field(default_factory=dict)
    before: dict[int, list[onnx.NodeProto]] = field(default_factory=dict)
    applied: list[dict] = field(default_factory=list)

    def fresh(self, base: str) -> str:
        name, k = base, 1
        while name in self.taken:
            k += 1
            name = f"{base}_{k}"
        self.taken.add(name)
        return name

    def constant(self, value: float | np.ndarray, dtype: np.dtype, base: str) -> str:
        name = self.fresh(base)
        self.graph.initializer.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def note(self, s: Site, rule: str, why: str, **extra: object) -> None:
        self.applied.append({"node": s.path + s.name, "op": s.proto.op_type, "rule": rule, "why": why, **extra})
