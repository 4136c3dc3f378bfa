"""The pydantic pieces every dialect's wire spec is built from (numbers, shapes, the strict base model) and the
spec models of DirectML (ONNX's and OpenVINO's are in their packages: app/dialects/onnx/spec.py,
app/dialects/openvino/spec.py).

Dialect modules import from here, never from app/service/specs.py: app/service/specs.py builds the unions over the registry, and
the registry imports the dialects. Anything in app/ may import this module; it imports only app.core.errors and
app.core.numbers."""

from __future__ import annotations

from fractions import Fraction
from typing import Annotated, Any, Literal, Union

from pydantic import (AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer, StrictInt,
                      StringConstraints, WithJsonSchema, field_validator, model_validator)
from pydantic_core import PydanticCustomError

from app.core.errors import SpecError

from app.core.numbers import MAX_NUMBER_STRING, parse_number, wire_number

def _parse_wire(value: Any) -> int | float | Fraction:
    """One validator for every wire number, so a bad value yields one clear error, not a union's three."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str, Fraction)):
        raise PydanticCustomError("number", "Expected a number or a numeric string such as 'nan', '-inf', "
                                            "'9223372036854775807', '0x1.8p+1'; got {kind}",
                                  {"kind": type(value).__name__})
    try:
        return parse_number(value)
    except SpecError as exc:
        raise PydanticCustomError("number", "{msg}", {"msg": exc.message}) from None


WireNumber = Annotated[
    Any,
    BeforeValidator(_parse_wire),
    PlainSerializer(wire_number, return_type=Union[int, float, str, None]),
    WithJsonSchema({"anyOf": [{"type": "number"}, {"type": "string", "maxLength": MAX_NUMBER_STRING}],
                    "description": "A JSON number, or a string: 'nan', 'inf', '-inf', a decimal integer "
                                   "('9223372036854775807') or a float literal ('0x1.8p+1')."}),
]
Dim = Union[Annotated[StrictInt, Field(ge=0, le=2**63 - 1)], None, Annotated[str, StringConstraints(max_length=64)]]
MAX_ELEMENTS = 2**63 - 1  # no framework indexes a tensor with more elements than int64 holds


def _shape_fits(shape: list) -> list:
    count = 1
    for d in shape:
        if isinstance(d, int):
            count *= d
    if count > MAX_ELEMENTS:
        raise ValueError(f"the shape has {count} elements; at most 2^63-1 fit a tensor's int64 element count")
    return shape


Shape = Annotated[list[Dim], Field(max_length=64), AfterValidator(_shape_fits)]
B64 = Annotated[str, StringConstraints(max_length=64 * 1024 * 1024)]
XmlText = Annotated[str, StringConstraints(max_length=16 * 1024 * 1024)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


def _field_rule(name: str, message: str) -> PydanticCustomError:
    """A model-level rule about one field: `field` in the context lets app/service/field_errors.py name it in `loc`."""
    return PydanticCustomError("spec_form", message.replace("{", "{{").replace("}", "}}"), {"field": name})


def _strip(prefix: str) -> AfterValidator:
    def strip(value: str) -> str:
        value = value.strip()
        return value[len(prefix):] if value.upper().startswith(prefix) else value
    return AfterValidator(strip)


DmlEnum = Annotated[str, StringConstraints(max_length=64)]


class DmlTensorDesc(_Strict):
    """DML_BUFFER_TENSOR_DESC."""

    DataType: Annotated[DmlEnum, _strip("DML_TENSOR_DATA_TYPE_")]
    Flags: Annotated[DmlEnum, _strip("DML_TENSOR_FLAG_")] = "NONE"
    DimensionCount: Annotated[StrictInt, Field(ge=0, le=64)] | None = None
    Sizes: Annotated[list[StrictInt], Field(max_length=64)]
    Strides: Annotated[list[StrictInt], Field(max_length=64)] | None = None
    TotalTensorSizeInBytes: Annotated[StrictInt, Field(ge=0)] | None = None
    GuaranteedBaseOffsetAlignment: Annotated[StrictInt, Field(ge=0)] = 0


class DmlScaleBias(_Strict):
    Scale: WireNumber = 1.0
    Bias: WireNumber = 0.0


class DmlClipDesc(_Strict):
    """DML_ELEMENT_WISE_CLIP_OPERATOR_DESC / DML_ELEMENT_WISE_CLIP1_OPERATOR_DESC."""

    InputTensor: DmlTensorDesc
    OutputTensor: DmlTensorDesc
    ScaleBias: DmlScaleBias | None = None
    MinMaxDataType: Annotated[DmlEnum, _strip("DML_TENSOR_DATA_TYPE_")] | None = None
    Min: WireNumber
    Max: WireNumber


class DirectMLSpec(_Strict):
    dialect: Literal["directml"]
    feature_level: Annotated[DmlEnum, _strip("DML_FEATURE_LEVEL_")] = "6_4"
    operator: Annotated[DmlEnum, _strip("DML_OPERATOR_")] = "ELEMENT_WISE_CLIP"
    desc: DmlClipDesc

    @field_validator("operator")
    @classmethod
    def _operator(cls, value: str) -> str:
        if value.upper() not in ("ELEMENT_WISE_CLIP", "ELEMENT_WISE_CLIP1"):
            raise ValueError("operator must be ELEMENT_WISE_CLIP or ELEMENT_WISE_CLIP1")
        return value.upper()



class DirectMLTarget(_Strict):
    dialect: Literal["directml"]
    feature_level: Annotated[DmlEnum, _strip("DML_FEATURE_LEVEL_")] | None = None


def spec_json(spec: BaseModel) -> dict[str, Any]:
    """A spec as wire JSON, without fields left unset."""
    return spec.model_dump(mode="json", exclude_none=True)
