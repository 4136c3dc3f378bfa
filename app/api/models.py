"""Request and response bodies of the HTTP API (the source of schemas/*.json and /openapi.json)."""

from __future__ import annotations

from typing import Any, ClassVar, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, StrictInt, WithJsonSchema, create_model, model_validator
from pydantic_core import PydanticCustomError
from typing import Annotated

from app.dialects import registry
from app.service.execute import BACKENDS
from app.core.findings import Code
from app.service.specs import DialectName, Spec, TargetSpec

WireValue = Union[int, float, str]
PrecisionField = Literal["model", "deployed"]
PRECISION_DOC = ("How an engine backend computes: model (default) pins the engine's inference precision to the "
                 "model's own element type (OpenVINO f32 stays f32, onnxruntime without graph rewrites); deployed "
                 "uses the engine's defaults on this host (OpenVINO runs f32 in bf16 on CPUs with bf16 support). "
                 "The numpy and cupy backends compute the spec exactly either way.")
ENGINE_DOC = ("The settings the engine ran with (precision asked, OpenVINO's effective inference precision read "
              "back from the compiled model, onnxruntime's optimization level, flush-to-zero); null for numpy/cupy")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# One vocabulary (docs/api.md#one-vocabulary): every request names its spec `spec`, a list of dialects `targets` and
# one dialect `target`. The names of 0.1.0 and before stay accepted until this release; the schemas show only the new.
OLD_NAMES_UNTIL = "0.2.0"


class Renamed(_Strict):
    """A request body whose fields had other names: the old names are read as the new ones until OLD_NAMES_UNTIL."""

    RENAMED: ClassVar[dict[str, str]] = {}

    @model_validator(mode="before")
    @classmethod
    def _old_names(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not any(old in data for old in cls.RENAMED):
            return data
        data = dict(data)
        for old, new in cls.RENAMED.items():
            if old not in data:
                continue
            if new in data:
                raise PydanticCustomError("renamed", "`{old}` is the old name of `{new}`: send only `{new}`",
                                          {"old": old, "new": new})
            data[new] = data.pop(old)
        return data


class TranslateRequest(Renamed):
    RENAMED: ClassVar[dict[str, str]] = {"source": "spec"}
    spec: Spec
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
    refuses_non_finite: list[dict[str, Any]] = Field(
        default_factory=list, description="Per runtime, op version and dtype: the non-finite bound classes "
                                          "(min-inf, max+inf, min-nan, ...) it refuses to load or run")


class EngineStatus(_Strict):
    backend: str = Field(description="the `backend` value of /v1/execute and /v1/compare")
    installed: bool = Field(description="whether this server can run it; numpy (every dialect) always can")
    extra: str = Field(description="the pip extra that installs it")
    install: str = Field(description="the command that installs it, from a checkout")


class DialectsResponse(_Strict):
    dialects: list[DialectCapability]
    finding_codes: list[CodeDoc]
    runtime_support: RuntimeSupport
    host: dict[str, Any] = Field(description="The host facts engine answers depend on: CPU flags, the oneDNN ISA, "
                                             "OpenVINO's OPTIMIZATION_CAPABILITIES and default inference "
                                             "precision, the bf16 variant, engine versions, and each "
                                             "CPU-dependent engine note with the variants it holds on")
    engines: list[EngineStatus] = Field(description="the optional engine backends and which are installed here")


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
# (app/service/execute.py check_reading).
READING_NAMES = tuple(dict.fromkeys(r for d in registry.DIALECTS.values() for r in d.readings))
Reading = Literal[READING_NAMES]  # type: ignore[valid-type]


class TensorIn(_Strict):
    """A JSON tensor: flat C-order `data`; values are numbers or numeric strings ('nan', '-inf', big ints)."""

    dtype: Annotated[str, Field(max_length=16, description="float32, float16, bfloat16, float64, int8..uint64")]
    shape: Annotated[list[Annotated[StrictInt, Field(ge=0)]], Field(max_length=32)]
    # Validated element by element in app/core/tensors.py (fast, exact), not by pydantic.
    data: Annotated[list[Any], WithJsonSchema({"type": "array", "items": WIRE_ITEM})]


class TensorOut(_Strict):
    dtype: str
    shape: list[int]
    data: list[WireValue]


class ExecuteOptions(Renamed):
    RENAMED: ClassVar[dict[str, str]] = {"semantics": "target"}
    spec: Spec
    target: Semantic | None = Field(default=None, description="Whose rules apply; default: the spec's own "
                                                               "dialect. A partial spec names a version.")
    mode: Literal["literal", "preserve"] = Field(
        default="literal", description="How the spec becomes another dialect's op: literal copies its numbers.")
    backend: Backend = "numpy"
    reading: Reading | None = Field(default=None, description="Which reading of the target's dialect: "
                                                              "directml current-doc (default) or 2022-doc for an "
                                                              "ambiguous min > max; webnn spec (default) or "
                                                              "chromium; tensorrt observed (default) or header; "
                                                              "tflite xnnpack (default) or builtin (the litert "
                                                              "backend then runs the builtin kernels)")
    precision: PrecisionField = Field(default="model", description=PRECISION_DOC)


class ExecuteRequest(ExecuteOptions):
    input: TensorIn


class ExecuteResponse(_Strict):
    output: TensorOut
    semantics: str
    backend: str
    reading: str | None
    meaning: str
    precision: PrecisionField
    engine: dict[str, Any] | None = Field(description=ENGINE_DOC)


class CompareRequest(Renamed):
    RENAMED: ClassVar[dict[str, str]] = {"semantics": "targets"}
    spec: Spec
    input: TensorIn
    targets: Annotated[list[Semantic], Field(min_length=1, max_length=8)] | None = Field(
        default=None, description="default: " + ", ".join(registry.default_names()))
    mode: Literal["literal", "preserve"] = "literal"
    backend: Backend = "numpy"
    reading: Reading | None = Field(default=None, description="A reading of the dialects that have them "
                                                              "(directml: current-doc, 2022-doc; webnn: spec, "
                                                              "chromium; tensorrt: observed, header; tflite: "
                                                              "xnnpack, builtin); the others run their one meaning")
    precision: PrecisionField = Field(default="model", description=PRECISION_DOC)


class CompareOutput(_Strict):
    semantics: str
    backend: str
    reading: str | None
    meaning: str | None
    output: TensorOut | None
    precision: PrecisionField
    engine: dict[str, Any] | None = Field(default=None, description=ENGINE_DOC)
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


class ClipLikeOut(_Strict):
    node: str
    op: str
    pattern: str = Field(description="relu, leaky-relu-0, hard-sigmoid, hard-swish, quantize-saturate")
    input: str
    output: str
    summary: str
    nan_input: dict[str, str] = Field(description="per engine: what a NaN input gives (propagate, zero, one, "
                                      "lower, upper, engine)")
    sources: dict[str, str]


class ScanResponse(_Strict):
    format: Literal["onnx", "openvino-ir"]
    model: dict[str, Any]
    targets: list[ScanTargetOut]
    clips: list[ClipSiteOut]
    summary: ScanSummary
    clip_like: list[ClipLikeOut] = Field(default_factory=list, description="ops that clip without being a Clip "
                                         "(docs/diff.md): listed with each engine's NaN rule, not translated")
