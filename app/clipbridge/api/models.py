"""Request and response bodies of the HTTP API (the source of schemas/*.json and /openapi.json): the capability
matrix, health, problems, execute and compare here; translate's in app/clipbridge/api/translate_models.py, the model scan's
in app/clipbridge/api/scan_models.py, the shared base in app/clipbridge/api/model_base.py (all importable from here)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, StrictInt, WithJsonSchema

from clipbridge.api.model_base import (ENGINE_DOC, GROUP_DOC, OLD_NAMES_UNTIL, PRECISION_DOC, Grouped, PrecisionField, Renamed,
                                TargetGroup, WireValue, _Strict)
from clipbridge.api.scan_models import (ClipLikeOut, ClipSiteOut, ScaleBiasCandidateOut, ScanCount, ScanResponse,
                                 ScanSummary, ScanTargetOut, ScanTranslationOut, WorstFinding)
from clipbridge.api.translate_models import (ArtifactsOut, BoundOut, EngineNoteOut, FindingOut, MeaningOut, ScaleBiasOut,
                                      TensorBoundOut, TranslateRequest, TranslateResponse, TranslationOut,
                                      WitnessOut)
from clipbridge.core.findings import Code
from clipbridge.dialects import registry
from clipbridge.service.execute import BACKENDS
from clipbridge.service.specs import DialectName, Spec, TargetSpec

__all__ = ["ArtifactsOut", "Backend", "BoundOut", "ClipLikeOut", "ClipSiteOut", "CodeDoc", "CompareOutput",
           "ComparePair", "CompareRequest", "CompareResponse", "DialectCapability", "DialectsResponse", "DiffAt",
           "ENGINE_DOC", "EngineNoteOut", "EngineStatus", "ExecuteOptions", "ExecuteRequest", "ExecuteResponse",
           "FindingOut", "Health", "MeaningOut", "OLD_NAMES_UNTIL", "PRECISION_DOC", "PrecisionField", "Problem",
           "ProblemError", "READING_NAMES", "Reading", "Renamed", "RuleText", "RuntimeCannotRun", "RuntimeChecked",
           "RuntimeSupport", "RuntimeVersion", "ScaleBiasCandidateOut", "ScaleBiasOut", "ScanCount", "ScanResponse",
           "ScanSummary", "ScanTargetOut", "ScanTranslationOut", "Semantic", "TensorBoundOut", "TensorIn",
           "TensorOut", "TranslateRequest", "TranslateResponse", "TranslationOut", "VersionCapability", "WIRE_ITEM",
           "WireValue", "WitnessOut", "WorstFinding", "_Strict"]


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


class VersionResponse(_Strict):
    """GET /v1/version: the package and each engine's installed version (null: not installed), the same facts as
    `clipbridge --version` (clipbridge.engines.extras.versions: package metadata, no engine is imported)."""
    package: Literal["clipbridge"]
    version: str
    engines: dict[str, str | None]


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
# header, observed; TFLite: xnnpack, builtin); a name the chosen semantics does not take is a 400 naming `reading`
# (app/clipbridge/service/execute.py check_reading).
READING_NAMES = tuple(dict.fromkeys(r for d in registry.DIALECTS.values() for r in d.readings))
Reading = Literal[READING_NAMES]  # type: ignore[valid-type]


class TensorIn(_Strict):
    """A JSON tensor: flat C-order `data`; values are numbers or numeric strings ('nan', '-inf', big ints)."""

    dtype: Annotated[str, Field(max_length=16, description="float32, float16, bfloat16, float64, int8..uint64")]
    shape: Annotated[list[Annotated[StrictInt, Field(ge=0)]], Field(max_length=32)]
    # Validated element by element in app/clipbridge/core/tensors.py (fast, exact), not by pydantic.
    data: Annotated[list[Any], WithJsonSchema({"type": "array", "items": WIRE_ITEM})]


class TensorOut(_Strict):
    dtype: str
    shape: list[int]
    data: list[WireValue]


BasisField = Literal["specification", "engine"]
ShowsField = Literal["specification", "observed-engine", "engine"]
BASIS_DOC = ("What to compute for every dialect alike: specification (each dialect's documented operator; "
             "TensorRT: the header, NaN undocumented, executed as propagate) or engine (what the dialect's engine "
             "was observed to do where one is recorded: TensorRT's observed reading, NaN -> alpha; WebNN's "
             "chromium reading; OpenVINO's CPU plugin, NaN -> min, as `clipbridge diff` measures; the "
             "specification elsewhere). Default (null): the specification for every dialect, the reading "
             "/v1/translate's default findings and witnesses use. A `reading` the dialect takes wins; `shows` "
             "says what each output is.")
SHOWS_DOC = ("What this output is: specification, observed-engine (an engine's recorded behaviour computed on "
             "NumPy) or engine (an engine backend ran)")


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
    basis: BasisField | None = Field(default=None, description=BASIS_DOC)


class ExecuteRequest(ExecuteOptions):
    input: TensorIn


class ExecuteResponse(_Strict):
    output: TensorOut
    semantics: str
    backend: str
    reading: str | None
    meaning: str
    shows: ShowsField = Field(description=SHOWS_DOC)
    precision: PrecisionField
    engine: dict[str, Any] | None = Field(description=ENGINE_DOC)


class CompareRequest(Renamed, Grouped):
    RENAMED: ClassVar[dict[str, str]] = {"semantics": "targets"}
    spec: Spec
    input: TensorIn
    targets: Annotated[list[Semantic], Field(min_length=1, max_length=8)] | TargetGroup | None = Field(
        default=None, description="default: " + ", ".join(registry.default_names()) + GROUP_DOC)
    mode: Literal["literal", "preserve"] = "literal"
    backend: Backend = "numpy"
    reading: Reading | None = Field(default=None, description="A reading of the dialects that have them "
                                                              "(directml: current-doc, 2022-doc; webnn: spec, "
                                                              "chromium; tensorrt: observed, header; tflite: "
                                                              "xnnpack, builtin); the others run their one meaning")
    precision: PrecisionField = Field(default="model", description=PRECISION_DOC)
    basis: BasisField | None = Field(default=None, description=BASIS_DOC)


class CompareOutput(_Strict):
    semantics: str
    backend: str
    reading: str | None
    meaning: str | None
    shows: ShowsField | None = Field(default=None, description=SHOWS_DOC + "; null with an error")
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
