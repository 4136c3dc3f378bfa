"""Small models for the scan tests, built with onnx.helper (and openvino for IR), plus wire-level encoders
for the malformed ones protobuf itself would refuse to build."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from clipbridge.scan.wire import encode_varint, length_delimited

F32, F16, BF16 = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16
I8, U8, I32, I64 = TensorProto.INT8, TensorProto.UINT8, TensorProto.INT32, TensorProto.INT64
IR_FOR_ORT = 8  # onnxruntime 1.31 reads IR <= 13; 8 carries every opset used here


def vi(name: str, elem: int = F32, shape: list | None = (4,)) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, None if shape is None else list(shape))


def init(name: str, value, dtype) -> TensorProto:
    return numpy_helper.from_array(np.array(value, dtype=dtype), name)


def model(nodes, inits=(), opset: int = 13, elem: int = F32, shape=(4,), inputs=None, outputs=None,
          value_info=(), functions=(), ir_version: int = IR_FOR_ORT, extra_opsets=()) -> onnx.ModelProto:
    """x -> ... -> y, both of `elem` and `shape`, unless inputs/outputs are given."""
    inputs = [vi("x", elem, shape)] if inputs is None else list(inputs)
    outputs = [vi("y", elem, shape)] if outputs is None else list(outputs)
    g = helper.make_graph(list(nodes), "g", inputs, outputs, list(inits), value_info=list(value_info))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset), *extra_opsets],
                             functions=list(functions), ir_version=ir_version, producer_name="clipbridge-tests")


def clip_model(opset: int, elem: int, lo=None, hi=None, np_dtype=None, name: str = "clip", shape=(4,)):
    """One Clip: attributes at opset < 11, scalar initializers of the tensor type at 11+."""
    if opset < 11:
        attrs = {k: float(v) for k, v in (("min", lo), ("max", hi)) if v is not None}
        return model([helper.make_node("Clip", ["x"], ["y"], name=name, **attrs)], opset=opset, elem=elem,
                     shape=shape)
    inits, ins = [], ["x"]
    for side, v in (("lo", lo), ("hi", hi)):
        if v is None:
            ins.append("")
        else:
            inits.append(init(side, v, np_dtype))
            ins.append(side)
    while ins[-1] == "":
        ins.pop()
    return model([helper.make_node("Clip", ins, ["y"], name=name)], inits, opset=opset, elem=elem, shape=shape)


def minmax_model(outer: str, a, b, np_dtype, elem: int, opset: int = 13) -> onnx.ModelProto:
    """Min(Max(x, a), b) (outer='Min') or Max(Min(x, b), a) (outer='Max'), a and b scalar initializers."""
    inner = "Max" if outer == "Min" else "Min"
    inner_bound, outer_bound = ("a", "b") if outer == "Min" else ("b", "a")
    nodes = [helper.make_node(inner, ["x", inner_bound], ["t"], name="inner"),
             helper.make_node(outer, ["t", outer_bound], ["y"], name="outer")]
    return model(nodes, [init("a", a, np_dtype), init("b", b, np_dtype)], opset=opset, elem=elem, shape=[None])


def external_tensor(name: str, location: str, elem: int = F32, dims=()) -> TensorProto:
    """A tensor whose data is declared to live in another file (never to be opened by the scan)."""
    t = TensorProto(name=name, data_type=elem, dims=list(dims), data_location=TensorProto.EXTERNAL)
    for k, v in (("location", location), ("offset", "0"), ("length", "4")):
        e = t.external_data.add()
        e.key, e.value = k, v
    return t


def external_bound_model(location: str) -> onnx.ModelProto:
    """Clip-13 whose min is a scalar stored 'externally' at `location`; max is inline."""
    return model([helper.make_node("Clip", ["x", "lo", "hi"], ["y"], name="clip")],
                 [external_tensor("lo", location), init("hi", 6, np.float32)])


def cyclic_model() -> onnx.ModelProto:
    """a = Relu(b); b = Relu(a); y = Clip(b): a cycle protobuf and onnx.helper happily build."""
    nodes = [helper.make_node("Relu", ["b"], ["a"], name="ra"), helper.make_node("Relu", ["a"], ["b"], name="rb"),
             helper.make_node("Clip", ["b", "lo", "hi"], ["y"], name="clip")]
    return model(nodes, [init("lo", 0, np.float32), init("hi", 6, np.float32)])


def relu6_f32() -> onnx.ModelProto:
    return clip_model(13, F32, 0, 6, np.float32)


# --- the wire format, for bytes protobuf would not build -----------------------------------------------------

# The app's encoder writes the framing; what these bytes test is the decoder's handling of them.
varint = encode_varint
field = length_delimited


def nested_if_model(levels: int, pad: int = 0) -> bytes:
    """A ModelProto `levels` Ifs deep (then_branch inside then_branch ...), encoded by hand: protobuf refuses
    to build (and to parse) messages nested past its recursion limit. `pad` bytes of doc_string in the
    innermost graph make every enclosing node large enough for the wire walk to descend into it."""
    g = (field(1, helper.make_node("Relu", ["x"], ["o"], name="deep").SerializeToString())
         + field(2, b"inner") + (field(10, b"d" * pad) if pad else b""))
    for i in range(levels):
        attr = field(1, b"then_branch") + varint(20 << 3) + varint(onnx.AttributeProto.GRAPH) + field(6, g)
        node = field(1, b"c") + field(2, b"o") + field(3, f"if{i}".encode()) + field(4, b"If") + field(5, attr)
        g = field(1, node) + field(2, f"g{i}".encode())
    main = onnx.GraphProto()
    main.ParseFromString(field(2, b"main"))
    head = helper.make_model(main, opset_imports=[helper.make_opsetid("", 13)], ir_version=IR_FOR_ORT)
    head.ClearField("graph")
    return head.SerializeToString() + field(7, g)


def write(path: Path, m: onnx.ModelProto | bytes) -> Path:
    path.write_bytes(m if isinstance(m, bytes) else m.SerializeToString())
    return path
