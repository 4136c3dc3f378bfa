"""The pydantic pieces every dialect's wire spec is built from (numbers, shapes, the strict base model); each
dialect's own spec models live in its package (app/clipbridge/dialects/<name>/spec.py).

Dialect modules import from here, never from clipbridge/service/specs.py: app/clipbridge/service/specs.py builds the unions over the registry, and
the registry imports the dialects. Anything in app/ may import this module; it imports only clipbridge.core.errors and
clipbridge.core.numbers."""

from __future__ import annotations

from fractions import Fraction
from typing import Annotated, Any, Union

from pydantic import (AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer, StrictInt,
                      StringConstraints, WithJsonSchema)
from pydantic_core import PydanticCustomError

from clipbridge.core.errors import SpecError

from clipbridge.core.numbers import MAX_NUMBER_STRING, parse_number, wire_number

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
    """A model-level rule about one field: `field` in the context lets app/clipbridge/service/field_errors.py name it in `loc`."""
    return PydanticCustomError("spec_form", message.replace("{", "{{").replace("}", "}}"), {"field": name})


def spec_json(spec: BaseModel) -> dict[str, Any]:
    """A spec as wire JSON, without fields left unset."""
    return spec.model_dump(mode="json", exclude_none=True)
