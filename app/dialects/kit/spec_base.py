"""The pydantic pieces every dialect's wire spec is built from (numbers, shapes, the strict base model) and the
spec models of ONNX and OpenVINO.

Dialect modules import from here, never from app/service/specs.py: app/service/specs.py builds the unions over the registry, and
the registry imports the dialects. Anything in app/ may import this module; it imports only app.core.errors and
app.core.numbers."""

from __future__ import annotations

from fractions import Fraction
from typing import Annotated, Any, Literal, Union

from pydantic import (AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer, StrictInt,
                      StringConstraints, WithJsonSchema, model_validator)
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


class OnnxSpec(_Strict):
    """ONNX Clip: compact (`opset`, `elem_type`, `min`, `max`) or a whole model (`model`, `node`)."""

    dialect: Literal["onnx"]
    opset: Annotated[StrictInt, Field(ge=1, le=1000)] | None = None
    elem_type: Annotated[str, StringConstraints(max_length=32)] | None = None
    shape: Shape | None = None
    min: WireNumber | None = None
    max: WireNumber | None = None
    model: B64 | None = Field(default=None, description="base64 ModelProto bytes")
    node: Annotated[str, StringConstraints(max_length=1024)] | Annotated[StrictInt, Field(ge=0)] | None = None

    @model_validator(mode="after")
    def _one_form(self) -> "OnnxSpec":
        if self.model is not None:
            extra = [k for k in ("opset", "elem_type", "shape", "min", "max") if getattr(self, k) is not None]
            if extra:
                raise _field_rule(extra[0], "the model form takes only 'model' and 'node'; remove "
                                  + ", ".join(extra))
        else:
            missing = [k for k in ("opset", "elem_type") if getattr(self, k) is None]
            if missing:
                raise _field_rule(missing[0], f"the compact form needs {' and '.join(missing)} (or give 'model')")
            if self.node is not None:
                raise _field_rule("node", "'node' goes with 'model'")
        return self


class OpenVinoSpec(_Strict):
    """OpenVINO Clamp-1: compact (`element_type`, `min`, `max`) or IR v11 XML (`ir_xml`, `layer`)."""

    dialect: Literal["openvino"]
    version: Annotated[str, StringConstraints(max_length=16)] = "opset1"
    element_type: Annotated[str, StringConstraints(max_length=16)] | None = None
    shape: Shape | None = None
    min: WireNumber | None = None
    max: WireNumber | None = None
    ir_xml: XmlText | None = None
    layer: Annotated[str, StringConstraints(max_length=1024)] | Annotated[StrictInt, Field(ge=0)] | None = None

    @model_validator(mode="after")
    def _one_form(self) -> "OpenVinoSpec":
        if self.ir_xml is not None:
            extra = [k for k in ("element_type", "shape", "min", "max") if getattr(self, k) is not None]
            if extra:
                raise _field_rule(extra[0], "the IR form takes only 'ir_xml' and 'layer'; remove " + ", ".join(extra))
        else:
            missing = [k for k in ("element_type", "min", "max") if getattr(self, k) is None]
            if missing:
                raise _field_rule(missing[0], f"Clamp-1 requires {' and '.join(missing)} "
                                               "(attributes with no default)")
            if self.layer is not None:
                raise _field_rule("layer", "'layer' goes with 'ir_xml'")
        return self


class OnnxTarget(_Strict):
    dialect: Literal["onnx"]
    opset: Annotated[StrictInt, Field(ge=1, le=1000)] | None = None


class OpenVinoTarget(_Strict):
    dialect: Literal["openvino"]
    version: Annotated[str, StringConstraints(max_length=16)] | None = None


def spec_json(spec: BaseModel) -> dict[str, Any]:
    """A spec as wire JSON, without fields left unset."""
    return spec.model_dump(mode="json", exclude_none=True)
