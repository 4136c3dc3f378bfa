"""DirectML's wire models: DML_BUFFER_TENSOR_DESC, DML_SCALE_BIAS, the CLIP/CLIP1 operator desc, the spec and the
target. Built from the shared pieces of app/clipbridge/dialects/kit/spec_base.py; app/clipbridge/service/specs.py re-exports them."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, StrictInt, StringConstraints, field_validator

from clipbridge.dialects.kit.spec_base import WireNumber, _Strict


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
