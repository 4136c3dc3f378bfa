"""Every clip in an ONNX model: Clip nodes of any opset, Min/Max pairs, in the main graph, in subgraphs
(If/Loop/Scan bodies) and in model-local functions."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from clipbridge.core.dtypes import DType
from clipbridge.core.errors import ClipBridgeError
from clipbridge.core.findings import Code, Finding, Severity
from clipbridge.dialects.onnx.dtypes import from_elem_type, onnx_name
from clipbridge.dialects.onnx.meaning import normalize, resolve
from clipbridge.dialects.onnx.model import Parsed
from clipbridge.dialects.onnx.versions import schema_for_opset
from clipbridge.engines.native import infer_shapes
from clipbridge.scan.graph import Const, Graph, Node, OneSided, check_acyclic, min_max_pairs, one_sided
from clipbridge.scan.onnx_scope import DEFAULT_DOMAINS, OnnxScopes, Scope, tensor_shape
from clipbridge.scan.sites import (Site, attach_scale_bias, bound_value, dynamic_finding, minmax_resolved,
                            one_sided_resolved, onnx_spec)
from clipbridge.scan.wire import Light
from clipbridge.service.translate import Resolved


class OnnxScan(OnnxScopes):
    """The walk: every clip site of the model's graphs and functions."""

    def __init__(self, light: Light) -> None:
        super().__init__(light)
        self.sites: list[Site] = []

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
                    s.types[vi.name] = (vi.type.tensor_type.elem_type, tensor_shape(vi.type.tensor_type))
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
                        if c.value is None and c.unread_scalar:  # a scalar constant not read (external): unresolved
                            raise ClipBridgeError(f"the {side} bound is a constant of the model whose value was "
                                                  f"not read: {c.why}")
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
