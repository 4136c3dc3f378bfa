"""OpenVINO IR v11 XML, the dialect's artifact: written for a Clamp-1 (with ScaleBias layers before it) and read
back, the Clamp layer of a user's IR in the compact form.

IR from users is parsed with defusedxml: entity expansion and external entities are refused, and depth and
element count are bounded as the document is read."""

from __future__ import annotations

import io
import math
import struct
from dataclasses import dataclass
from xml.etree.ElementTree import Element

import defusedxml.ElementTree as SafeET
from defusedxml import DefusedXmlException
from pydantic import ValidationError

from clipbridge.core.errors import ArtifactError, SpecError
from clipbridge.core.meaning import ScaleBias
from clipbridge.core.numbers import Number, parse_number, to_double
from clipbridge.dialects.openvino.dtypes import FROM_PRECISION, PRECISION
from clipbridge.dialects.openvino.spec import OpenVinoSpec


@dataclass(frozen=True)
class Parsed:
    """A spec in the compact form: given so, or read from the Clamp layer of its IR (that layer's name)."""

    spec: OpenVinoSpec
    layer_name: str = ""


def parse(spec: OpenVinoSpec) -> Parsed:
    """The spec in the compact form (an IR's Clamp layer read)."""
    if spec.ir_xml is None:
        return Parsed(spec)
    return parse_ir(spec.ir_xml, spec.layer)


def ir_double(value: Number) -> str:
    """A double as IR writes it: %.17g (round-trips), 'inf'/'-inf' for infinities."""
    d = to_double(value)
    if math.isinf(d):
        return "inf" if d > 0 else "-inf"
    if math.isnan(d):
        return "nan"
    return "%.17g" % d


def _dims_xml(shape: list, indent: str) -> str:
    return "".join(f"{indent}<dim>{d if isinstance(d, int) else -1}</dim>\n" for d in shape)


def build_ir(spec: OpenVinoSpec, scale_bias: ScaleBias | None = None) -> tuple[str, bytes]:
    """IR v11 XML for Parameter -> [Convert/Multiply/Add/Convert] -> Clamp -> Result, and its weights."""
    assert spec.element_type is not None
    et = spec.element_type
    prec = PRECISION[et]
    shape = spec.shape if spec.shape is not None else [None]
    shape_attr = ",".join(str(d) if isinstance(d, int) else "?" for d in shape)
    layers: list[str] = []
    edges: list[tuple[int, int, int, int]] = []
    weights = b""

    dims = _dims_xml(shape, chr(9) * 5)  # every port has the input's shape: written once

    def port(pid: int, p: str, names: str = "") -> str:
        n = f' names="{names}"' if names else ""
        return f'\t\t\t\t<port id="{pid}" precision="{p}"{n}>\n{dims}\t\t\t\t</port>\n'

    layers.append(f'\t\t<layer id="0" name="input" type="Parameter" version="opset1">\n'
                  f'\t\t\t<data shape="{shape_attr}" element_type="{et}" />\n'
                  f'\t\t\t<output>\n{port(0, prec, "input")}\t\t\t</output>\n\t\t</layer>\n')
    prev, prev_port, nid = 0, 0, 1
    if scale_bias is not None:
        weights = struct.pack("<ff", scale_bias.scale, scale_bias.bias)
        if et != "f32":
            layers.append(f'\t\t<layer id="{nid}" name="scale_bias_to_f32" type="Convert" version="opset1">\n'
                          f'\t\t\t<data destination_type="f32" />\n\t\t\t<input>\n{port(0, prec)}\t\t\t</input>\n'
                          f'\t\t\t<output>\n{port(1, "FP32")}\t\t\t</output>\n\t\t</layer>\n')
            edges.append((prev, prev_port, nid, 0))
            prev, prev_port, nid = nid, 1, nid + 1
        for op, offset in (("Multiply", 0), ("Add", 4)):
            const_id, op_id = nid, nid + 1
            layers.append(f'\t\t<layer id="{const_id}" name="{op.lower()}_const" type="Const" version="opset1">\n'
                          f'\t\t\t<data element_type="f32" shape="" offset="{offset}" size="4" />\n'
                          f'\t\t\t<output>\n\t\t\t\t<port id="0" precision="FP32" />\n\t\t\t</output>\n'
                          f'\t\t</layer>\n')
            layers.append(f'\t\t<layer id="{op_id}" name="scale_bias_{op.lower()}" type="{op}" version="opset1">\n'
                          f'\t\t\t<data auto_broadcast="numpy" />\n\t\t\t<input>\n{port(0, "FP32")}'
                          f'\t\t\t\t<port id="1" precision="FP32" />\n\t\t\t</input>\n'
                          f'\t\t\t<output>\n{port(2, "FP32")}\t\t\t</output>\n\t\t</layer>\n')
            edges += [(prev, prev_port, op_id, 0), (const_id, 0, op_id, 1)]
            prev, prev_port, nid = op_id, 2, nid + 2
        if et != "f32":
            layers.append(f'\t\t<layer id="{nid}" name="scale_bias_to_{et}" type="Convert" version="opset1">\n'
                          f'\t\t\t<data destination_type="{et}" />\n\t\t\t<input>\n{port(0, "FP32")}'
                          f'\t\t\t</input>\n\t\t\t<output>\n{port(1, prec)}\t\t\t</output>\n\t\t</layer>\n')
            edges.append((prev, prev_port, nid, 0))
            prev, prev_port, nid = nid, 1, nid + 1
    clamp = nid
    layers.append(f'\t\t<layer id="{clamp}" name="clamp" type="Clamp" version="opset1">\n'
                  f'\t\t\t<data min="{ir_double(spec.min)}" max="{ir_double(spec.max)}" />\n'
                  f'\t\t\t<input>\n{port(0, prec)}\t\t\t</input>\n'
                  f'\t\t\t<output>\n{port(1, prec, "output")}\t\t\t</output>\n\t\t</layer>\n')
    edges.append((prev, prev_port, clamp, 0))
    layers.append(f'\t\t<layer id="{clamp + 1}" name="output" type="Result" version="opset1">\n'
                  f'\t\t\t<input>\n{port(0, prec)}\t\t\t</input>\n\t\t</layer>\n')
    edges.append((clamp, 1, clamp + 1, 0))
    edge_xml = "".join(f'\t\t<edge from-layer="{a}" from-port="{b}" to-layer="{c}" to-port="{d}" />\n'
                       for a, b, c, d in edges)
    xml = (f'<?xml version="1.0"?>\n<net name="clipbridge" version="11">\n\t<layers>\n{"".join(layers)}'
           f'\t</layers>\n\t<edges>\n{edge_xml}\t</edges>\n</net>\n')
    return xml, weights


# --- reading an IR ----------------------------------------------------------------------------------------------

MAX_IR_DEPTH = 128  # elements deep; a real IR nests net/layers/layer/body a few times (~20 deep)
IR_BYTES_PER_ELEMENT = 12  # an IR may hold one element per 12 bytes of XML on average (real ones: ~30)
IR_ELEMENTS_FREE = 4096  # ... plus this many, so that tiny IRs are never refused for density
SHARED_VALUE_CHARS = 16  # attribute values and texts up to this long are shared
SHARED_VALUES_MAX = 4096  # distinct values one parse remembers for sharing; then it starts again
# Runtime annotations no reader here looks at (often a third of a real IR's elements): dropped as parsed.
UNREAD_ELEMENTS = frozenset({"rt_info", "meta_data", "quantization_parameters"})


def share(memo: dict[str, str], value: str) -> str:
    """The one string of this parse equal to `value`. A memo of the parse, never sys.intern: the process-wide
    intern table only grows, and its resize (up to 8 MB at 130 000 entries) lands in whichever scan crosses the
    threshold, so a scan's peak depended on what the process had interned before. Bounded: past
    SHARED_VALUES_MAX distinct values (unique ids and names) the memo starts again; the few repeated values
    come back at their next use."""
    got = memo.get(value)
    if got is not None:
        return got
    if len(memo) >= SHARED_VALUES_MAX:
        memo.clear()
    memo[value] = value
    return value


def _compact(el: Element, memo: dict[str, str]) -> None:
    """Share repeated attribute values ("FP32", "opset1", "0", a dim): the parser makes a new string for each,
    and an IR repeats a few values thousands of times (part of keeping the scan's peak near 8x the upload)."""
    for key, value in el.items():
        if len(value) <= SHARED_VALUE_CHARS:
            el.set(key, share(memo, value))


def _compact_text(el: Element, memo: dict[str, str]) -> None:
    """Indentation (text and tail of whitespace only) is dropped and short texts (<dim>) shared, once the
    element is complete; nothing reads whitespace, and a pretty-printed IR has two such strings per element."""
    if el.text is not None:
        if not el.text.strip():
            el.text = None
        elif len(el.text) <= SHARED_VALUE_CHARS:
            el.text = share(memo, el.text)
    for child in el:  # a child's tail is only complete once its parent ends
        if child.tail is not None and not child.tail.strip():
            child.tail = None
    for child in [c for c in el if c.tag in UNREAD_ELEMENTS]:
        el.remove(child)


def read_ir(xml: str | bytes, loc: str = "ir_xml") -> Element:
    """The IR's root element, parsed by defusedxml (DTDs and entities refused) incrementally: the depth and the
    element count are checked as elements open, before a deep or dense document is built or recursed into."""
    data = xml.encode("utf-8") if isinstance(xml, str) else xml
    limit = IR_ELEMENTS_FREE + len(data) // IR_BYTES_PER_ELEMENT
    depth = count = 0
    root: Element | None = None
    memo: dict[str, str] = {}
    try:
        for event, el in SafeET.iterparse(io.BytesIO(data), events=("start", "end"), forbid_dtd=True):
            if event == "end":
                depth -= 1
                _compact_text(el, memo)
                continue
            root = el if root is None else root
            depth += 1
            count += 1
            _compact(el, memo)
            if depth > MAX_IR_DEPTH:
                raise ArtifactError(f"IR XML nests deeper than {MAX_IR_DEPTH} elements", loc)
            if count > limit:
                raise ArtifactError(f"IR XML has more than {limit} elements for {len(data)} bytes (at most one "
                                    f"per {IR_BYTES_PER_ELEMENT} bytes, plus {IR_ELEMENTS_FREE})", loc)
    except DefusedXmlException as exc:
        raise ArtifactError(f"IR XML refused: {type(exc).__name__} (DTDs and entities are not allowed)",
                            loc) from None
    except SafeET.ParseError as exc:
        raise ArtifactError(f"IR XML is not well-formed: {exc}", loc) from None
    if root is None or root.tag != "net":
        raise ArtifactError(f"IR XML root must be <net>, got <{'' if root is None else root.tag[:40]}>", loc)
    return root


def _ir_attr_number(text: str | None, what: str) -> float:
    """An IR attribute as OpenVINO reads it: the double nearest the decimal text."""
    if text is None:
        raise ArtifactError(f"Clamp layer has no {what} attribute", "ir_xml")
    try:
        return to_double(parse_number(text))
    except SpecError:
        raise ArtifactError(f"Clamp {what}={text[:40]!r} is not a number", "ir_xml") from None


def parse_ir(xml: str, layer: str | int | None) -> Parsed:
    """The Clamp layer of an IR (by id or name; may be omitted when there is one) in the compact form."""
    root = read_ir(xml)
    version = root.get("version")
    if version not in ("10", "11"):
        raise ArtifactError(f"IR version {version!r} is not supported; expected 11 (or 10)", "ir_xml")
    clamps = [el for el in root.iter("layer") if el.get("type") == "Clamp"]
    if not clamps:
        raise ArtifactError("the IR has no Clamp layer", "ir_xml")
    if layer is None:
        if len(clamps) > 1:
            raise SpecError(f"the IR has {len(clamps)} Clamp layers; name one with 'layer' (id or name)", "layer")
        el = clamps[0]
    else:
        key = str(layer)
        found = [c for c in clamps if c.get("id") == key or c.get("name") == key]
        if not found:
            raise SpecError(f"no Clamp layer with id or name {key!r}", "layer")
        el = found[0]
    return clamp_layer_openvino(el)


def clamp_layer_openvino(el: Element) -> Parsed:
    """One Clamp <layer> element in the compact form (min/max from <data>, type from input port 0)."""
    data = el.find("data")
    if data is None:
        raise ArtifactError("Clamp layer has no <data> element", "ir_xml")
    lo = _ir_attr_number(data.get("min"), "min")
    hi = _ir_attr_number(data.get("max"), "max")
    port = el.find("input/port")
    if port is None:
        raise ArtifactError("Clamp layer has no input port", "ir_xml")
    prec = (port.get("precision") or "").upper()
    if prec not in FROM_PRECISION:
        raise ArtifactError(f"Clamp input precision {prec[:16]!r} is unknown", "ir_xml")
    dims: list = []
    for d in port.findall("dim"):
        try:
            v = int((d.text or "").strip())
        except ValueError:
            raise ArtifactError(f"dim {str(d.text)[:20]!r} is not an integer", "ir_xml") from None
        dims.append(v if v >= 0 else None)
    opset = el.get("version") or "opset1"
    try:
        spec = OpenVinoSpec(dialect="openvino", version=opset if opset.startswith("opset") else "opset1",
                            element_type=FROM_PRECISION[prec], shape=dims, min=lo, max=hi)
    except ValidationError as exc:  # the IR's own values break a rule of the compact form (a shape, say)
        e = exc.errors()[0]
        raise ArtifactError(f"the Clamp layer cannot be read: {e['loc'][0]}: {e['msg']}", "ir_xml") from None
    return Parsed(spec, el.get("name") or el.get("id") or "")
