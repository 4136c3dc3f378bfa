"""The fix report as a pydantic model: the body of POST /v1/models/fix (its response_model) and of `clipbridge diff
--fix --format json`; schemas/FixResponse.json is exported from it."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from clipbridge.diff.models import DiffResponse
from clipbridge.diff.models import EngineName as Engine  # the registry's diff engines, each also @f16


class RuleApplied(BaseModel):
    node: str = Field(description="the ONNX node name (#index when it has none); the node keeps its name")
    op: str
    rule: str = Field(description="explicit-default-bound, float16-overflow-clamp, crossed-bounds-constant, "
                                  "nan-guard, nan-to-zero, nan-to-value, softmax-nan-guard or maxpool-nan-guard; "
                                  "for an `@f16` target float16-clamp or keep-float32")
    why: str = Field(description="what reference and target do at this node, measured on the engines")
    cause: str = Field(description="the diff's cause this rule removes (nan-input, default-bound, "
                                   "min-greater-than-max, nan-through-softmax, nan-through-max)")


class Skipped(BaseModel):
    node: str
    op: str
    reason: str


class Advice(BaseModel):
    code: Literal["inference-precision"]
    engine: str
    role: Literal["reference", "target"]
    ran_in: str = Field(description="the inference precision the engine really used")
    setting: dict[str, str] = Field(description="the exact engine setting that removes the difference")
    alternative: dict[str, str]
    message: str


class Cost(BaseModel):
    engine: str
    precision: str
    rounds: int
    original_ms: float | None = Field(description="median latency of the original model on the target (null when "
                                                  "the target cannot run the original)")
    written_ms: float = Field(description="median latency of the written model on the target, interleaved with "
                                          "the original's (one after the other where the note says so)")
    ratio: float | None
    clean_identical: bool | None = Field(description="the written and the original model give bit-identical "
                                                     "outputs on the target on the clean (generated or given) inputs")
    note: str | None


class WrittenModel(BaseModel):
    onnx_base64: str = Field(description="the written .onnx model")
    bytes: int
    opset: int
    ir_version: int
    opset_before: int
    ir_version_before: int
    opset_note: str | None = Field(description="why the opset changed (only when a rewrite needs a newer op)")
    node_names_kept: bool


class FixResponse(BaseModel):
    reference: Engine
    target: Engine
    precision: Literal["model", "deployed"]
    verdict: Literal["equal", "explained", "unexplained"] = Field(description=(
        "the proof's verdict (the given inputs when sent) in the diff's words: `clipbridge fix` exits 0 exactly when "
        "it is equal; whether the clean outputs stay bit-identical on the target is cost.clean_identical"))
    rules_applied: list[RuleApplied]
    skipped: list[Skipped]
    advice: list[Advice] = Field(description="differences no rewrite removes, with the exact engine setting")
    compared: dict[str, str] = Field(description="which model each engine ran in the proof")
    proof: DiffResponse = Field(description="the diff of the written model on target against the original on "
                                              "reference (the /v1/models/diff body): on the given inputs when "
                                              "an .npz was sent, else on generated ones")
    proof_generated: DiffResponse | None = Field(description="when inputs were given: the same diff on "
                                                               "generated inputs (NaN, +-inf, bounds)")
    cost: Cost
    model: WrittenModel
