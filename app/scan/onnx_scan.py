"""Every clip in an ONNX model: Clip nodes of any opset, Min/Max pairs, in the main graph, in subgraphs
(If/Loop/Scan bodies) and in model-local functions."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from app.core.dtypes import DType
from app.dialects.onnx.dtypes import from_elem_type, onnx_name
from app.dialects.onnx.meaning import normalize, resolve
from app.dialects.onnx.model import Parsed
from app.dialects.onnx.tensor import constant_attribute, readable, tensor_values, type_name
from app.dialects.onnx.versions import schema_for_opset
from app.core.errors import ClipBridgeError
from app.core.findings import Code, Finding, Severity
from app.engines.native import infer_shapes
from app.scan.graph import Const, Graph, Node, OneSided, check_acyclic, min_max_pairs, one_sided
from app.scan.sites import (Site, attach_scale_bias, bound_value, dynamic_finding, minmax_resolved,
                            one_sided_resolved, onnx_spec)
from app.scan.wire import Light
from app.service.translate import Resolved

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


class OnnxScan:
    def __init__(self, light: Light) -> None:
        self.light = light
        self.model = light.model
        self.sites: list[Site] = []
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
                s.types[vi.name] = (vi.type.tensor_type.elem_type, _shape(vi.type.tensor_type))
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

    # --- the walk ---------------------------------------------------------------------------------------

    def run(self) -> list[Site]:
        # No ai.onnx import: a Clip there is not the standard op; each one says so instead of failing the scan.
        opset = next((int(i.version) for i in self.model.opset_import if i.domain in DEFAULT_DOMAINS), 0)
        self._graph(self.model.graph, None, "graph", opset, main=True)
        for f in self.model.functions:
            fopset = next((int(i.version) for i in f.opset_import if i.domain in DEFAULT_DOMAINS), opset)
            s = Scope(None)
            for name in f.input:
                s.computed[name] = f"{name!r} is an input of function {f.name!r}"
            for vi in f.value_info:
                if vi.type.HasField("tensor_type"):
                    s.types[vi.name] = (vi.type.tensor_type.elem_type, _shape(vi.type.tensor_type))
            self._nodes(s, f.node)
            self._scope_sites(s, f.node, f"function {f.domain + ':' if f.domain else ''}{f.name}", fopset,
                              function=f)
        return self.sites

    def _graph(self, g: onnx.GraphProto, parent: Scope | None, path: str, opset: int, main: bool) -> None:
        s = self.graph_scope(g, parent, main)
        self._record_calls(s, g.node)
        self._scope_sites(s, g.node, path, opset, container=g)
        for i, n in enumerate(g.node):
            for a in n.attribute:
                subs = [a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)
                for k, sub in enumerate(subs):
                    suffix = f"[{k}]" if a.type == onnx.AttributeProto.GRAPHS else ""
                    self._graph(sub, s, f"{path}/{n.name or n.op_type + '#' + str(i)}.{a.name}{suffix}", opset,
                                main=False)

    def _record_calls(self, s: Scope, nodes) -> None:
        for n in nodes:
            key = (n.domain, n.op_type)
            if key in self.functions:
                self.call_types.setdefault(key, []).append([s.types.get(i) for i in n.input])

    def _scope_sites(self, s: Scope, nodes, path: str, opset: int, function: onnx.FunctionProto | None = None,
                     container: onnx.GraphProto | None = None) -> None:
        g = self.view(s, nodes, path)
        check_acyclic(g)
        for node in g.nodes:
            proto = node.attrs["proto"]
            if node.op == "Clip":
                site = self._clip_site(g, s, proto, node, opset, function)
                site.ref = (proto, container)
                self.sites.append(site)
        pairs = min_max_pairs(g, "Min", "Max", tensors=True)
        for mm in pairs:
            dt, shape = self._input_type(g, s, mm.x, function, [mm.lo, mm.hi],
                                         mm.outer.outputs[0] if mm.outer.outputs else "")
            site = Site(path, mm.outer.name or f"#{mm.outer.index}", mm.pattern, (mm.inner.name, mm.outer.name),
                        mm.x, mm.outer.outputs[0] if mm.outer.outputs else "", dt, shape)
            if dt is None:
                site.error = f"cannot infer the element type of {mm.x!r}"
            else:
                try:
                    site.resolved, site.findings = minmax_resolved(mm, dt, shape)
                except ClipBridgeError as exc:
                    site.error = exc.message
            attach_scale_bias(g, site, "Mul", "Add")
            self.sites.append(site)
        taken = {n.index for mm in pairs for n in (mm.outer, mm.inner)}
        for o in one_sided(g, "Min", "Max", taken):
            self.sites.append(self._one_sided_site(g, s, o, function))

    def _one_sided_site(self, g: Graph, s: Scope, o: OneSided, function: onnx.FunctionProto | None) -> Site:
        """Max(x, a) / Min(x, b) with a constant: clamp with one bound (the dynamo exporter's clamp(min=a))."""
        out = o.node.outputs[0] if o.node.outputs else ""
        dt, shape = self._input_type(g, s, o.x, function, [o.bound], out)
        site = Site(g.path, o.node.name or f"#{o.node.index}", o.pattern, (o.node.name,), o.x, out, dt, shape)
        if dt is None:
            site.error = f"cannot infer the element type of {o.x!r}"
            return site
        try:
            site.resolved, site.findings = one_sided_resolved(o, dt, shape)
        except ClipBridgeError as exc:
            site.error = exc.message
        attach_scale_bias(g, site, "Mul", "Add")
        return site

    def _input_type(self, g: Graph, s: Scope, x: str, function: onnx.FunctionProto | None,
                    bounds: list[Const], output: str = "") -> tuple[DType | None, list | None]:
        dt, shape = g.dtype_of(x)
        if shape is None and output:
            # Clip is elementwise and Min/Max with scalar bounds broadcast to x: the output's shape is x's.
            shape = g.dtype_of(output)[1]
        if dt is None and function is not None and x in function.input:
            pos = list(function.input).index(x)
            found = {c[pos][0] for c in self.call_types.get((function.domain, function.name), [])
                     if len(c) > pos and c[pos] is not None}
            if len(found) == 1:
                try:
                    dt = from_elem_type(found.pop(), "model")
                except ClipBridgeError:
                    dt = None
        if dt is None:
            typed = {b.value.dtype for b in bounds if b.value is not None}
            if len(typed) == 1:
                try:
                    dt = from_elem_type(helper.np_dtype_to_tensor_dtype(typed.pop()), "model")
                except (ClipBridgeError, KeyError, TypeError):
                    dt = None
        return dt, shape

    def _clip_site(self, g: Graph, s: Scope, proto: onnx.NodeProto, node: Node, opset: int,
                   function: onnx.FunctionProto | None) -> Site:
        x = proto.input[0] if proto.input else ""
        site = Site(g.path, proto.name or f"#{node.index}", "", (proto.name,), x,
                    proto.output[0] if proto.output else "")
        try:
            if opset < 1:
                site.pattern = "Clip"
                raise ClipBridgeError("the model (or function) imports no ai.onnx opset, so this Clip is not "
                                      "the standard operator")
            schema = schema_for_opset(opset)
        except ClipBridgeError as exc:
            site.error = exc.message
            return site
        site.pattern = schema.name
        bounds_c = [g.const(proto.input[i]) if len(proto.input) > i and proto.input[i] else Const(None, "absent")
                    for i in (1, 2)]
        site.dtype, site.shape = self._input_type(g, s, x, function, [] if schema.attributes else bounds_c,
                                                  site.output)
        if not x:
            site.error = "the Clip node has no input"
            return site
        if site.dtype is None:
            site.error = f"cannot infer the element type of {x!r} (no value_info, and shape inference gave none)"
            site.findings.append(Finding(Code.SHAPE_UNKNOWN, Severity.ERROR, site.error))
            return site
        bounds: dict[str, int | float | None] = {"min": None, "max": None}
        dynamic: list[str] = []
        try:
            if schema.attributes:
                for a in proto.attribute:
                    if a.name in bounds:
                        if a.type != onnx.AttributeProto.FLOAT:
                            raise ClipBridgeError(f"attribute {a.name!r} must be a float")
                        bounds[a.name] = float(np.float32(a.f))
            else:
                for pos, side in ((1, "min"), (2, "max")):
                    if len(proto.input) > pos and proto.input[pos]:
                        c = bounds_c[pos - 1]
                        if c.value is None:
                            dynamic.append(side)
                            site.findings.append(dynamic_finding(side, c.why))
                        elif c.value.size != 1:
                            raise ClipBridgeError(f"the {side} input has shape {list(c.value.shape)}; Clip "
                                                  "takes a scalar")
                        else:
                            bounds[side] = bound_value(c, site.dtype, side)
            spec = onnx_spec(opset=opset, elem_type=onnx_name(site.dtype), shape=site.shape, min=bounds["min"],
                             max=bounds["max"])
            parsed = Parsed(spec, tuple(dynamic), site.node)
            site.resolved = Resolved("onnx", resolve(parsed), normalize(parsed),
                                     site.shape)
        except ClipBridgeError as exc:
            site.error = exc.message
        attach_scale_bias(g, site, "Mul", "Add")
        return site


def _shape(tt: onnx.TypeProto.Tensor) -> list | None:
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


def needs_inference(sites: list[Site]) -> bool:
    # Function sites too: inference does not type a function body, but it types the call sites' arguments
    # in the graphs, which is where a function's input type comes from (OnnxScan._input_type). A graph
    # site with a known type but no shape asks for it too: DirectML needs concrete Sizes (shape-unknown).
    return any(s.dtype is None or (s.shape is None and not s.path.startswith("function")) for s in sites)


def scan_onnx(light: Light) -> list[Site]:
    """The clip sites of a (light) model; onnx shape inference fills types when value_info lacks them."""
    return scan_onnx_model(light)[0]


def scan_onnx_model(light: Light) -> tuple[list[Site], onnx.ModelProto]:
    """scan_onnx, and the model the sites' `ref`s point into: light.model, or its shape-inferred copy."""
    sites = OnnxScan(light).run()
    if needs_inference(sites):
        inferred = infer_shapes(light.model)  # in a sandbox worker: C++ on the upload
        if inferred is None:  # inference is a best effort; the sites then say the type is unknown
            return sites, light.model
        return OnnxScan(Light(inferred, light.stubbed, light.external)).run(), inferred
    return sites, light.model
