"""A TensorProto's values, checked before anything is allocated: the dims must agree with the data that
arrived, in the one field the data type stores its values in. `numpy_helper.to_array` only runs after that,
so a declared size never allocates memory the upload did not bring."""

from __future__ import annotations

import numpy as np
from google.protobuf.message import Message
import onnx
from onnx import TensorProto, helper, numpy_helper

from clipbridge.core.errors import ArtifactError

# One value per element in the typed field (or itemsize bytes in raw_data). Strings, complex numbers and the
# packed sub-byte types (2, 4 and 6 bits) are never a clip's bound: they are refused by name, not decoded.
READABLE = frozenset({
    TensorProto.FLOAT, TensorProto.UINT8, TensorProto.INT8, TensorProto.UINT16, TensorProto.INT16,
    TensorProto.INT32, TensorProto.INT64, TensorProto.BOOL, TensorProto.FLOAT16, TensorProto.DOUBLE,
    TensorProto.UINT32, TensorProto.UINT64, TensorProto.BFLOAT16, TensorProto.FLOAT8E4M3FN,
    TensorProto.FLOAT8E4M3FNUZ, TensorProto.FLOAT8E5M2, TensorProto.FLOAT8E5M2FNUZ,
})
INDEXABLE = 2**62  # bytes: NumPy needs the product of the dims (zeros aside) times the itemsize to fit in intp
FIELDS = ("float_data", "int32_data", "int64_data", "uint64_data", "double_data", "string_data")


def type_name(code: int) -> str:
    return TensorProto.DataType.Name(code) if code in TensorProto.DataType.values() else f"#{code}"


def readable(t: TensorProto) -> bool:
    """A tensor whose values can be numbers of a clip: a real numeric or boolean data type."""
    return t.data_type in READABLE


def element_count(t: TensorProto, what: str, loc: str) -> int:
    """The product of the dims (TensorProto.dims: each a non-negative size; an empty list is a scalar), refused
    when NumPy could not shape it: the dims' product, zeros aside, times the element size past INDEXABLE."""
    itemsize = helper.tensor_dtype_to_np_dtype(t.data_type).itemsize if readable(t) else 1
    count = nonzero = 1
    for i, d in enumerate(t.dims):
        if d < 0:
            raise ArtifactError(f"{what}: dims[{i}] = {d} is negative", loc)
        count *= d
        nonzero *= max(d, 1)
    if nonzero * itemsize > INDEXABLE:  # even with a 0 among them: NumPy refuses it ("array is too big")
        raise ArtifactError(f"{what}: dims {_dims(t)} describe more elements than an array can index", loc)
    return count


def tensor_values(t: TensorProto, what: str, loc: str = "model") -> np.ndarray:
    """The tensor as an array, after checking its type, dims and data field (ONNX IR: 'the data is stored in
    raw_data, or in the one typed field the data type names, with exactly as many values as dims say')."""
    if t.data_location == TensorProto.EXTERNAL:
        raise ArtifactError(f"{what} keeps its data in an external file; external data is never read", loc)
    if not readable(t):
        raise ArtifactError(f"{what} has data type {type_name(t.data_type)}, which is not a number a clip can "
                            "use (strings, complex and packed sub-byte types are not read)", loc)
    if t.HasField("segment"):
        raise ArtifactError(f"{what} is a segment of a larger tensor (TensorProto.segment), which is not read",
                            loc)
    count = element_count(t, what, loc)
    field = helper.tensor_dtype_to_field(t.data_type)
    stray = [f for f in FIELDS if f != field and len(getattr(t, f))]
    if t.HasField("raw_data") and len(getattr(t, field)):
        stray.append(field)
    if stray:  # data in a field this type does not read: checked first, so the message names that field
        raise ArtifactError(f"{what}: {', '.join(stray)} must be empty for a {type_name(t.data_type)} tensor "
                            f"(its values go in {'raw_data' if t.HasField('raw_data') else field})", loc)
    if t.HasField("raw_data"):
        need = count * helper.tensor_dtype_to_np_dtype(t.data_type).itemsize
        if len(t.raw_data) != need:
            raise ArtifactError(f"{what}: raw_data has {len(t.raw_data)} bytes; dims {_dims(t)} of "
                                f"{type_name(t.data_type)} need {need}", loc)
    elif len(getattr(t, field)) != count:
        raise ArtifactError(f"{what}: {field} has {len(getattr(t, field))} values; dims {_dims(t)} need {count}",
                            loc)
    return numpy_helper.to_array(t)


def _dims(t: TensorProto) -> str:
    text = str(list(t.dims))
    return text if len(text) <= 80 else text[:77] + "...]"


def check_strings(model: Message, loc: str = "model") -> None:
    """Every string field of the model is UTF-8 text. onnx.proto is proto2, so protobuf parses a name with
    invalid UTF-8 and hands it back as bytes, which no later step (names, JSON reports) expects."""
    stack: list[Message] = [model]
    while stack:
        msg = stack.pop()
        for fd, value in msg.ListFields():
            values = value if fd.is_repeated else (value,)
            if fd.type == fd.TYPE_STRING:
                if any(isinstance(v, bytes) for v in values):
                    raise ArtifactError(f"the model's {fd.full_name.removeprefix('onnx.')} is not UTF-8 text", loc)
            elif fd.type == fd.TYPE_MESSAGE:
                stack.extend(values)


# Constant-13's numeric value attributes and the one attribute type each must have (ONNX Operators.md, Constant).
CONSTANT_ATTRS = {"value": onnx.AttributeProto.TENSOR, "value_float": onnx.AttributeProto.FLOAT,
                  "value_floats": onnx.AttributeProto.FLOATS, "value_int": onnx.AttributeProto.INT,
                  "value_ints": onnx.AttributeProto.INTS}


def constant_attribute(node: onnx.NodeProto, loc: str = "model") -> onnx.AttributeProto | None:
    """A Constant node's numeric value attribute, or None when it has none (sparse_value, strings).

    An attribute whose type is not the one its name requires is refused: reading it anyway would silently turn a
    bound into an empty tensor or drop it (a bound read as absent changes the clip)."""
    names = onnx.AttributeProto.AttributeType
    for a in node.attribute:
        want = CONSTANT_ATTRS.get(a.name)
        if want is None:
            continue
        if a.type != want:
            got = names.Name(a.type) if a.type in names.values() else str(a.type)
            raise ArtifactError(f"Constant node {node.name[:64]!r}: attribute {a.name} must be of type "
                                f"{names.Name(want)}. Got: {got}", loc)
        return a
    return None
