"""The diff report as a pydantic model: the body of POST /v1/models/diff (its response_model), what `clipbridge diff
--format json` prints, and each line's findings in fleet's results.jsonl; schemas/DiffResponse.json is exported
from it (docs/diff.md)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from clipbridge.engines.runtimes import registry

Wire = int | float | str | None  # a number, or "nan" / "inf" / "-inf"
# The diff's engines as the registry lists them when this module is imported, each also `@f16` (the precision trace).
DIFF_ENGINES = registry.names("diff")
EngineName = Literal[(*DIFF_ENGINES, *(f"{e}@f16" for e in DIFF_ENGINES))]  # type: ignore[valid-type]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DiffEngine(_Strict):
    name: EngineName = Field(description="`@f16`: the engine ran a float16 copy of the model "
                                                "(the precision trace, docs/diff.md)")
    version: str
    precision: str = Field(description="as it ran: OpenVINO's compiled inference precision read back (f32, bf16, "
                           "f16); onnxruntime's and onnx-reference's output float types")
    observer_effect: list[str] = Field(description="final outputs that marking every tensor changed (then the "
                                       "diff bisects)")
    settings: dict[str, Any] = Field(description="how the engine was configured (app/clipbridge/engines/config.py): "
                                     "onnxruntime's graph optimization level, OpenVINO's inference precision and "
                                     "bf16 variant, ...")


class DiffTensor(_Strict):
    name: str
    dtype: str
    shape: list[int]


class DiffInputs(_Strict):
    source: Literal["given", "generated"]
    seed: int | None
    sample: Literal["ordinary", "edge"] | None = Field(default=None, description="generated: an ordinary sample "
                                                       "(seeded normal floats, valid integers) or the edge probe's "
                                                       "NaN, +-inf and bounds; null when given")
    symbolic: list[dict[str, Any]] = Field(default_factory=list, description="each symbolic or unknown input "
                                           "dimension: input, axis, dim (its name), value (what it ran with)")
    tensors: list[DiffTensor]


class DiffTolerance(_Strict):
    rtol: float | None
    atol: float | None
    defaults: str


class DiffOutput(_Strict):
    name: str
    differing: int
    total: int
    tolerance: dict[str, Any] | None = Field(default=None, description="the rtol, atol this output was compared "
                                             "with, and their source (--tolerance NAME, *, --rtol/--atol, default)")
    agrees_by: str | None = Field(default=None, description="why a differing output counts as agreeing: "
                                  "'accumulation-order' when it differs only through sums within their rounding "
                                  "bound (docs/diff.md); null otherwise")


class DiffNodeRef(_Strict):
    node: str
    op: str


class DiffWitness(_Strict):
    index: list[int]
    input: Wire | dict[str, Wire] = Field(description="the shared input element (introduced), or each engine's "
                                          "(inherited, not-a-clip); null when the node's input has another shape")
    outputs: dict[str, Wire]


class DiffNode(_Strict):
    node: str
    op: str
    pattern: str | None
    differing: int
    total: int
    origin: Literal["introduced", "inherited"] | None
    cause: Literal["nan-input", "bound-rounding", "default-bound", "min-greater-than-max", "float16-bound-overflow",
                   "inference-precision", "not-a-clip", "quantize-saturation", "quantize-rounding",
                   "float16-overflow", "underflow-to-zero", "inf-minus-inf", "inf-times-zero",
                   "nan-through-softmax", "nan-through-max", "cast-out-of-range", "accumulation-order"] | None
    causes: dict[str, int] | None = None
    replay_differing: int | None = None
    inherited_from: list[str] | None = None
    detail: str | None = None
    witness: DiffWitness | None


class DiffBody(_Strict):
    node: str = Field(description="the If, Loop or Scan node of the main graph")
    op: str
    walked: bool = Field(description="whether its body's nodes were captured and compared (docs/diff.md, Subgraphs)")
    graph: str = Field(description="the body's path, e.g. gate/then_branch (the branch taken when walked)")
    view: str | None = Field(description="how its tensors were read: the branch taken, or each iteration stacked")
    reason: str | None = Field(description="why it was not walked, or what inside it was not")


class DiffGraphNode(_Strict):
    name: str
    op: str
    inputs: list[str] = Field(description="its non-constant input tensors (at most 16)")
    outputs: list[str]


class DiffGraph(_Strict):
    scope: str = Field(description="paths: every node from the inputs to the outputs through a differing node; "
                       "neighbourhood-N: past 160 nodes, those within N steps of one; differing: only those")
    total_nodes: int
    truncated: bool
    inputs: list[str]
    outputs: list[str]
    nodes: list[DiffGraphNode] = Field(description="in topological order; edges join a tensor's producer to "
                                       "its consumers")


class DiffMasked(_Strict):
    nodes: list[DiffNode] = Field(description="nodes whose difference reaches no differing output")
    summary: str | None = Field(description="one line: how many, and their causes; null when none")


class DiffLayout(_Strict):
    tensor: str
    node: str
    engine: str
    shape: list[int] = Field(description="the layout the engine gave")
    as_: list[int] = Field(alias="as", description="the layout it was compared in (ONNX's stacked scan outputs)")
    note: str


class DiffEdge(_Strict):
    verdict: Literal["equal", "explained", "unexplained", "error"]
    error: dict[str, Any] | None = None
    inputs: DiffInputs | None
    method: Literal["mark-all", "bisection", "precision-trace"] | None
    passes: int | None = Field(default=None, ge=1, description="the edge pass's own capture passes (as the "
                               "body's `passes`); null on an error")
    outputs: list[DiffOutput]
    first_divergence: DiffNodeRef | None
    nodes: list[DiffNode]
    masked: DiffMasked
    layout: list[DiffLayout]
    graph: DiffGraph | None = Field(default=None, description="the API only: the part of the graph the inspector "
                                    "draws for the edge pass (app/clipbridge/diff/graph_view.py); null when "
                                    "nothing differs there")


class DiffSideModel(_Strict):
    model: str = Field(description="the side's model file name")
    engine: str


class DiffSides(_Strict):
    """A diff of two sides (`clipbridge diff A.onnx@ENGINE B.onnx@ENGINE`, app/clipbridge/diff/sides.py)."""

    models: list[DiffSideModel]
    only_first: list[str] = Field(description="tensors only the first side's model makes (the first 64): compared "
                                  "on neither side")
    only_first_count: int
    only_second: list[str] = Field(description="tensors only the second side's model makes (the first 64)")
    only_second_count: int


class DiffResponse(_Strict):
    verdict: Literal["equal", "explained", "unexplained"]
    engines: list[DiffEngine]
    inputs: DiffInputs
    method: Literal["mark-all", "bisection", "precision-trace"]
    passes: int = Field(default=1, ge=1, description="how many capture passes the diff took: 1 when every captured "
                        "tensor fit the memory budget, more when the graph was walked a region at a time "
                        "(app/clipbridge/diff/passes.py)")
    tolerance: DiffTolerance
    outputs: list[DiffOutput]
    first_divergence: DiffNodeRef | None
    nodes: list[DiffNode] = Field(description="the differing nodes whose difference reaches a differing output")
    masked: DiffMasked | None = Field(default=None, description="differences inside the model that reach no "
                                      "differing output (issue 44): reported, never red unless fail_on has masked")
    layout: list[DiffLayout] = Field(default_factory=list, description="outputs an engine gave in another layout, "
                                     "compared after reshaping (a Loop's scan outputs concatenated)")
    edge: DiffEdge | None = Field(default=None, description="the edge probe's own pass (probe=edge): NaN, +-inf, "
                                  "float16's 65504, the bounds; counts only with fail_on=edge")
    samples: dict[str, Any] | None = Field(default=None, description="an input set (the CLI's --inputs with several "
                                           ".npz or a folder): count, the sample walked, the first differing one, "
                                           "and per output its statistics against the first engine")
    sides: DiffSides | None = Field(default=None, description="the CLI only: a diff of two sides, each engine "
                                    "running its own model (docs/diff.md, Two sides)")
    fail_on: list[Literal["masked", "edge"]] = Field(default_factory=list)
    fails: bool | None = Field(default=None, description="whether this diff fails (the CLI's exit 1): an output "
                               "differs, or what fail_on names")
    subgraphs: list[DiffBody] = Field(default_factory=list, description="each If/Loop/Scan of the main graph")
    trace: dict[str, Any] | None = Field(default=None, description="the precision trace (an `@f16` engine): "
                                         "first_overflow, first_nan, first_underflow, largest_finite")
    patterns: dict[str, str] = Field(description="the clip-like patterns of the reported nodes, each summarised")
    graph: DiffGraph | None = Field(default=None, description="the API only: the part of the graph the inspector "
                                    "draws (app/clipbridge/diff/graph_view.py); null when nothing differs")
