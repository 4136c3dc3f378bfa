"""DirectML's names for the element types (DML_TENSOR_DATA_TYPE_*, without the prefix): the one table, so core's
DType needs no DirectML column."""

from __future__ import annotations

from clipbridge.core.dtypes import (FLOAT16, FLOAT32, FLOAT64, INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64,
                             DType)

# DML_TENSOR_DATA_TYPE: bfloat16 has no DirectML name.
DML_NAMES: dict[DType, str] = {
    FLOAT32: "FLOAT32", FLOAT16: "FLOAT16", FLOAT64: "FLOAT64", INT8: "INT8", INT16: "INT16", INT32: "INT32",
    INT64: "INT64", UINT8: "UINT8", UINT16: "UINT16", UINT32: "UINT32", UINT64: "UINT64",
}
BY_DML_NAME: dict[str, DType] = {name: dt for dt, name in DML_NAMES.items()}


def dml_name(dt: DType) -> str | None:
    """The DML_TENSOR_DATA_TYPE name of `dt` (None: DirectML has no such type)."""
    return DML_NAMES.get(dt)


def by_dml_name(name: str) -> DType:
    """The DType a DML_TENSOR_DATA_TYPE name (upper case, no prefix) stands for (KeyError when none)."""
    return BY_DML_NAME[name]
