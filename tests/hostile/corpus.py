"""Hostile inputs, one builder each. A case is a request (built lazily: some bodies are 50 MB) and the 4xx
statuses it may get. Sentinel paths (/etc/passwd, ../..) are what an attacker would aim at; the audit in
conftest.py proves none of them is opened."""

from __future__ import annotations

import base64
import io
import json
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from onnx import TensorProto, helper

JSON = {"content-type": "application/json"}
NPY = {"content-type": "application/x-npy"}
OCTET = {"content-type": "application/octet-stream"}
F32 = {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "min": 0, "max": 6}
MB = 1 << 20


@dataclass(frozen=True)
class Case:
    id: str
    path: str
    body: Callable[[], Any]  # bytes, an iterator of bytes (sent chunked), or a dict of multipart files
    headers: dict[str, str] = field(default_factory=lambda: dict(JSON))
    expect: frozenset[int] = frozenset({400})

    def request(self) -> dict[str, Any]:
        body = self.body()
        if isinstance(body, dict):
            return {"files": body, "headers": self.headers}
        return {"content": body, "headers": self.headers}


def js(obj: Any) -> Callable[[], bytes]:
    return lambda: json.dumps(obj).encode()


def raw(data: bytes) -> Callable[[], bytes]:
    return lambda: data


def npy_path(options: dict[str, Any] | None = None) -> str:
    return "/v1/execute.npy?request=" + urllib.parse.quote(json.dumps(options or {"spec": F32}))


# --- XML: entities, external DTDs --------------------------------------------------------------------------

CLAMP_IR = ('<net name="n" version="11"><layers><layer id="0" name="c" type="Clamp" version="opset1">'
            '<data min="0" max="6"/><input><port id="0" precision="FP32"><dim>1</dim></port></input>'
            '<output><port id="1" precision="FP32"><dim>1</dim></port></output></layer></layers></net>')
XXE = ('<?xml version="1.0"?><!DOCTYPE net [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'
       + CLAMP_IR.replace('name="c"', 'name="&xxe;"'))
XXE_DTD = '<?xml version="1.0"?><!DOCTYPE net SYSTEM "file:///etc/passwd">' + CLAMP_IR
XXE_PARAM = ('<?xml version="1.0"?><!DOCTYPE net [<!ENTITY % p SYSTEM "file:///etc/passwd"> %p;]>' + CLAMP_IR)
XXE_HTTP = '<?xml version="1.0"?><!DOCTYPE net [<!ENTITY x SYSTEM "http://169.254.169.254/">]><net>&x;</net>'
LAUGHS = ('<?xml version="1.0"?><!DOCTYPE net [<!ENTITY l0 "lol">'
          + "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10))
          + ']><net version="11">&l9;</net>')
QUADRATIC = ('<?xml version="1.0"?><!DOCTYPE net [<!ENTITY a "' + "A" * 50_000 + '">]><net version="11">'
             + "&a;" * 50_000 + "</net>")


def ir_spec(xml: str) -> dict[str, Any]:
    return {"dialect": "openvino", "ir_xml": xml}


# --- ONNX: external data, truncation, nesting --------------------------------------------------------------

def clip_model(location: str | None = None) -> bytes:
    """Clip-13 on float32 whose min initializer points at an external file (when `location` is given)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])
    lo = helper.make_tensor("lo", TensorProto.FLOAT, [], [0.0])
    if location is not None:
        lo.ClearField("float_data")
        lo.data_location = TensorProto.EXTERNAL
        lo.external_data.add(key="location", value=location)
        lo.external_data.add(key="length", value="4")
    hi = helper.make_tensor("hi", TensorProto.FLOAT, [], [6.0])
    g = helper.make_graph([helper.make_node("Clip", ["x", "lo", "hi"], ["y"], name="clip")], "g", [x], [y],
                          [lo, hi])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()


def shaped_model(dims: list[int]) -> bytes:
    """Clip-13 whose input is declared with these dims (negative, or with a product past 2^63)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, dims)
    inits = [helper.make_tensor("lo", TensorProto.FLOAT, [], [0.0]),
             helper.make_tensor("hi", TensorProto.FLOAT, [], [6.0])]
    g = helper.make_graph([helper.make_node("Clip", ["x", "lo", "hi"], ["y"], name="clip")], "g", [x], [y], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()


def shaped_ir(dims: list[int]) -> bytes:
    d = "".join(f"<dim>{v}</dim>" for v in dims)
    return ('<?xml version="1.0"?><net name="n" version="11"><layers>'
            f'<layer id="0" name="x" type="Parameter" version="opset1"><data shape="{",".join(map(str, dims))}" '
            f'element_type="f32"/><output><port id="0" precision="FP32">{d}</port></output></layer>'
            '<layer id="1" name="clamp" type="Clamp" version="opset1"><data min="0" max="6"/><input>'
            f'<port id="0" precision="FP32">{d}</port></input><output><port id="1" precision="FP32">{d}</port>'
            '</output></layer><layer id="2" name="out" type="Result" version="opset1"><input><port id="0" '
            f'precision="FP32">{d}</port></input></layer></layers><edges><edge from-layer="0" from-port="0" '
            'to-layer="1" to-port="0"/><edge from-layer="1" from-port="1" to-layer="2" to-port="0"/></edges>'
            '</net>').encode()


def _ld(field_number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field."""
    out, n = bytearray([field_number << 3 | 2]), len(payload)
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out) + payload


def nesting_bomb(depth: int = 3000) -> bytes:
    """ModelProto.graph -> node -> attribute.g -> node -> ... `depth` subgraphs deep (protobuf recursion)."""
    graph = b""
    for _ in range(depth):
        attribute = _ld(1, b"then_branch") + _ld(6, graph)  # AttributeProto{name, g}
        node = _ld(4, b"If") + _ld(5, attribute)  # NodeProto{op_type, attribute}
        graph = _ld(1, node)  # GraphProto{node}
    return bytes([8, 8]) + _ld(7, graph)  # ModelProto{ir_version: 8, graph}


def onnx_spec(model: bytes) -> dict[str, Any]:
    return {"dialect": "onnx", "model": base64.b64encode(model).decode()}


# --- .npy ----------------------------------------------------------------------------------------------------

def npy_with_header(header: str, data: bytes = b"") -> bytes:
    text = header.encode("latin1")
    pad = 64 - (10 + len(text) + 1) % 64
    text += b" " * pad + b"\n"
    return b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text + data


def pickled_npy() -> bytes:
    buf = io.BytesIO()
    np.save(buf, np.array([{"__reduce__": "os.system"}, None], dtype=object), allow_pickle=True)
    return buf.getvalue()


def structured_npy() -> bytes:
    buf = io.BytesIO()
    np.save(buf, np.zeros(2, dtype=[("a", "<f4"), ("b", "O")]), allow_pickle=True)
    return buf.getvalue()


# --- bodies too large to keep around -----------------------------------------------------------------------

def chunks(total: int, piece: bytes) -> Callable[[], Iterator[bytes]]:
    """A body streamed without Content-Length (chunked), so only counting can stop it."""
    def gen() -> Iterator[bytes]:
        yield piece[:1]
        sent = 1
        block = piece * (MB // len(piece))
        while sent < total:
            yield block
            sent += len(block)
    return gen


def number_string_body(digits: int) -> Callable[[], bytes]:
    return lambda: b'{"source": {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "max": 6, "min": "' + \
        b"9" * digits + b'"}}'


def dml(sizes: list[int], dtype: str = "FLOAT32", fl: str = "6_4") -> dict[str, Any]:
    t = {"DataType": dtype, "Sizes": sizes}
    return {"dialect": "directml", "feature_level": fl, "desc": {"InputTensor": t, "OutputTensor": t,
                                                                  "Min": 0, "Max": 6}}


def nested(depth: int) -> bytes:
    return b'{"source": ' * depth + b"1" + b"}" * depth


def tensor_req(shape: list[int], data: list[Any] | None = None, spec: dict[str, Any] = F32) -> dict[str, Any]:
    return {"spec": spec, "input": {"dtype": "float32", "shape": shape, "data": data or []}}


S4 = frozenset({400})
S413 = frozenset({413})
S415 = frozenset({415})
S422 = frozenset({422})
ANY4 = frozenset({400, 413, 415, 422})

CASES: list[Case] = [
    # XML through /v1/translate (IR form) and /v1/execute
    Case("xxe-entity/translate", "/v1/translate", js({"source": ir_spec(XXE)})),
    Case("xxe-external-dtd/translate", "/v1/translate", js({"source": ir_spec(XXE_DTD)})),
    Case("xxe-parameter-entity/translate", "/v1/translate", js({"source": ir_spec(XXE_PARAM)})),
    Case("xxe-ssrf/translate", "/v1/translate", js({"source": ir_spec(XXE_HTTP)})),
    Case("billion-laughs/translate", "/v1/translate", js({"source": ir_spec(LAUGHS)})),
    Case("quadratic-blowup/translate", "/v1/translate", js({"source": ir_spec(QUADRATIC)})),
    Case("xxe-entity/execute", "/v1/execute", js(tensor_req([1], [1], ir_spec(XXE)))),
    # ONNX bytes through /v1/translate (model form)
    Case("onnx-external-data-traversal/translate", "/v1/translate",
         js({"source": onnx_spec(clip_model("../../../../../../etc/passwd"))})),
    Case("onnx-external-data-absolute/translate", "/v1/translate",
         js({"source": onnx_spec(clip_model("/etc/passwd"))})),
    Case("onnx-truncated/translate", "/v1/translate", js({"source": onnx_spec(clip_model()[:-7])})),
    Case("onnx-dims-product-past-int64/translate", "/v1/translate",
         js({"source": onnx_spec(shaped_model([2**62, 2**62, 2**62]))})),
    Case("ir-dims-product-past-int64/translate", "/v1/translate",
         js({"source": ir_spec(shaped_ir([2**62, 2**62, 2**62]).decode())})),
    Case("ir-dim-past-int64/translate", "/v1/translate", js({"source": ir_spec(shaped_ir([2**64, 2]).decode())})),
    Case("onnx-garbage/translate", "/v1/translate", js({"source": onnx_spec(b"\xff" * 4096)})),
    Case("onnx-nesting-bomb/translate", "/v1/translate", js({"source": onnx_spec(nesting_bomb())})),
    Case("base64-invalid/translate", "/v1/translate", js({"source": {"dialect": "onnx", "model": "%%%not*b64"}})),
    Case("base64-huge/translate", "/v1/translate",
         lambda: b'{"source": {"dialect": "onnx", "model": "' + b"A" * (20 * MB) + b'"}}', expect=S413),
    # shapes: 9-D, 0-size, negative, products past 64 bits
    Case("directml-9d/translate", "/v1/translate", js({"source": dml([1] * 9)}), expect=S422),
    Case("directml-0-size/translate", "/v1/translate", js({"source": dml([1, 0, 1, 1])}), expect=S422),
    Case("directml-negative-dim/translate", "/v1/translate", js({"source": dml([1, -3, 1, 1])}), expect=S422),
    Case("directml-product-past-uint64/translate", "/v1/translate", js({"source": dml([2**32 - 1] * 8)}),
         expect=S422),
    Case("directml-dim-past-int64/translate", "/v1/translate", js({"source": dml([2**70, 1, 1, 1])}), expect=S422),
    Case("directml-9d/execute", "/v1/execute", js(tensor_req([1], [1], dml([1] * 9))), expect=S422),
    Case("onnx-shape-product-past-int64/translate", "/v1/translate",
         js({"source": {**F32, "shape": [2**62, 2**62, 2**62]}}), expect=S422),
    Case("onnx-negative-dim/translate", "/v1/translate", js({"source": {**F32, "shape": [-1, 3]}}), expect=S422),
    Case("openvino-shape-product-past-int64/translate", "/v1/translate",
         js({"source": {"dialect": "openvino", "element_type": "f32", "shape": [2**32] * 3, "min": 0, "max": 6}}),
         expect=S422),
    Case("tensor-shape-product-past-uint64/execute", "/v1/execute", js(tensor_req([2**40, 2**40, 2**40])),
         expect=S413),
    Case("tensor-negative-dim/execute", "/v1/execute", js(tensor_req([-1])), expect=S422),
    Case("tensor-negative-dim/compare", "/v1/compare", js(tensor_req([2, -2])), expect=S422),
    # JSON itself: nesting, numbers, NaN/Infinity tokens, encodings
    Case("nested-arrays-100k/translate", "/v1/translate", raw(b"[" * 100_000 + b"]" * 100_000)),
    Case("nested-objects-50k/translate", "/v1/translate", raw(nested(50_000))),
    Case("nested-objects-50k/execute", "/v1/execute", raw(nested(50_000))),
    Case("nested-arrays-900-in-a-field/translate", "/v1/translate",
         raw(b'{"source": {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "shape": '
             + b"[" * 900 + b"]" * 900 + b"}}"), expect=S4),  # past MAX_JSON_DEPTH: a 400 naming the body
    Case("number-string-50MB/translate", "/v1/translate", number_string_body(50 * MB), expect=S413),
    Case("number-string-50MB-chunked/translate", "/v1/translate", chunks(50 * MB, b'{"a":"' + b"9" * 1000),
         expect=S413),
    Case("number-string-1MB/translate", "/v1/translate", number_string_body(MB), expect=S422),
    Case("number-literal-1M-digits/translate", "/v1/translate",
         raw(b'{"source": {"dialect": "onnx", "opset": 13, "elem_type": "INT64", "max": 6, "min": '
             + b"9" * MB + b"}}")),
    Case("number-literal-1M-digits/execute", "/v1/execute",
         raw(b'{"spec": {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "min": 0, "max": 6}, "input": '
             b'{"dtype": "float32", "shape": [1], "data": [' + b"9" * MB + b"]}}")),
    Case("nan-token/translate", "/v1/translate", raw(b'{"source": {"dialect": "onnx", "opset": 13, '
                                                     b'"elem_type": "FLOAT", "min": NaN, "max": 6}}')),
    Case("infinity-token/execute", "/v1/execute", raw(json.dumps(tensor_req([1])).replace("[]", "[Infinity]")
                                                      .encode())),
    Case("minus-infinity-token/compare", "/v1/compare", raw(json.dumps(tensor_req([1])).replace("[]", "[-Infinity]")
                                                            .encode())),
    Case("invalid-utf8/translate", "/v1/translate", raw(b'{"source": "\xff\xfe"}')),
    Case("utf16-bom/translate", "/v1/translate", raw("\ufeff{}".encode("utf-16"))),
    # content types
    Case("text-plain/translate", "/v1/translate", js({"source": F32}), {"content-type": "text/plain"}, S415),
    Case("xml/translate", "/v1/translate", raw(XXE.encode()), {"content-type": "application/xml"}, S415),
    Case("form-urlencoded/execute", "/v1/execute", raw(b"spec=1"),
         {"content-type": "application/x-www-form-urlencoded"}, S415),
    Case("multipart/compare", "/v1/compare", lambda: {"spec": ("s.json", json.dumps(F32).encode())}, {}, S415),
    Case("no-content-type/translate", "/v1/translate", js({"source": F32}), {}, S415),
    Case("json-to-npy/execute.npy", npy_path(), js({"spec": F32}), dict(JSON), S415),
    # .npy
    Case("npy-pickled-objects/execute.npy", npy_path(), pickled_npy, NPY, S422),
    Case("npy-structured-with-object/execute.npy", npy_path(), structured_npy, NPY, S422),
    Case("npy-header-code/execute.npy", npy_path(),
         raw(npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': __import__('os').getpid()}")),
         NPY, S422),
    Case("npy-shape-product-past-uint64/execute.npy", npy_path(),
         raw(npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 16), }")),
         NPY, frozenset({413, 422})),
    Case("npy-negative-dim/execute.npy", npy_path(),
         raw(npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (-4,), }", b"\0" * 16)), NPY, S422),
    Case("npy-huge-header-length/execute.npy", npy_path(),
         raw(b"\x93NUMPY\x02\x00" + (2**32 - 1).to_bytes(4, "little") + b"{}"), NPY, S422),
    Case("npy-request-not-json/execute.npy", "/v1/execute.npy?request=%7Bnan", raw(b""), NPY, ANY4),
    Case("npy-request-nan-token/execute.npy",
         "/v1/execute.npy?request=" + urllib.parse.quote('{"spec": {"dialect": "onnx", "opset": 13, '
                                                         '"elem_type": "FLOAT", "min": NaN, "max": 6}}'),
         raw(b""), NPY, ANY4),
    Case("npy-request-huge/execute.npy", "/v1/execute.npy?request=" + "a" * 65_000, raw(b""), NPY, ANY4),
    Case("npy-50MB-chunked-garbage/execute.npy", npy_path(), chunks(50 * MB, b"\0" * 1024), NPY, S422),
]

# The model scan (/v1/models/inspect): the same payloads as an upload (multipart) and as a raw body.
MODEL_CASES: list[Case] = [
    Case("xxe-entity/inspect", "/v1/models/inspect", lambda: {"model": ("net.xml", XXE.encode(), "text/xml")}, {},
         ANY4),
    Case("xxe-external-dtd/inspect", "/v1/models/inspect", raw(XXE_DTD.encode()), OCTET, ANY4),
    Case("xxe-parameter-entity/inspect", "/v1/models/inspect", raw(XXE_PARAM.encode()), OCTET, ANY4),
    Case("billion-laughs/inspect", "/v1/models/inspect", lambda: {"model": ("net.xml", LAUGHS.encode())}, {},
         ANY4),
    Case("billion-laughs-raw/inspect", "/v1/models/inspect", raw(LAUGHS.encode()), OCTET, ANY4),
    Case("quadratic-blowup/inspect", "/v1/models/inspect", raw(QUADRATIC.encode()), OCTET, ANY4),
    Case("onnx-external-data-traversal/inspect", "/v1/models/inspect",
         lambda: {"model": ("m.onnx", clip_model("../../../../../../etc/passwd"))}, {}, ANY4),
    Case("onnx-external-data-absolute/inspect", "/v1/models/inspect", raw(clip_model("/etc/passwd")), OCTET,
         ANY4),
    Case("onnx-truncated/inspect", "/v1/models/inspect", raw(clip_model()[:-7]), OCTET, ANY4),
    Case("onnx-truncated-multipart/inspect", "/v1/models/inspect",
         lambda: {"model": ("m.onnx", clip_model()[:len(clip_model()) // 2])}, {}, ANY4),
    Case("onnx-nesting-bomb/inspect", "/v1/models/inspect", raw(nesting_bomb()), OCTET, ANY4),
    Case("onnx-garbage/inspect", "/v1/models/inspect", raw(b"\xff" * 4096), OCTET, ANY4),
    Case("text-plain/inspect", "/v1/models/inspect", raw(b"hello"), {"content-type": "text/plain"}, ANY4),
    Case("json/inspect", "/v1/models/inspect", js({"model": "x"}), dict(JSON), ANY4),
    Case("empty/inspect", "/v1/models/inspect", raw(b""), OCTET, ANY4),
]

# Models that are odd rather than hostile: the scan may report them (200, the clip with an error) or refuse
# them (4xx); never a 5xx.
ODD_MODELS: list[Case] = [
    Case("onnx-negative-dim/inspect", "/v1/models/inspect", raw(shaped_model([-5, 3])), OCTET),
    Case("onnx-dims-product-past-int64/inspect", "/v1/models/inspect", raw(shaped_model([2**62, 2**62, 2**62])),
         OCTET),
    Case("onnx-dims-product-past-int64/rewrite", "/v1/models/rewrite?target=directml",
         raw(shaped_model([2**62, 2**62, 2**62])), OCTET),
    Case("ir-negative-dim/inspect", "/v1/models/inspect", raw(shaped_ir([-5, 3])), OCTET),
    Case("ir-dims-product-past-int64/inspect", "/v1/models/inspect", raw(shaped_ir([2**62, 2**62, 2**62])), OCTET),
    Case("ir-dim-past-int64/inspect", "/v1/models/inspect", raw(shaped_ir([2**64, 2])), OCTET),
    Case("onnx-negative-dim/translate", "/v1/translate", js({"source": onnx_spec(shaped_model([-5, 3]))})),
    Case("ir-negative-dim/translate", "/v1/translate", js({"source": ir_spec(shaped_ir([-5, 3]).decode())})),
]
