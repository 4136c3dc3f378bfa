"""Read an ONNX ModelProto without its weights: large tensors become header-only stubs.

Why not `onnx.load`: it materializes every initializer (twice, while parsing), so a scan would cost
2x the model in memory and the time to copy gigabytes it never looks at. A clip's bounds are scalars;
the weights are irrelevant to it. This module walks the protobuf wire format (the framing only: tags,
varints, lengths) over a buffer (an mmap'd file, in practice), keeps every small field as its raw bytes,
and replaces each large TensorProto by a copy without its data fields. The kept bytes are then parsed
by protobuf itself, so field semantics stay protobuf's. Pages of skipped weights are never touched.

External data is never followed: such tensors stay stubs too, recorded in `external`. `refuse_external`
is the one check every model endpoint runs before any engine or numpy_helper sees the bytes: a tensor whose
data lives in a file (in any place a tensor can live) is a 400 naming it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import onnx

from clipbridge.dialects.onnx.tensor import check_strings
from clipbridge.core.errors import ArtifactError

STUB_OVER = 1024  # bytes: a tensor field larger than this is kept as a header-only stub
MAX_DEPTH = 48  # nested subgraphs; protobuf's own recursion limit is 100

# Field numbers from onnx.proto3 (stable since IR v3).
MODEL_GRAPH, MODEL_FUNCTIONS = 7, 25
GRAPH_NODE, GRAPH_INITIALIZER, GRAPH_SPARSE_INITIALIZER = 1, 5, 15
NODE_ATTRIBUTE = 5
ATTR_T, ATTR_G, ATTR_TENSORS, ATTR_GRAPHS, ATTR_SPARSE_TENSOR, ATTR_SPARSE_TENSORS = 5, 6, 10, 11, 22, 23
FUNCTION_NODE = 7
TENSOR_NAME, TENSOR_DATA_LOCATION, TENSOR_EXTERNAL_DATA = 8, 14, 13
TENSOR_DATA_FIELDS = frozenset({4, 5, 6, 7, 9, 10, 11})  # float/int32/string/int64/raw/double/uint64 data
SPARSE_VALUES = 1


class Malformed(ArtifactError):
    """The bytes are not a well-formed protobuf message."""


@dataclass
class Light:
    """What the walk set aside: tensors kept without their data, by name."""

    model: onnx.ModelProto
    stubbed: set[str] = field(default_factory=set)  # large tensors whose values were not read
    external: set[str] = field(default_factory=set)  # tensors whose data lives in an external file


def _varint(buf, pos: int, end: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= end:
            raise Malformed("the model is truncated (a varint runs past the end)", "model")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise Malformed("the model is not protobuf (a varint longer than 10 bytes)", "model")


def _fields(buf, start: int, end: int):
    """(field number, wire type, value start, value end, field start) for each field in buf[start:end]."""
    pos = start
    while pos < end:
        fstart = pos
        key, pos = _varint(buf, pos, end)
        num, wt = key >> 3, key & 7
        if num == 0:
            raise Malformed("the model is not protobuf (field number 0)", "model")
        if wt == 0:
            vstart = pos
            _, pos = _varint(buf, pos, end)
            yield num, wt, vstart, pos, fstart
            continue
        if wt == 1:
            size = 8
        elif wt == 5:
            size = 4
        elif wt == 2:
            size, pos = _varint(buf, pos, end)
        else:
            raise Malformed(f"the model is not ONNX protobuf (wire type {wt})", "model")
        if pos + size > end:
            raise Malformed(f"the model is truncated or declares a size past its end ({size} bytes at offset "
                            f"{pos}, {end - pos} left)", "model")
        yield num, wt, pos, pos + size, fstart
        pos += size


def _key(num: int, wt: int) -> bytes:
    return encode_varint(num << 3 | wt)


def encode_varint(v: int) -> bytes:
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def length_delimited(num: int, payload: bytes) -> bytes:
    """A length-delimited field (wire type 2) with its key."""
    return _key(num, 2) + encode_varint(len(payload)) + payload


class _Walk:
    def __init__(self, buf) -> None:
        self.buf = buf
        self.stubbed: set[str] = set()
        self.external: set[str] = set()

    def raw(self, a: int, b: int) -> bytes:
        return bytes(self.buf[a:b])

    def tensor(self, vs: int, ve: int) -> bytes:
        """A TensorProto: as is when small, else its header fields only."""
        name, external, kept = "", False, []
        for num, wt, a, b, f in _fields(self.buf, vs, ve):
            if num == TENSOR_NAME and wt == 2:
                name = bytes(self.buf[a:b]).decode("utf-8", "replace")
            elif num == TENSOR_DATA_LOCATION and wt == 0:
                external = _varint(self.buf, a, b)[0] == 1
            if num not in TENSOR_DATA_FIELDS:
                kept.append(self.raw(f, b))
        if external:
            self.external.add(name)
        if ve - vs <= STUB_OVER:
            return self.raw(vs, ve)
        self.stubbed.add(name)
        return b"".join(kept)

    def sparse(self, vs: int, ve: int) -> bytes:
        if ve - vs <= STUB_OVER:
            return self.raw(vs, ve)
        out = []
        for num, wt, a, b, f in _fields(self.buf, vs, ve):
            if num == SPARSE_VALUES and wt == 2:
                out.append(length_delimited(num, self.tensor(a, b)))
            elif num == 2:  # indices: not needed to find a clip
                continue
            else:
                out.append(self.raw(f, b))
        return b"".join(out)

    def graph(self, vs: int, ve: int, depth: int) -> bytes:
        if depth > MAX_DEPTH:
            raise Malformed(f"subgraphs nest deeper than {MAX_DEPTH} levels", "model")
        out = []
        for num, wt, a, b, f in _fields(self.buf, vs, ve):
            if wt == 2 and num == GRAPH_INITIALIZER:
                out.append(length_delimited(num, self.tensor(a, b)))
            elif wt == 2 and num == GRAPH_SPARSE_INITIALIZER:
                out.append(length_delimited(num, self.sparse(a, b)))
            elif wt == 2 and num == GRAPH_NODE and b - a > STUB_OVER:
                out.append(length_delimited(num, self.node(a, b, depth)))
            else:
                out.append(self.raw(f, b))
        return b"".join(out)

    def node(self, vs: int, ve: int, depth: int) -> bytes:
        out = []
        for num, wt, a, b, f in _fields(self.buf, vs, ve):
            if wt == 2 and num == NODE_ATTRIBUTE and b - a > STUB_OVER:
                out.append(length_delimited(num, self.attribute(a, b, depth)))
            else:
                out.append(self.raw(f, b))
        return b"".join(out)

    def attribute(self, vs: int, ve: int, depth: int) -> bytes:
        out = []
        for num, wt, a, b, f in _fields(self.buf, vs, ve):
            if wt == 2 and num in (ATTR_T, ATTR_TENSORS):
                out.append(length_delimited(num, self.tensor(a, b)))
            elif wt == 2 and num in (ATTR_SPARSE_TENSOR, ATTR_SPARSE_TENSORS):
                out.append(length_delimited(num, self.sparse(a, b)))
            elif wt == 2 and num in (ATTR_G, ATTR_GRAPHS):
                out.append(length_delimited(num, self.graph(a, b, depth + 1)))
            else:
                out.append(self.raw(f, b))
        return b"".join(out)

    def function(self, vs: int, ve: int) -> bytes:
        out = []
        for num, wt, a, b, f in _fields(self.buf, vs, ve):
            if wt == 2 and num == FUNCTION_NODE and b - a > STUB_OVER:
                out.append(length_delimited(num, self.node(a, b, 1)))
            else:
                out.append(self.raw(f, b))
        return b"".join(out)


def load_light(buf) -> Light:
    """A ModelProto from serialized bytes (bytes, memoryview or mmap) with large tensors stubbed."""
    if len(buf) == 0:
        raise Malformed("the model is empty", "model")
    walk = _Walk(buf)
    out = []
    for num, wt, a, b, f in _fields(buf, 0, len(buf)):
        if wt == 2 and num == MODEL_GRAPH:
            out.append(length_delimited(num, walk.graph(a, b, 0)))
        elif wt == 2 and num == MODEL_FUNCTIONS and b - a > STUB_OVER:
            out.append(length_delimited(num, walk.function(a, b)))
        else:
            out.append(walk.raw(f, b))
    model = onnx.ModelProto()
    try:
        model.ParseFromString(b"".join(out))
    except Exception:  # protobuf's DecodeError and friends: the framing was fine, a field was not
        raise Malformed("the model is not an ONNX ModelProto (protobuf decoding failed)", "model") from None
    if not model.HasField("graph"):
        raise Malformed("the bytes hold no ONNX graph (is this an ONNX model?)", "model")
    check_strings(model)
    for t in _tensors(model):
        if is_external(t):
            check_external_location(t)
            walk.external.add(t.name)
    return Light(model, walk.stubbed, walk.external)


class ExternalDataRefused(ArtifactError):
    """The upload keeps a tensor's data in a file: the service never opens files an upload names."""

    title = "External data refused"


EMBED_HINT = ("embed the data in the model: onnx.save(model, path, save_as_external_data=False) after "
              "onnx.load(path) (which reads the external files next to the model)")


def is_external(t: onnx.TensorProto) -> bool:
    """Whether a tensor names a file for its data (EXTERNAL, or any external_data entry at all)."""
    return t.data_location == onnx.TensorProto.EXTERNAL or len(t.external_data) > 0


def refuse_external(buf) -> Light:
    """The model read without its weights, or ExternalDataRefused naming the first tensor whose data lives in a
    file, in any place `_tensors` walks. The service runs this before any engine or numpy_helper sees the bytes;
    whatever the location says (relative, absolute, '..', a symlink), it is never opened."""
    light = load_light(buf) if not isinstance(buf, Light) else buf
    for t in _tensors(light.model):
        if is_external(t):
            loc = next((e.value for e in t.external_data if e.key == "location"), "")
            raise ExternalDataRefused(
                f"tensor {t.name[:80]!r} keeps its data in an external file ({loc[:80]!r}); the service never "
                f"reads files a model names: {EMBED_HINT}", "model")
    return light


def check_external_location(t: onnx.TensorProto) -> None:
    """A location that leaves the model's directory (absolute, '..', a drive) is hostile: refused, never opened.

    onnx's own loader refuses the same paths; an in-directory name is kept (and never opened either).
    """
    loc = next((e.value for e in t.external_data if e.key == "location"), "")
    parts = loc.replace("\\", "/").split("/")
    if not loc or loc.startswith(("/", "\\")) or ".." in parts or (len(loc) > 1 and loc[1] == ":") or "\0" in loc:
        raise ExternalDataRefused(f"tensor {t.name[:80]!r} points at external data {loc[:120]!r} outside the model's "
                            "directory; such a model is refused (external data is never followed): "
                            + EMBED_HINT, "model")


def _tensors(model: onnx.ModelProto):
    """Every TensorProto of the model: initializers (dense and sparse: values and indices) and tensor attributes
    (TENSOR, TENSORS, SPARSE_TENSOR, SPARSE_TENSORS), in every graph, subgraph and function, and the default values
    of a function's attributes."""
    def sparse(sp: onnx.SparseTensorProto):
        yield sp.values
        yield sp.indices

    def graph(g: onnx.GraphProto):
        yield from g.initializer
        for sp in g.sparse_initializer:
            yield from sparse(sp)
        yield from nodes(g.node)

    def attributes(attrs):
        for a in attrs:
            if a.HasField("t"):
                yield a.t
            yield from a.tensors
            if a.HasField("sparse_tensor"):
                yield from sparse(a.sparse_tensor)
            for sp in a.sparse_tensors:
                yield from sparse(sp)
            if a.HasField("g"):
                yield from graph(a.g)
            for sub in a.graphs:
                yield from graph(sub)

    def nodes(ns):
        for n in ns:
            yield from attributes(n.attribute)
    yield from graph(model.graph)
    for f in model.functions:
        yield from nodes(f.node)
        yield from attributes(f.attribute_proto)  # a function attribute's default value (issue 46)
    for ti in model.training_info:  # training graphs: no engine here runs them, but a tensor can live there
        yield from graph(ti.initialization)
        yield from graph(ti.algorithm)

