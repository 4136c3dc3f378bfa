"""The body of POST /v1/models/... (a model scan): each Clip site, its meaning, findings and translations
(schemas/ScanResponse.json)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from clipbridge.api.model_base import WireValue, _Strict
from clipbridge.api.translate_models import FindingOut, MeaningOut


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


class EngineReadingOut(_Strict):
    node: str
    engine: str
    nan_input: str = Field(description="what a NaN input gives on the engine: propagate, lower, upper, zero, one, "
                                       "engine")
    row: str = Field(description="the behaviour table's row that says so (docs/architecture.md, 'The behaviour "
                                 "table'); the diff checks its nan-input cause against the same row")


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
    engine_readings: list[EngineReadingOut] = Field(default_factory=list, description="Per node of the clip and "
                                                    "per engine, what a NaN input gives when the model itself runs "
                                                    "there (ONNX main graph only)")


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
