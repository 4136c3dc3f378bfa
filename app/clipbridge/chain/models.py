"""The chain report as a pydantic model: the body of POST /v1/models/chain (its response_model) and of `clipbridge
diff MODEL --chain STAGES --format json`; schemas/ChainResponse.json is exported from it (docs/chain.md).

A key the report writes only sometimes (a hop's `note`, `cause`, its comparisons and what they confirmed) is
optional here and absent from the body when it does not apply, as the body is written."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from clipbridge.diff.models import DiffTensor, DiffWitness, Wire

Verdict = Literal["equal", "explained", "unexplained"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class ChainInputs(_Strict):
    source: Literal["given", "generated", "none"] = Field(description="none: a static report runs nothing")
    seed: int | None
    tensors: list[DiffTensor]


class ChainClip(_Strict):
    node: str = Field(description="the source op: the torch node's name, or an ONNX node's output tensor")
    op: str
    lo: Wire
    hi: Wire
    module: str = Field(description="the torch module path (empty for an ONNX source)")
    stack_trace: str


class ChainStage(_Strict):
    name: str
    status: Literal["ok", "failed", "not-installed", "static"]
    error: str | None


class Converter(_Strict):
    name: str
    version: str | None
    options: dict[str, Any]


class StageEngine(_Strict):
    name: str
    version: str | None
    precision: str | None
    delegate: str | None


class Lowering(_Strict):
    node: str
    op: str
    became: str | None = Field(description="the ops the converter wrote for it, in order")
    pairing: str | None = Field(description="how the pair was made (unpaired: no pairing found it)")
    findings: list[dict[str, Any]] = Field(description="what the lowering rules predict for it")


class NodeRule(_Strict):
    node: str
    rule: str


class HopCause(_Strict):
    rule: str
    nodes: list[str]


class ChainOutput(_Strict):
    index: int
    differing: int
    total: int
    cause: str | None = Field(None, description="the hop rule every differing element obeys at the op that wrote "
                              "the output (a LiteRT builtin op saturating inf), else null")


class ChainDivergence(_Strict):
    node: str
    op: str
    at: Literal["input", "output"]
    became: str | None


class ChainNode(_Strict):
    node: str
    op: str
    differing: int | None
    total: int | None
    origin: Literal["introduced", "inherited"] | None
    cause: str | None = Field(description="a lowering rule (the report's `rules`), or null: unexplained")
    witness: DiffWitness | None
    causes: dict[str, int] | None = None
    inherited_from: list[str] | None = None
    detail: str | None = None


class Comparison(_Strict):
    reference: str = Field(description="the stage compared against")
    verdict: Verdict
    outputs: list[ChainOutput]
    first_divergence: ChainDivergence | None
    nodes: list[ChainNode]


class Hop(_Strict):
    from_: str | None = Field(alias="from", description="the stage this one was converted from")
    to: str
    status: Literal["ok", "failed", "not-installed", "static"]
    error: str | None
    converter: Converter | None
    engine: StageEngine
    note: str | None = None
    lowering: list[Lowering]
    predicted: list[NodeRule]
    cause: HopCause | None = Field(default=None, description="a failed conversion the source predicted")
    against_source: Comparison | None = None
    against_previous: Comparison | None = None
    confirmed: list[NodeRule] | None = None
    not_reached: list[NodeRule] | None = None
    unpredicted: list[NodeRule] | None = None


class ChainResponse(_Strict):
    verdict: Literal["equal", "explained", "unexplained"] | None = Field(
        description="the worst comparison of any hop; null when nothing ran (`static`): a verdict is only ever "
        "equal, explained, unexplained (or an error answer), the one vocabulary of diff, fix, chain and fleet")
    static: bool = Field(description="the lowering table and its predictions only: nothing was converted-and-run")
    chain: list[str]
    source: Literal["torch", "onnx"]
    inputs: ChainInputs
    clips: list[ChainClip]
    stages: list[ChainStage]
    hops: list[Hop]
    rules: dict[str, str] = Field(description="each lowering rule's name and the first line of its citation")
