"""Bodies of /v1/probe and /v1/bundle (the source of schemas/Probe*.json)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from clipbridge.api.model_base import GROUP_DOC, Grouped, TargetGroup
from clipbridge.api.models import PRECISION_DOC, PrecisionField, Renamed, Semantic, WireValue
from clipbridge.dialects import registry
from clipbridge.service.specs import Spec


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ProbeRequest(Renamed, Grouped):
    RENAMED: ClassVar[dict[str, str]] = {"semantics": "targets"}
    spec: Spec
    targets: Annotated[list[Semantic], Field(min_length=1, max_length=8)] | TargetGroup | None = Field(
        default=None, description="Whose rules give the expected outputs; default: "
                                  + ", ".join(registry.default_names()) + ". A partial spec names a version"
                                  + GROUP_DOC)
    mode: Literal["literal", "preserve"] = Field(
        default="literal", description="How the spec becomes another dialect's op: literal copies its numbers "
                                       "(what that framework would compute from them)")
    precision: PrecisionField = Field(default="model", description="The precision run_bundle.py runs the "
                                      "engines at: " + PRECISION_DOC)


class ProbeInput(_Strict):
    value: WireValue
    why: list[str] = Field(description="Why this input matters: a bound and its neighbours, a type extreme, "
                                       "+-0, +-inf, NaN, a subnormal, the float16 overflow threshold, ...")


class ProbeSemanticsOut(_Strict):
    label: str
    dialect: str
    meaning: str | None
    reading: str | None = Field(description="The reading this semantics runs under: an ambiguous DirectML min > "
                                            "max's formula, or the default reading of a dialect that has several "
                                            "(webnn spec, tensorrt header, tflite xnnpack)")
    spec: dict[str, Any] | None = Field(description="The op this semantics runs (the translation of the spec)")
    outputs: list[WireValue] | None = Field(description="The expected output per input; null with error")
    error: str | None = Field(description="Why this semantics cannot compute the spec")


class ProbeResponse(_Strict):
    dtype: str
    inputs: list[ProbeInput]
    semantics: list[ProbeSemanticsOut]
    differing: list[int] = Field(description="Indices of inputs where the semantics' outputs differ (NaN = NaN)")
    precision: PrecisionField = Field(description="The precision a bundle of these probes runs the engines at")
