"""OpenVINO's wire models: the Clamp-1 source spec (compact or IR XML) and the translation target."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StrictInt, StringConstraints, model_validator

from clipbridge.dialects.kit.spec_base import Shape, WireNumber, XmlText, _field_rule, _Strict

NAME = "openvino"


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


class OpenVinoTarget(_Strict):
    dialect: Literal["openvino"]
    version: Annotated[str, StringConstraints(max_length=16)] | None = None


def target(version: str | None) -> OpenVinoTarget:
    """The target of 'openvino[:opsetN]'; the version is checked when emitting, located at the target."""
    return OpenVinoTarget(dialect="openvino", version=version)
