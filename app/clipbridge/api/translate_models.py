"""The bodies of POST /v1/translate: the request, and the response with each translation's meaning, findings and
artifacts (schemas/TranslateRequest.json, schemas/TranslateResponse.json)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal, Union

from pydantic import Field, create_model

from clipbridge.api.model_base import GROUP_DOC, Grouped, Renamed, TargetGroup, WireValue, _Strict
from clipbridge.core.findings import Code
from clipbridge.dialects import registry
from clipbridge.service.specs import DialectName, Spec, TargetSpec


class TranslateRequest(Renamed, Grouped):
    RENAMED: ClassVar[dict[str, str]] = {"source": "spec"}
    spec: Spec
    targets: Annotated[list[Union[DialectName, TargetSpec]], Field(max_length=16)] | TargetGroup | None = Field(
        default=None,
        description="Dialect names or partial specs naming a version; default: every other dialect, newest"
                    + GROUP_DOC)
    mode: Literal["preserve", "literal"] = "preserve"
    include: list[Literal["artifacts"]] = Field(
        default=("artifacts",), max_length=1,  # a tuple: pydantic deep-copies a list default per request
        description="What each translation carries beyond its target, status, findings and meaning. Default "
                    "[\"artifacts\"] (ONNX model, IR XML, MLIR, code, ...); [] leaves `artifacts` empty ({}) and "
                    "skips building them, the larger part of a translation's cost.")


class BoundOut(_Strict):
    value: WireValue
    given: WireValue | None
    default: bool
    steps: list[str]


class ScaleBiasOut(_Strict):
    scale: WireValue
    bias: WireValue
    precision: str
    fused: bool


class EngineNoteOut(_Strict):
    engine: str
    text: str


class TensorBoundOut(_Strict):
    shape: list[int]
    values: list[WireValue]
    steps: list[str]


class MeaningOut(_Strict):
    dialect: str
    version: str
    dtype: str
    lower: BoundOut | None
    upper: BoundOut | None
    order: Literal["max-wins", "min-wins", "rejected"]
    nan_input: Literal["propagate", "undocumented", "to-lower", "to-zero", "to-upper"]
    nan_bound: Literal["propagate", "ignore", "rejected", "undocumented", "zero"]
    scale_bias: ScaleBiasOut | None
    state: Literal["defined", "rejected", "ambiguous"]
    reason: str | None
    readings: list[str]
    dynamic: bool
    summary: str
    rules: list[str]
    engine_notes: list[EngineNoteOut]
    result_dtype: str | None = Field(description="The output dtype when the op promotes the input's; else null")
    lower_tensor: TensorBoundOut | None = Field(description="A per-element lower bound (then `lower` is null)")
    upper_tensor: TensorBoundOut | None = Field(description="A per-element upper bound (then `upper` is null)")
    shows: str = Field(description="What this meaning is: \"specification\" (the dialect's documented operator, "
                                   "every dialect's default) or the name of the reading it is, when the spec pins "
                                   "another one (tensorrt \"reading\": \"observed\", TensorRT's engine as reported)")


READING_DOC = ("The dialect reading this holds under, when the source's or the target's documents and shipped "
               "implementations disagree (directml 2022-doc, webnn chromium, tensorrt observed, tflite builtin; "
               "GET /v1/dialects lists each dialect's readings); null under the default readings")


class WitnessOut(_Strict):
    input: WireValue
    source_output: WireValue
    target_output: WireValue
    reading: str | None = Field(default=None, description=READING_DOC)


class FindingOut(_Strict):
    code: Code
    severity: Literal["info", "warning", "error"]
    message: str = Field(description="Readable text; under another reading it starts \"under the NAME reading: \" "
                                     "and `reading` says NAME as data")
    source_behaviour: str
    target_behaviour: str
    witness: WitnessOut | None
    reading: str | None = Field(default=None, description=READING_DOC)


# Each registered dialect's artifact keys (Dialect.artifacts), in registry order.
ArtifactsOut = create_model("ArtifactsOut", __base__=_Strict, **{  # type: ignore[call-overload]
    key: (Union[str, None], Field(default=None, description=text))
    for d in registry.DIALECTS.values() for key, text in d.artifacts.items()})


class TranslationOut(_Strict):
    target: dict[str, Any] | None
    status: Literal["exact", "drift", "unsupported"]
    findings: list[FindingOut]
    artifacts: ArtifactsOut
    meaning: MeaningOut | None


class TranslateResponse(_Strict):
    source: dict[str, Any]
    meaning: MeaningOut
    translations: list[TranslationOut]
