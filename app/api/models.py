"""Request and response bodies of the HTTP API (the source of schemas/*.json and /openapi.json)."""

from __future__ import annotations

from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, StrictInt, WithJsonSchema, create_model
from typing import Annotated

from app.dialects import registry
from app.execute import BACKENDS
from app.findings import Code
from app.specs import DialectName, Spec, TargetSpec

WireValue = Union[int, float, str]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TranslateRequest(_Strict):
    source: Spec
    targets: list[Union[DialectName, TargetSpec]] | None = Field(
        default=None, max_length=16,
        description="Dialect names or partial specs naming a version; default: every other dialect, newest.")
    mode: Literal["preserve", "literal"] = "preserve"
    include: list[Literal["artifacts"]] = Field(
        default=["artifacts"], max_length=1,
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
    order: Literal["max-wins", "min-wins", "ambiguous", "rejected"]
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


class WitnessOut(_Strict):
    input: WireValue
    source_output: WireValue
    target_output: WireValue


class FindingOut(_Strict):
    code: Code
    severity: Literal["info", "warning", "error"]
    message: str
    source_behaviour: str
    target_behaviour: str
    witness: WitnessOut | None


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


class VersionCapability(_Strict):
    """One version row of a dialect's capability(); a dialect may add facts of its own (extra keys pass through),
    so a new dialect's row needs no change here."""

    model_config = ConfigDict(extra="allow")
    version: str
    selects: str = Field(description="Which requests resolve to this version")
    dtypes: list[str]
    ranks: str
    operators: list[str] = []
    rules: list[str]


class RuleText(_Strict):
    rule: str
    source: str


class DialectCapability(_Strict):
    dialect: DialectName
    default_target: dict[str, Any]
    versions: list[VersionCapability]
    in_defaults: bool = Field(True, description="a default target and scan column (else used when named)")
    version_field: str | None = Field(None, description="the target's version field: 'opset', 'version', ...")
    version_example: str = Field("", description="how a versioned target is written: 'onnx:13'")
    target_versions: list[str] = Field([], description="versions a target selector offers (more may be valid)")
    examples: dict[str, dict[str, Any]] = Field({}, description="named example source specs")
    spec_schema: dict[str, Any] = Field({}, description="the JSON Schema of this dialect's source spec")
    rule_texts: dict[str, RuleText] = Field({}, description="finding code -> this dialect's rule and its source")


class CodeDoc(_Strict):
    code: Code
    meaning: str


class RuntimeVersion(_Strict):
    runtime: Literal["onnxruntime", "openvino"]
    version: str
    device: str


class RuntimeChecked(_Strict):
    runtime: Literal["onnxruntime", "openvino"]
    op_version: str
    dtypes: list[str] = Field(description="dtypes whose emitted artifacts were loaded and run")


class RuntimeCannotRun(_Strict):
    runtime: Literal["onnxruntime", "openvino"]
    version: str
    device: str
    dialect: DialectName
    op_version: str = Field(description="Clip-1 .. Clip-13, or Clamp-1")
    dtype: str
    bounds: list[Literal["none", "min", "max", "both"]] = Field(
        description="which bounds given make the artifact fail (ONNX; 'both' for OpenVINO)")
    opsets: list[int] = Field(description="the ONNX opsets swept that select this Clip version")
    reason: str = Field(description="the engine's own error, first line")


class RuntimeSupport(_Strict):
    """Derived by running every emitted artifact (python -m tests.engines.sweep --write)."""

    runtimes: list[RuntimeVersion]
    cannot_run: list[RuntimeCannotRun]
    checked: list[RuntimeChecked]


class DialectsResponse(_Strict):
    dialects: list[DialectCapability]
    finding_codes: list[CodeDoc]
    runtime_support: RuntimeSupport


class Health(_Strict):
    status: Literal["ok"]
    version: str


class ProblemError(_Strict):
    loc: str
    msg: str


class Problem(BaseModel):
    """RFC 9457 problem details."""

    type: str = "about:blank"
    title: str
    status: int
    detail: str
    errors: list[ProblemError] | None = None


WIRE_ITEM = {"anyOf": [{"type": "number"}, {"type": "string", "maxLength": 400}]}
Semantic = Union[DialectName, TargetSpec]
Backend = Literal[BACKENDS]  # type: ignore[valid-type]  # the kernels and every registered engine
# Every registered dialect's reading names (DirectML: current-doc, 2022-doc; WebNN: spec, chromium; TensorRT:
# observed, header; TFLite: xnnpack, builtin); a name the chosen semantics does not take is a 400 naming `reading`
# (app/execute.py check_reading).
READING_NAMES = tuple(dict.fromkeys(r for d in registry.DIALECTS.values() for r in d.readings))
Reading = Literal[READING_NAMES]  # type: ignore[valid-type]


class TensorIn(_Strict):
    """A JSON tensor: flat C-order `data`; values are numbers or numeric strings ('nan', '-inf', big ints)."""

    dtype: Annotated[str, Field(max_length=16, description="float32, float16, bfloat16, float64, int8..uint64")]
    shape: Annotated[list[Annotated[StrictInt, Field(ge=0)]], Field(max_length=32)]
    # Validated element by element in app/tensors.py (fast, exact), not by pydantic.
    data: Annotated[list[Any], WithJsonSchema({"type": "array", "items": WIRE_ITEM})]


class TensorOut(_Strict):
    dtype: str
    shape: list[int]
    data: list[WireValue]


class ExecuteOptions(_Strict):
    spec: Spec
    semantics: Semantic | None = Field(default=None, description="Whose rules apply; default: the spec's own "
                                                                  "dialect. A partial spec names a version.")
    mode: Literal["literal", "preserve"] = Field(
        default="literal", description="How the spec becomes another dialect's op: literal copies its numbers.")
    backend: Backend = "numpy"
    reading: Reading | None = Field(default=None, description="Which reading of the semantics' dialect: "
                                                              "directml current-doc (default) or 2022-doc for an "
                                                              "ambiguous min > max; webnn spec (default) or "
                                                              "chromium; tensorrt observed (default) or header; "
                                                              "tflite xnnpack (default) or builtin (the litert "
                                                              "backend then runs the builtin kernels)")


class ExecuteRequest(ExecuteOptions):
    input: TensorIn


class ExecuteResponse(_Strict):
    output: TensorOut
    semantics: str
    backend: str
    reading: str | None
    meaning: str


class CompareRequest(_Strict):
    spec: Spec
    input: TensorIn
    semantics: Annotated[list[Semantic], Field(min_length=1, max_length=8)] | None = Field(
        default=None, description="default: " + ", ".join(registry.default_names()))
    mode: Literal["literal", "preserve"] = "literal"
    backend: Backend = "numpy"
    reading: Reading | None = Field(default=None, description="A reading of the dialects that have them "
                                                              "(directml: current-doc, 2022-doc; webnn: spec, "
                                                              "chromium; tensorrt: observed, header; tflite: "
                                                              "xnnpack, builtin); the others run their one meaning")


class CompareOutput(_Strict):
    semantics: str
    backend: str
    reading: str | None
    meaning: str | None
    output: TensorOut | None
    error: str | None = Field(default=None, description="why this semantics cannot compute the spec")


class DiffAt(_Strict):
    index: list[int]
    input: WireValue
    a_output: WireValue
    b_output: WireValue


class ComparePair(_Strict):
    a: str
    b: str
    differing: int
    first: list[DiffAt]


class CompareResponse(_Strict):
    outputs: list[CompareOutput]
    pairs: list[ComparePair]


# --- model scan -------------------------------------------------------------------------------------------

class ScanTargetOut(_Strict):
    label: str = Field(description="The target as given: onnx, onnx:13, openvino:opset16, directml:5_0")
    target: dict[str, Any]


class ScanTranslationOut(_Strict):
    label: str
    target: dict[str, Any] | None
    status: Literal["exact", "drift", "unsupported"]
    findings: list[FindingOut]


class ScaleBiasCandidateOut(_Strict):
    scale: WireValue
    bias: WireValue
    nodes: list[str] = Field(description="The Mul/Add (Multiply/Add) nodes a DirectML ScaleBias could absorb")


class ClipSiteOut(_Strict):
    id: int
    path: str = Field(description="graph, graph/<node>.<attribute> for subgraphs, function <name>, net, ...")
    node: str
    pattern: str = Field(description="Clip-6, Clip-13, Clamp-1, Min(Max(x, a), b), Minimum(Maximum(x, a), b), ...")
    nodes: list[str]
    input: str
    output: str
    dtype: str | None
    shape: list[int | str | None] | None
    spec: dict[str, Any] | None = Field(description="The clip as a compact spec; a Min/Max pair as the "
                                                    "Clip-13 it equals")
    meaning: MeaningOut | None
    scale_bias: ScaleBiasCandidateOut | None
    findings: list[FindingOut] = Field(description="Findings about the clip itself (dynamic bounds, ScaleBias)")
    error: str | None = Field(description="Why the clip could not be resolved (then no translations)")
    translations: list[ScanTranslationOut]


class ScanCount(_Strict):
    label: str
    exact: int
    drift: int
    unsupported: int


class WorstFinding(FindingOut):
    clip: int
    label: str


class ScanSummary(_Strict):
    clips: int
    unresolved: int
    targets: list[ScanCount]
    worst: WorstFinding | None


class ScanResponse(_Strict):
    format: Literal["onnx", "openvino-ir"]
    model: dict[str, Any]
    targets: list[ScanTargetOut]
    clips: list[ClipSiteOut]
    summary: ScanSummary
