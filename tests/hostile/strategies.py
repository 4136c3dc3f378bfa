"""Hypothesis strategies for hostile inputs: build a structurally valid artifact, then (often) mutate it.

Valid first, because random bytes die in the first check of every decoder; a valid skeleton with one wrong
size, type or byte reaches the code behind those checks. Each strategy draws its own mutation.
"""

from __future__ import annotations

import base64
import json
import struct
import urllib.parse
from typing import Any

from hypothesis import strategies as st
from onnx import TensorProto, helper

# --- mutations -----------------------------------------------------------------------------------------------


@st.composite
def mutated(draw, data: bytes) -> bytes:
    """`data` unchanged, or with byte flips, a truncation, an inserted run, or two slices swapped."""
    kind = draw(st.sampled_from(["none", "none", "flip", "truncate", "insert", "swap", "duplicate"]))
    if kind == "none" or not data:
        return data
    buf = bytearray(data)
    n = len(buf)
    if kind == "flip":
        for _ in range(draw(st.integers(1, 4))):
            i = draw(st.integers(0, n - 1))
            buf[i] = draw(st.sampled_from([0x00, 0xFF, 0x80, 0x7F, 0x08, 0x0A, 0x12, 0x1A, buf[i] ^ 0x01]))
        return bytes(buf)
    if kind == "truncate":
        return bytes(buf[:draw(st.integers(0, n - 1))])
    if kind == "insert":
        i = draw(st.integers(0, n))
        return bytes(buf[:i]) + draw(st.binary(min_size=1, max_size=12)) + bytes(buf[i:])
    a, b = sorted(draw(st.lists(st.integers(0, n), min_size=2, max_size=2)))
    if kind == "duplicate":
        return bytes(buf[:b]) + bytes(buf[a:b]) + bytes(buf[b:])
    c = draw(st.integers(b, n))
    return bytes(buf[:a]) + bytes(buf[b:c]) + bytes(buf[a:b]) + bytes(buf[c:])  # field swap: [a,b) <-> [b,c)


# --- ONNX tensors with every data field ----------------------------------------------------------------------

DATA_TYPES = [v for k, v in TensorProto.DataType.items()] + [99]
FIELDS = ["float_data", "int32_data", "int64_data", "uint64_data", "double_data", "raw_data", "string_data",
          "external", "typed"]
DIMS = st.one_of(st.just([]), st.lists(st.integers(0, 3), max_size=3),
                 st.lists(st.sampled_from([-1, 0, 1, 2, 2**31, 2**40, 2**62]), min_size=1, max_size=3))


def _values(draw, field: str, n: int) -> Any:
    if field == "float_data":
        return draw(st.lists(st.floats(width=32), min_size=n, max_size=n))
    if field == "double_data":
        return draw(st.lists(st.floats(), min_size=n, max_size=n))
    if field == "int32_data":
        return draw(st.lists(st.integers(-(2**31), 2**31 - 1), min_size=n, max_size=n))
    if field == "int64_data":
        return draw(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=n, max_size=n))
    if field == "uint64_data":
        return draw(st.lists(st.integers(0, 2**64 - 1), min_size=n, max_size=n))
    return draw(st.lists(st.binary(max_size=6), min_size=n, max_size=n))


@st.composite
def tensors(draw, name: str, data_type: int | None = None) -> TensorProto:
    """A TensorProto: mostly a proper scalar of `data_type`, otherwise any type, dims and data field."""
    if draw(st.integers(0, 2)) and data_type is not None:
        return helper.make_tensor(name, data_type, [], [draw(st.integers(0, 6))]) if data_type not in (
            TensorProto.STRING,) else helper.make_tensor(name, data_type, [], [b"x"])
    t = TensorProto()
    t.name = name
    t.data_type = draw(st.sampled_from(DATA_TYPES)) if data_type is None or draw(st.booleans()) else data_type
    t.dims.extend(draw(DIMS))
    field = draw(st.sampled_from(FIELDS))
    declared = 1
    for d in t.dims:
        declared *= d
    n = declared if 0 <= declared <= 8 and draw(st.booleans()) else draw(st.integers(0, 5))
    if field == "typed":
        try:
            field = helper.tensor_dtype_to_field(t.data_type)
        except Exception:
            field = "raw_data"
    if field == "external":
        t.data_location = TensorProto.EXTERNAL
        t.external_data.add(key="location", value=draw(st.sampled_from(["w.bin", "../../etc/passwd", ""])))
        t.external_data.add(key="length", value=draw(st.sampled_from(["4", "-1", "x", str(2**64)])))
    elif field == "raw_data":
        t.raw_data = draw(st.binary(max_size=2 * n + 8)) if draw(st.booleans()) else bytes(4 * n)
    else:
        getattr(t, field).extend(_values(draw, field, n))
    if draw(st.integers(0, 19)) == 0:
        t.segment.begin, t.segment.end = 0, 1
    return t


# --- ONNX models: Clip, Min/Max, Mul/Add, If subgraphs, local functions, Constant nodes ----------------------

ELEM = st.sampled_from([TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.INT8,
                        TensorProto.INT64, TensorProto.UINT64, TensorProto.BFLOAT16, TensorProto.BOOL,
                        TensorProto.STRING, TensorProto.COMPLEX64])


@st.composite
def _bound(draw, name: str, elem: int, inits: list, nodes: list) -> str:
    """A bound named `name`: an initializer, a Constant node's value (tensor or value_float), or nothing."""
    where = draw(st.sampled_from(["init", "init", "constant", "value_float", "missing"]))
    if where == "init":
        inits.append(draw(tensors(name, elem)))
    elif where == "constant":
        nodes.append(helper.make_node("Constant", [], [name], value=draw(tensors(name + "_v", elem))))
    elif where == "value_float":
        nodes.append(helper.make_node("Constant", [], [name], value_float=draw(st.floats(width=32))))
    return name


@st.composite
def _body(draw, elem: int, x: str, y: str, opset: int, prefix: str) -> tuple[list, list]:
    """Nodes computing y from x through a clip pattern, with the initializers they use."""
    nodes: list = []
    inits: list = []
    src = x
    if draw(st.booleans()):  # a ScaleBias candidate in front: Mul and/or Add by constants of any type
        for op in draw(st.sampled_from([["Mul"], ["Add"], ["Mul", "Add"]])):
            c = draw(_bound(f"{prefix}{op}_c", elem, inits, nodes))
            nodes.append(helper.make_node(op, [src, c], [f"{prefix}{op}_y"], name=f"{prefix}{op}"))
            src = f"{prefix}{op}_y"
    pattern = draw(st.sampled_from(["clip", "clip", "minmax", "maxmin"]))
    if pattern == "clip":
        if opset < 11:
            nodes.append(helper.make_node("Clip", [src], [y], name=f"{prefix}clip", min=draw(st.floats(width=32)),
                                          max=draw(st.floats(width=32))))
        else:
            lo = draw(_bound(f"{prefix}lo", elem, inits, nodes))
            hi = draw(_bound(f"{prefix}hi", elem, inits, nodes))
            ins = draw(st.sampled_from([[src, lo, hi], [src, "", hi], [src, lo], [src]]))
            nodes.append(helper.make_node("Clip", ins, [y], name=f"{prefix}clip"))
    else:
        a = draw(_bound(f"{prefix}a", elem, inits, nodes))
        b = draw(_bound(f"{prefix}b", elem, inits, nodes))
        inner, outer = ("Max", "Min") if pattern == "minmax" else ("Min", "Max")
        nodes.append(helper.make_node(inner, [src, a], [f"{prefix}m"], name=f"{prefix}{inner}"))
        nodes.append(helper.make_node(outer, [f"{prefix}m", b], [y], name=f"{prefix}{outer}"))
    return nodes, inits


@st.composite
def onnx_models(draw) -> bytes:
    """A small ModelProto (serialized): a clip pattern in the main graph, in an If branch, or in a function."""
    opset = draw(st.sampled_from([6, 11, 13, 18]))
    elem = draw(ELEM)
    shape = draw(st.sampled_from([[4], [], [2, 3], ["n", 4], [-1]]))
    x = helper.make_tensor_value_info("x", elem, shape)
    y = helper.make_tensor_value_info("y", elem, shape)
    where = draw(st.sampled_from(["main", "main", "if", "function"]))
    functions = []
    inits: list = []
    if where == "main":
        nodes, inits = draw(_body(elem, "x", "y", opset, ""))
    elif where == "if":
        then_nodes, then_inits = draw(_body(elem, "x", "t_y", opset, "t_"))
        then_g = helper.make_graph(then_nodes, "then", [], [helper.make_tensor_value_info("t_y", elem, shape)],
                                   then_inits)
        else_g = helper.make_graph([helper.make_node("Identity", ["x"], ["e_y"])], "else", [],
                                   [helper.make_tensor_value_info("e_y", elem, shape)])
        inits = [helper.make_tensor("cond", TensorProto.BOOL, [], [True])]
        nodes = [helper.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g, name="if")]
    else:
        body, body_inits = draw(_body(elem, "fx", "fy", opset, "f_"))
        # a function has no initializers: its constants are Constant nodes
        consts = [helper.make_node("Constant", [], [t.name], value=t) for t in body_inits]
        functions = [helper.make_function("local", "fclip", ["fx"], ["fy"], consts + body,
                                          [helper.make_opsetid("", opset)])]
        nodes = [helper.make_node("fclip", ["x"], ["y"], domain="local", name="call")]
    g = helper.make_graph(nodes, "g", [x], [y], inits)
    opsets = [helper.make_opsetid("", opset)] + ([helper.make_opsetid("local", 1)] if functions else [])
    m = helper.make_model(g, opset_imports=opsets, functions=functions)
    m.ir_version = draw(st.sampled_from([3, 7, 8, 10]))
    return draw(mutated(m.SerializeToString()))


# --- OpenVINO IR: layers, edges, nesting, Const offsets into a .bin -------------------------------------------

OV_TYPES = ["f32", "f16", "f64", "i8", "i32", "i64", "u8", "u64", "boolean", "bf16", "string", "x"]
PRECISION = {"f32": "FP32", "f16": "FP16", "f64": "FP64", "i8": "I8", "i32": "I32", "i64": "I64", "u8": "U8",
             "u64": "U64", "boolean": "BOOL", "bf16": "BF16", "string": "STRING", "x": "X"}
NUMBER = st.one_of(st.integers(-(2**70), 2**70).map(str), st.floats().map(repr),
                   st.sampled_from(["", "nan", "-inf", "1e400", "0x10", "abc", "6"]))


def _port(pid: int, prec: str, dims: list[str]) -> str:
    return f'<port id="{pid}" precision="{prec}">' + "".join(f"<dim>{d}</dim>" for d in dims) + "</port>"


@st.composite
def _ir_layers(draw, depth: int, base: int) -> tuple[str, str]:
    """(layers, edges) XML of one body: a Parameter, Consts, a clip pattern, maybe a nested TensorIterator."""
    et = draw(st.sampled_from(OV_TYPES))
    prec = PRECISION[et]
    dims = draw(st.sampled_from([["4"], [], ["2", "3"], ["-1"], ["x"], [str(2**70)]]))
    layers: list[str] = []
    edges: list[tuple[int, int, int, int]] = []
    lid = base

    def const() -> int:
        nonlocal lid
        lid += 1
        shape = draw(st.sampled_from(["", "1", "2", "-1", "1,1", "x", str(2**62)]))
        off = draw(st.sampled_from(["0", "4", "-4", "1048576", str(2**64), "x"]))
        size = draw(st.sampled_from(["4", "2", "8", "0", "-1", str(2**40)]))
        layers.append(f'<layer id="{lid}" name="c{lid}" type="Const" version="opset1"><data '
                      f'element_type="{draw(st.sampled_from(OV_TYPES))}" shape="{shape}" offset="{off}" '
                      f'size="{size}"/><output>{_port(0, prec, [])}</output></layer>')
        return lid

    layers.append(f'<layer id="{lid}" name="x{lid}" type="Parameter" version="opset1"><data shape="" '
                  f'element_type="{et}"/><output>{_port(0, prec, dims)}</output></layer>')
    src, src_port = lid, 0
    for op in draw(st.sampled_from([[], ["Multiply"], ["Add"], ["Multiply", "Add"]])):
        c = const()
        lid += 1
        layers.append(f'<layer id="{lid}" name="s{lid}" type="{op}" version="opset1"><input>{_port(0, prec, dims)}'
                      f'{_port(1, prec, [])}</input><output>{_port(2, prec, dims)}</output></layer>')
        edges += [(src, src_port, lid, 0), (c, 0, lid, 1)]
        src, src_port = lid, 2
    if draw(st.booleans()):
        lid += 1
        layers.append(f'<layer id="{lid}" name="clamp{lid}" type="Clamp" version="opset1"><data '
                      f'min="{draw(NUMBER)}" max="{draw(NUMBER)}"/><input>{_port(0, prec, dims)}</input><output>'
                      f'{_port(1, prec, dims)}</output></layer>')
        edges.append((src, src_port, lid, 0))
    else:
        for op in draw(st.sampled_from([["Maximum", "Minimum"], ["Minimum", "Maximum"]])):
            c = const()
            lid += 1
            layers.append(f'<layer id="{lid}" name="m{lid}" type="{op}" version="opset1"><input>'
                          f'{_port(0, prec, dims)}{_port(1, prec, [])}</input><output>{_port(2, prec, dims)}'
                          f'</output></layer>')
            edges += [(src, src_port, lid, 0), (c, 0, lid, 1)]
            src, src_port = lid, 2
    if depth > 0 and draw(st.booleans()):
        inner_layers, inner_edges = draw(_ir_layers(depth - 1, lid + 1))
        lid += 100
        layers.append(f'<layer id="{lid}" name="ti{lid}" type="TensorIterator" version="opset1"><body>'
                      f'<layers>{inner_layers}</layers><edges>{inner_edges}</edges></body></layer>')
    if draw(st.integers(0, 3)) == 0:  # an edge to anywhere: unknown layers, ports, or a cycle
        edges.append((draw(st.integers(base - 1, lid + 1)), draw(st.integers(-1, 3)),
                      draw(st.integers(base - 1, lid + 1)), draw(st.integers(-1, 3))))
    edge_xml = "".join(f'<edge from-layer="{a}" from-port="{b}" to-layer="{c}" to-port="{d}"/>'
                       for a, b, c, d in edges)
    return "".join(layers), edge_xml


@st.composite
def ir_models(draw) -> tuple[bytes, bytes | None]:
    """(IR XML, .bin or None), the XML often mutated."""
    layers, edges = draw(_ir_layers(draw(st.integers(0, 3)), 0))
    version = draw(st.sampled_from(["11", "11", "10", "7"]))
    xml = (f'<?xml version="1.0"?><net name="g" version="{version}"><layers>{layers}</layers>'
           f"<edges>{edges}</edges></net>")
    weights = draw(st.one_of(st.none(), st.binary(max_size=64)))
    return draw(mutated(xml.encode())), weights


# --- .npy headers, versions 1, 2 and 3 ------------------------------------------------------------------------

DESCRS = ["'<f4'", "'<f8'", "'<f2'", "'|i1'", "'<i8'", "'<u8'", "'|b1'", "'>f4'", "'|O'", "'<U3'", "'|V2'",
          "[('a', '<f4')]", "('<f4', (2,))", "'<c8'", "'f4'", "1", "'<m8[s]'", "'é'"]
SHAPE_ENTRIES = st.sampled_from(["0", "1", "2", "3", "True", "False", "-1", "2**40", str(2**64), "1.0", "'1'",
                                 "None", "(1,)"])


@st.composite
def npy_bodies(draw) -> tuple[str, bytes]:
    """(dtype name for the spec, .npy bytes): a header dict of drawn fields, a version, padding, a data part."""
    descr = draw(st.sampled_from(DESCRS))
    fortran = draw(st.sampled_from(["False", "True", "0", "None"]))
    entries = draw(st.lists(SHAPE_ENTRIES, max_size=3))
    shape = "(" + "".join(f"{e}, " for e in entries) + ")"
    keys = [f"'descr': {descr}", f"'fortran_order': {fortran}", f"'shape': {shape}"]
    if draw(st.integers(0, 9)) == 0:
        keys.append("'extra': 1")
    if draw(st.integers(0, 9)) == 0:
        keys.pop(draw(st.integers(0, 2)))
    version = draw(st.sampled_from([1, 2, 3, 3]))
    text = ("{" + ", ".join(keys) + ", }").encode("utf-8" if version == 3 else "latin-1", "replace")
    if version == 3 and draw(st.booleans()):
        text += draw(st.sampled_from([" é".encode(), b" \xff", b" \xc3", "  ☃".encode()]))
    pad = (64 - (8 + (2 if version == 1 else 4) + len(text) + 1) % 64) % 64
    text += b" " * pad + b"\n"
    length = struct.pack("<H" if version == 1 else "<I", len(text))
    if draw(st.integers(0, 9)) == 0:
        length = struct.pack("<H" if version == 1 else "<I", draw(st.integers(0, 2**16 - 1)))
    data = draw(st.one_of(st.binary(max_size=48), st.just(bytes(4 * 6))))
    body = b"\x93NUMPY" + bytes([version, 0]) + length + text + data
    spec_dtype = draw(st.sampled_from(["FLOAT", "DOUBLE", "FLOAT16", "INT8", "INT64", "UINT64", "BFLOAT16"]))
    return spec_dtype, draw(mutated(body))


def npy_url(elem_type: str) -> str:
    spec = {"dialect": "onnx", "opset": 13, "elem_type": elem_type, "min": 0, "max": 6}
    return "/v1/execute.npy?request=" + urllib.parse.quote(json.dumps({"spec": spec}))


# --- multipart bodies for /v1/models/inspect --------------------------------------------------------------

@st.composite
def multipart_bodies(draw) -> tuple[bytes, str]:
    """(body, content-type): parts named model/weights/data (issue 46: a model's external data)/other, with drawn
    filenames and types, then mutated."""
    boundary = draw(st.sampled_from(["b0undary", "x" * 70, "a b", "=", "-"]))
    parts = []
    for _ in range(draw(st.integers(0, 3))):
        name = draw(st.sampled_from(["model", "weights", "x", "model", "", 'mo"del', "data"]))
        filename = draw(st.sampled_from(["m.onnx", "m.xml", "m.bin", "", "../../x", "a\x00b", None, "m.onnx.data"]))
        ctype = draw(st.sampled_from(["application/octet-stream", "text/xml", "", "multipart/mixed"]))
        payload = draw(st.one_of(st.binary(max_size=64), onnx_models(), ir_models().map(lambda t: t[0])))
        head = f'Content-Disposition: form-data; name="{name}"' + (
            f'; filename="{filename}"' if filename is not None else "")
        if ctype:
            head += f"\r\nContent-Type: {ctype}"
        parts.append(f"--{boundary}\r\n{head}\r\n\r\n".encode("utf-8", "replace") + payload + b"\r\n")
    body = b"".join(parts) + f"--{boundary}--\r\n".encode()
    ctype = draw(st.sampled_from([f"multipart/form-data; boundary={boundary}", "multipart/form-data",
                                  f'multipart/form-data; boundary="{boundary}"']))
    return draw(mutated(body)), ctype


# --- JSON specs for /v1/translate ---------------------------------------------------------------------------

@st.composite
def translate_bodies(draw) -> dict[str, Any]:
    """A translate request whose source is a generated model, a generated IR, or a compact spec."""
    form = draw(st.sampled_from(["model", "ir", "compact"]))
    if form == "model":
        source: dict[str, Any] = {"dialect": "onnx", "model": base64.b64encode(draw(onnx_models())).decode()}
        if draw(st.booleans()):
            source["node"] = draw(st.one_of(st.integers(-2, 5), st.sampled_from(["clip", "t_clip", "", "x"])))
    elif form == "ir":
        xml, _ = draw(ir_models())
        source = {"dialect": "openvino", "ir_xml": xml.decode("latin-1")}
        if draw(st.booleans()):
            source["layer"] = draw(st.one_of(st.integers(-1, 9), st.sampled_from(["clamp1", "", "x"])))
    else:
        dialect = draw(st.sampled_from(["onnx", "openvino", "directml"]))
        number = st.one_of(st.integers(-(2**70), 2**70), st.floats(allow_nan=False, allow_infinity=False), NUMBER,
                           st.none())
        if dialect == "onnx":
            source = {"dialect": "onnx", "opset": draw(st.sampled_from([1, 6, 11, 13, 99])),
                      "elem_type": draw(st.sampled_from(["FLOAT", "INT8", "UINT64", "BFLOAT16", "STRING"])),
                      "min": draw(number), "max": draw(number)}
        elif dialect == "openvino":
            source = {"dialect": "openvino", "element_type": draw(st.sampled_from(["f32", "i8", "u64", "boolean"])),
                      "min": draw(number), "max": draw(number)}
        else:
            source = {"dialect": "directml", "feature_level": draw(st.sampled_from(["5_0", "6_4", "1_0"])),
                      "Min": draw(number), "Max": draw(number)}
        if draw(st.booleans()):
            source["shape"] = draw(st.lists(st.one_of(st.integers(-1, 2**63), st.none(), st.text(max_size=2)),
                                            max_size=3))
    targets = draw(st.lists(st.sampled_from(["onnx", "openvino", "directml", {"dialect": "onnx", "opset": 6},
                                             {"dialect": "directml", "feature_level": "5_0"}]), max_size=3))
    return {"source": source, "targets": targets, "mode": draw(st.sampled_from(["preserve", "literal"]))}


# --- every registered dialect's spec, valid then mutated ------------------------------------------------------

HOSTILE_SCALARS = st.one_of(
    st.integers(min_value=-(2 ** 70), max_value=2 ** 70),
    st.floats(allow_nan=False, allow_infinity=False),  # JSON has no NaN literal: those come as strings below
    st.sampled_from(["nan", "-nan", "inf", "-inf", "1e400", "-1e400", "0x1p-149", "-0", "123n", "-9007199254740993n",
                     "9" * 400, "", " ", "1_000", "0x", "ÿ", "\u0000", "1e-400", "18446744073709551616"]),
    st.booleans(), st.none(), st.text(max_size=20),
)


def _nested(depth: int):
    if depth == 0:
        return HOSTILE_SCALARS
    return st.one_of(HOSTILE_SCALARS, st.lists(_nested(depth - 1), max_size=4),
                     st.dictionaries(st.text(max_size=8), HOSTILE_SCALARS, max_size=3))


HOSTILE_VALUES = _nested(3)
# Plausible bounds, so that about half the mutated specs still resolve and reach emit, drift and the kernels.
BENIGN_VALUES = st.one_of(st.integers(-300, 300), st.floats(-1e5, 1e5, allow_nan=False),
                          st.sampled_from(["nan", "inf", "-inf", "-0", 65504, 65520, 2 ** 31, -(2 ** 63), 2 ** 64 - 1]))


@st.composite
def dialect_specs(draw) -> dict[str, Any]:
    """A registered dialect's example spec (from Dialect.examples), then 0 to 3 mutations: a field set to a
    hostile value (numbers, numeric strings, nested lists, wrong types), a field dropped, or a field added."""
    from clipbridge.dialects import registry
    from tests.dialects.test_registry import EXAMPLES
    pool = [spec for d in registry.DIALECTS.values() for spec in d.examples.values()]
    pool += [spec for spec, _ in EXAMPLES.values()]
    spec = dict(draw(st.sampled_from(pool)))
    model = registry.DIALECTS[spec["dialect"]].spec_model
    fields = sorted(set(model.model_fields) - {"dialect"})
    for _ in range(draw(st.integers(0, 3))):
        how = draw(st.sampled_from(["benign", "benign", "set", "set", "drop", "add"]))
        if how in ("set", "benign") and fields:
            spec[draw(st.sampled_from(fields))] = draw(HOSTILE_VALUES if how == "set" else BENIGN_VALUES)
        elif how == "drop" and len(spec) > 1:
            spec.pop(draw(st.sampled_from(sorted(k for k in spec if k != "dialect"))), None)
        elif how == "add":
            spec[draw(st.text(min_size=1, max_size=10))] = draw(HOSTILE_VALUES)
    return spec
