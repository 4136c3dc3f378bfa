"""ONNX Clip's wire models: the source spec (compact or a whole model) and a target (an opset)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StrictInt, StringConstraints, model_validator

from clipbridge.dialects.kit.spec_base import B64, Shape, WireNumber, _field_rule, _Strict

NAME = "onnx"  # the `dialect` tag of the spec and target models


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


class OnnxTarget(_Strict):
    dialect: Literal["onnx"]
    opset: Annotated[StrictInt, Field(ge=1, le=1000)] | None = None
