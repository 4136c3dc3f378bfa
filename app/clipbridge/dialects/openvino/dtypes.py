"""OpenVINO's names for clipbridge's element types: the `element_type` strings of the compact spec and of IR
Parameter/Const/Convert layers (f32, i8, ...), and the port `precision` strings (FP32, I8, ...).

The one place these names live (clipbridge.core.dtypes keeps only the dialect-neutral facts); scan and the engines read
them from here."""

from __future__ import annotations

from clipbridge.core.dtypes import ALL, DType

# clipbridge dtype name -> OpenVINO element_type (every dtype has one: a missing name fails at import).
_ELEMENT_TYPES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64", "int8": "i8",
                  "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8", "uint16": "u16", "uint32": "u32",
                  "uint64": "u64"}
BY_ELEMENT_TYPE: dict[str, DType] = {_ELEMENT_TYPES[d.name]: d for d in ALL}
# IR port precision of each element type (IR v10/v11 write both; a port carries only the precision).
PRECISION = {"f32": "FP32", "f16": "FP16", "bf16": "BF16", "f64": "FP64", "i8": "I8", "i16": "I16", "i32": "I32",
             "i64": "I64", "u8": "U8", "u16": "U16", "u32": "U32", "u64": "U64"}
FROM_PRECISION = {v: k for k, v in PRECISION.items()}


def element_type_name(dt: DType) -> str:
    """The OpenVINO element_type of `dt` ('f32', 'bf16', 'u64', ...)."""
    return _ELEMENT_TYPES[dt.name]


def by_element_type(name: str) -> DType | None:
    """The dtype of an OpenVINO element_type (exact, lower case as IR writes it), or None."""
    return BY_ELEMENT_TYPE.get(name)

