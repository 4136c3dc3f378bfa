"""ONNX's names for clipbridge's element types (TensorProto.DataType names) and their elem_type codes.

The one place ONNX's type names live: the spec's `elem_type`, the models built and read, and the scan of a model
all read them here (onnx.proto, `enum DataType`)."""

from __future__ import annotations

from onnx import TensorProto

from clipbridge.core.dtypes import ALL, DType
from clipbridge.core.errors import SpecError

# clipbridge's dtype name -> its TensorProto.DataType name
NAMES: dict[str, str] = {
    "float32": "FLOAT", "float16": "FLOAT16", "bfloat16": "BFLOAT16", "float64": "DOUBLE",
    "int8": "INT8", "int16": "INT16", "int32": "INT32", "int64": "INT64",
    "uint8": "UINT8", "uint16": "UINT16", "uint32": "UINT32", "uint64": "UINT64",
}
BY_ONNX_NAME: dict[str, DType] = {NAMES[d.name]: d for d in ALL}  # in ALL's order (error messages list it)


def onnx_name(dt: DType) -> str:
    """The TensorProto.DataType name of `dt` ("FLOAT", "DOUBLE", "INT8", ...)."""
    return NAMES[dt.name]


def by_onnx_name(name: str) -> DType | None:
    """The dtype an ONNX type name (as spelled in TensorProto.DataType) stands for; None when Clip has none."""
    return BY_ONNX_NAME.get(name)


def elem_type(dt: DType) -> int:
    """The TensorProto.DataType code of `dt` (a ValueInfo's elem_type, a TensorProto's data_type)."""
    return int(TensorProto.DataType.Value(onnx_name(dt)))


def from_elem_type(code: int, loc: str | None = None) -> DType:
    """The dtype of an elem_type code; SpecError for a type Clip has no meaning for (strings, bool, float8...)."""
    name = TensorProto.DataType.Name(code) if code in TensorProto.DataType.values() else str(code)
    if name not in BY_ONNX_NAME:
        raise SpecError(f"Clip has no meaning for element type {name}", loc)
    return BY_ONNX_NAME[name]
