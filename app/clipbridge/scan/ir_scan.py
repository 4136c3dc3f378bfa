"""Every clip in an OpenVINO IR: Clamp layers and Minimum/Maximum pairs, in the net and in nested bodies
(TensorIterator, Loop, If). Const values come from the .bin when one is given, by offset and size."""

from __future__ import annotations

import codecs
from collections.abc import Callable
from xml.etree.ElementTree import Element

import numpy as np

from clipbridge.core.dtypes import DType
from clipbridge.core.errors import ArtifactError, ClipBridgeError
from clipbridge.core.meaning import same_outputs
from clipbridge.dialects.openvino.dtypes import BY_ELEMENT_TYPE, FROM_PRECISION
from clipbridge.dialects.openvino.ir import clamp_layer_openvino, read_ir, share
from clipbridge.dialects.openvino.meaning import CLAMP_VERSION, normalize, resolve
from clipbridge.scan.graph import Const, Graph, Node, OneSided, check_acyclic, min_max_pairs, one_sided
from clipbridge.scan.sites import (NOTE_MINMAX_NAN_OPENVINO, NOTE_ONE_SIDED_NAN_OPENVINO, Site, attach_scale_bias,
                            minmax_resolved, one_sided_resolved)
from clipbridge.service.translate import Resolved


# Layers whose element the scan reads after the walk: Clamp whole, Const and Convert their <data> only.
READ_LATER = frozenset({"Clamp", "Const", "Convert"})


def _port_type(port: Element, memo: dict[str, str]) -> str:
    """A port's precision and dims as one shared string ("FP32|1,4"; "|?" when a dim is not a number):
    thousands of ports share a few such texts, where a tuple and a list each would cost per port."""
    dims = _dims(port)
    text = "?" if dims is None else ",".join("-" if d is None else str(d) for d in dims)
    return share(memo, f"{(port.get('precision') or '').upper()}|{text}")


def _read_port_type(text: str) -> tuple[str, list | None]:
    prec, _, dims = text.rpartition("|")
    if dims == "?":
        return prec, None
    return prec, [None if d == "-" else int(d) for d in dims.split(",")] if dims else []


def _release(layer: Element) -> None:
    """Free what the scan will not read again, once the layer is a Node: the IR scan's peak stays near the
    parse tree's (tests/hostile/test_regressions.py holds it to 8x the upload plus a fixed allowance)."""
    kind = layer.get("type")
    if any(c.find("layers") is not None for c in layer):
        return  # a body-holding layer: its bodies are walked next
    if kind not in READ_LATER:
        layer.clear()
    elif kind != "Clamp":
        for child in [c for c in layer if c.tag != "data"]:
            layer.remove(child)


def _dims(port: Element) -> list | None:
    out: list = []
    for d in port.findall("dim"):
        try:
            v = int((d.text or "").strip())
        except ValueError:
            return None
        out.append(v if v >= 0 else None)
    return out


class IrScan:
    def __init__(self, root: Element, weights) -> None:
        self.root = root
        self.weights = weights  # bytes-like or None
        self.sites: list[Site] = []

    def const_value(self, layer: Element) -> Const:
        data = layer.find("data")
        name = layer.get("name") or layer.get("id")
        if data is None:
            return Const(None, f"Const {name!r} has no <data>")
        et = data.get("element_type", "")
        dt = BY_ELEMENT_TYPE.get(et)
        if dt is None:
            return Const(None, f"Const {name!r} has element type {et[:16]!r}, which the scan does not read")
        shape_text = (data.get("shape") or "").strip()
        try:
            shape = [int(s) for s in shape_text.split(",")] if shape_text else []
            offset, size = int(data.get("offset", "")), int(data.get("size", ""))
        except ValueError:
            raise ArtifactError(f"Const {name!r} has a malformed shape, offset or size", "model") from None
        count = int(np.prod(shape, dtype=object)) if shape else 1
        if count != 1:
            return Const(np.zeros(0, dt.np_dtype), f"Const {name!r} has {count} elements, not one")
        if self.weights is None:
            return Const(None, f"Const {name!r} lives in the IR's .bin, which was not given", unread_scalar=True)
        if offset < 0 or size != dt.itemsize or offset + size > len(self.weights):
            raise ArtifactError(f"Const {name!r} points outside the .bin (offset {offset}, size {size}, "
                                f".bin has {len(self.weights)} bytes)", "weights")
        return Const(np.frombuffer(self.weights, dtype=dt.np_dtype, count=1, offset=offset).reshape(()).copy())

    def run(self) -> list[Site]:
        self._body(self.root, "net")
        return self.sites

    def _body(self, holder: Element, path: str) -> None:
        layers_el = holder.find("layers")
        if layers_el is None:
            return
        layers = {l.get("id", ""): l for l in layers_el.findall("layer")}
        source: dict[tuple[str, str], str] = {}
        edges = holder.find("edges")
        for e in (edges.findall("edge") if edges is not None else []):
            # Not interned (share says why), nor shared with the outputs' names: a memo of every port name
            # would cost more than the one string per edge it saves.
            source[(e.get("to-layer", ""), e.get("to-port", ""))] = f"{e.get('from-layer')}:{e.get('from-port')}"
        if edges is not None:
            edges.clear()  # read into `source`: the elements go (the peak stays near the parse tree's)
        port_types: dict[str, str] = {}  # port -> _port_type() text, shared between equal ports
        memo: dict[str, str] = {}
        nodes: list[Node] = []
        for i, (lid, l) in enumerate(layers.items()):
            outs = []
            for p in l.findall("output/port"):
                name = f"{lid}:{p.get('id')}"
                outs.append(name)
                port_types[name] = _port_type(p, memo)
            ins = [source.get((lid, p.get("id", "")), "") for p in l.findall("input/port")]
            nodes.append(Node(l.get("type", ""), l.get("name") or lid, ins, outs, l, i))  # attrs: the element
            _release(l)
        consts = {n.outputs[0]: n for n in nodes if n.op == "Const" and n.outputs}
        converts = {n.outputs[0]: n for n in nodes if n.op == "Convert" and n.outputs and n.inputs}

        def const(name: str, depth: int = 0) -> Const:
            n = consts.get(name)
            if n is not None:
                return self.const_value(n.attrs)
            c = converts.get(name)
            if c is not None and depth < 16:  # save_model's default compress_to_fp16: f16 Const -> Convert
                return _converted(const(c.inputs[0], depth + 1), c)
            return Const(None, f"{name} is computed at run time")

        def dtype_of(name: str) -> tuple[DType | None, list | None]:
            prec, dims = _read_port_type(port_types.get(name, "|?"))
            et = FROM_PRECISION.get(prec)
            return (BY_ELEMENT_TYPE.get(et) if et else None), dims

        g = Graph(path, nodes, const, dtype_of)
        check_acyclic(g)
        for n in nodes:
            if n.op == "Clamp":
                self.sites.append(self._clamp(g, n))
        pairs = min_max_pairs(g, "Minimum", "Maximum")
        for mm in pairs:
            dt, shape = dtype_of(mm.x)
            site = Site(path, mm.outer.name, mm.pattern, (mm.inner.name, mm.outer.name), mm.x,
                        mm.outer.outputs[0] if mm.outer.outputs else "", dt, shape)
            if dt is None:
                site.error = f"the port feeding {mm.inner.name!r} has no known precision"
            else:
                try:
                    site.resolved, site.findings = minmax_resolved(
                        mm, dt, shape, (NOTE_MINMAX_NAN_OPENVINO,) if dt.is_float else ())
                except ClipBridgeError as exc:
                    site.error = exc.message
            attach_scale_bias(g, site, "Multiply", "Add")
            self.sites.append(site)
        taken = {n.index for mm in pairs for n in (mm.outer, mm.inner)}
        for o in one_sided(g, "Minimum", "Maximum", taken):
            self.sites.append(self._one_sided(g, o, dtype_of))
        for n in nodes:
            for child in n.attrs:
                if child.find("layers") is not None:
                    self._body(child, f"{path}/{n.name}.{child.tag}")

    def _one_sided(self, g: Graph, o: OneSided, dtype_of: Callable[[str], tuple[DType | None, list | None]]) -> Site:
        """Maximum(x, a) / Minimum(x, b) against a Const: a clamp with one bound."""
        dt, shape = dtype_of(o.x)
        site = Site(g.path, o.node.name, o.pattern, (o.node.name,), o.x, o.node.outputs[0] if o.node.outputs else "",
                    dt, shape)
        if dt is None:
            site.error = f"the port feeding {o.node.name!r} has no known precision"
            return site
        try:
            site.resolved, site.findings = one_sided_resolved(
                o, dt, shape, (NOTE_ONE_SIDED_NAN_OPENVINO,) if dt.is_float else ())
        except ClipBridgeError as exc:
            site.error = exc.message
        attach_scale_bias(g, site, "Multiply", "Add")
        return site

    def _clamp(self, g: Graph, n: Node) -> Site:
        x = n.inputs[0] if n.inputs else ""
        site = Site(g.path, n.name, CLAMP_VERSION, (n.name,), x, n.outputs[0] if n.outputs else "")
        try:
            parsed = clamp_layer_openvino(n.attrs)
            site.dtype = BY_ELEMENT_TYPE[parsed.spec.element_type]
            site.shape = parsed.spec.shape
            site.resolved = Resolved("openvino", resolve(parsed), normalize(parsed), parsed.spec.shape)
        except ClipBridgeError as exc:
            site.error = exc.message
        attach_scale_bias(g, site, "Multiply", "Add")
        return site


def _converted(c: Const, n: Node) -> Const:
    """A Convert of a constant, as a constant when the conversion keeps every value (f16 -> f32, i8 -> i32);
    a lossy one (rounding, truncation, saturation) is a constant whose value the scan does not read."""
    if c.value is None:
        if c.unread_scalar:
            return Const(None, f"{c.why} (through Convert {n.name!r})", unread_scalar=True)
        return Const(None, f"{n.outputs[0]} is computed at run time")
    data = n.attrs.find("data")
    dst = BY_ELEMENT_TYPE.get(data.get("destination_type", "") if data is not None else "")
    if dst is None:
        return Const(None, f"Convert {n.name!r} has an element type the scan does not read")
    with np.errstate(all="ignore"):
        out = c.value.astype(dst.np_dtype)
        back = out.astype(c.value.dtype)
    if not bool(np.all(same_outputs(back, c.value))):
        return Const(None, f"Convert {n.name!r} to {dst.name} changes the constant's value (the scan does not "
                     "model Convert's rounding)", unread_scalar=c.value.size == 1)
    return Const(out)


def _check_utf8(xml: bytes) -> None:
    """IR XML is UTF-8 (OpenVINO writes nothing else); checked a MiB at a time, so no copy of the upload."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(xml)
    try:
        for start in range(0, len(view), 1 << 20):
            decoder.decode(view[start:start + (1 << 20)])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        raise ArtifactError("the IR XML is not UTF-8", "model") from None


def scan_ir(xml: bytes, weights) -> list[Site]:
    """The clip sites of an IR (XML parsed by defusedxml; DTDs and entities refused)."""
    _check_utf8(xml)
    root = read_ir(xml, "model")  # bytes: no str copy of the upload
    if root.get("version") not in ("10", "11"):
        raise ArtifactError(f"IR version {str(root.get('version'))[:8]!r} is not supported; expected 11 (or 10)",
                            "model")
    return IrScan(root, weights).run()
