"""The names an ONNX model's graphs and function bodies can see: each scope's constants (initializers, Constant
nodes, followed through Identity), its types and the node producing each name, falling back to the enclosing
scope. app/clipbridge/scan/onnx_scan.py walks the scopes for clip sites."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import TensorProto, helper

from clipbridge.core.dtypes import DType
from clipbridge.core.errors import ClipBridgeError
from clipbridge.dialects.onnx.dtypes import from_elem_type
from clipbridge.dialects.onnx.tensor import constant_attribute, readable, tensor_values, type_name
from clipbridge.scan.graph import Const, Graph, Node
from clipbridge.scan.wire import Light

DEFAULT_DOMAINS = ("", "ai.onnx")
FOLLOW = ("Identity",)  # ops whose output is their input, followed when looking for a constant


@dataclass
class Scope:
    """Names visible in one graph or function body, falling back to the enclosing scope."""

    parent: "Scope | None"
    consts: dict[str, TensorProto | np.ndarray] = field(default_factory=dict)
    computed: dict[str, str] = field(default_factory=dict)  # name -> why its value is not a model constant
    types: dict[str, tuple[int, list | None]] = field(default_factory=dict)
    producers: dict[str, onnx.NodeProto] = field(default_factory=dict)


class OnnxScopes:
    """Constants, types and scopes of one (light) model: the part of the scan that reads names, not sites."""

    def __init__(self, light: Light) -> None:
        self.light = light
        self.model = light.model
        self.functions = {(f.domain, f.name): f for f in self.model.functions}
        self.call_types: dict[tuple[str, str], list[list[tuple[int, list | None] | None]]] = {}

    # --- constants and types ----------------------------------------------------------------------------

    def _tensor_value(self, t: TensorProto) -> Const:
        one = _declared_count(t) == 1  # a scalar (or [1]) constant: a bound, though unread
        if t.data_location == TensorProto.EXTERNAL or t.name in self.light.external:
            return Const(None, f"{t.name!r} is stored as external data, which is never followed", one, True)
        if not readable(t):  # a string or complex constant is not a number: never a bound, never a scale
            return Const(None, f"{t.name!r} has data type {type_name(t.data_type)}, which is not a number")
        if _is_stub(t):
            return Const(None, f"{t.name!r} is a large tensor whose values the scan does not read", one, True)
        return Const(tensor_values(t, f"tensor {t.name[:64]!r}"))

    def const(self, scope: Scope, name: str, depth: int = 0) -> Const:
        s: Scope | None = scope
        while s is not None:
            if name in s.computed:
                return Const(None, s.computed[name])
            if name in s.consts:
                v = s.consts[name]
                return self._tensor_value(v) if isinstance(v, TensorProto) else Const(v)
            p = s.producers.get(name)
            if p is not None:
                if p.op_type in FOLLOW and p.domain in DEFAULT_DOMAINS and p.input and depth < 16:
                    return self.const(s, p.input[0], depth + 1)
                return Const(None, f"{name!r} is computed by {p.op_type} node {p.name or '(unnamed)'!r}")
            s = s.parent
        return Const(None, f"{name!r} is not defined in the model")

    def dtype_of(self, scope: Scope, name: str) -> tuple[DType | None, list | None]:
        s: Scope | None = scope
        while s is not None:
            if name in s.types:
                elem, shape = s.types[name]
                try:
                    return from_elem_type(elem, "model"), shape
                except ClipBridgeError:
                    return None, shape
            s = s.parent
        return None, None

    # --- scopes -----------------------------------------------------------------------------------------

    def graph_scope(self, g: onnx.GraphProto, parent: Scope | None, main: bool) -> Scope:
        s = Scope(parent)
        inputs = {i.name for i in g.input}
        for vi in list(g.input) + list(g.output) + list(g.value_info):
            if vi.type.HasField("tensor_type"):
                s.types[vi.name] = (vi.type.tensor_type.elem_type, tensor_shape(vi.type.tensor_type))
        for init in g.initializer:
            s.types.setdefault(init.name, (init.data_type, list(init.dims)))
            if main and self.model.ir_version >= 4 and init.name in inputs:
                s.computed[init.name] = (f"{init.name!r} is an initializer that is also a graph input: the caller "
                                         "can override it at run time")
            else:
                s.consts[init.name] = init
        for sp in g.sparse_initializer:
            s.computed[sp.values.name] = f"{sp.values.name!r} is a sparse initializer (not read by the scan)"
        for name in inputs - set(s.consts) - set(s.computed):
            s.computed[name] = f"{name!r} is an input of the graph"
        self._nodes(s, g.node)
        return s

    def _nodes(self, s: Scope, nodes) -> None:
        for n in nodes:
            for o in n.output:
                if o:
                    s.producers[o] = n
            if n.op_type == "Constant" and n.domain in DEFAULT_DOMAINS and n.output:
                value = _constant_node_value(n)
                if value is not None:
                    s.consts[n.output[0]] = value
                    t = value if isinstance(value, TensorProto) else None
                    if t is not None:
                        s.types.setdefault(n.output[0], (t.data_type, list(t.dims)))
                    else:
                        s.types.setdefault(n.output[0], (helper.np_dtype_to_tensor_dtype(value.dtype),
                                                         list(value.shape)))

    def view(self, s: Scope, nodes, path: str) -> Graph:
        gnodes = [Node(n.op_type if n.domain in DEFAULT_DOMAINS else f"{n.domain}:{n.op_type}", n.name,
                       list(n.input), list(n.output), {"proto": n}, i) for i, n in enumerate(nodes)]
        return Graph(path, gnodes, lambda name: self.const(s, name), lambda name: self.dtype_of(s, name))


def tensor_shape(tt: onnx.TypeProto.Tensor) -> list | None:
    if not tt.HasField("shape"):
        return None
    # A negative dim_value is not a size (some exporters write -1 for "dynamic"): unknown, as in IR.
    return [(d.dim_value if d.dim_value >= 0 else None) if d.HasField("dim_value") else (d.dim_param or None)
            for d in tt.shape.dim]


def _declared_count(t: TensorProto) -> int:
    """The element count the dims declare; -1 when a dim is negative (tensor_values then names it)."""
    return -1 if any(d < 0 for d in t.dims) else math.prod(t.dims)


def _is_stub(t: TensorProto) -> bool:
    """A tensor the wire walk kept without its data: elements declared, none present."""
    return _declared_count(t) > 0 and not (
        t.raw_data or t.float_data or t.int32_data or t.int64_data or t.double_data or t.uint64_data
        or t.string_data)


def _constant_node_value(n: onnx.NodeProto) -> TensorProto | np.ndarray | None:
    a = constant_attribute(n)  # a wrongly typed value attribute: 400
    if a is None:
        return None
    if a.name == "value":
        return a.t
    return np.array(helper.get_attribute_value(a), dtype=np.float32 if "float" in a.name else np.int64)
