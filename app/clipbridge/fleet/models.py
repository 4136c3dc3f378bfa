"""Fleet's report as a pydantic model: one line of results.jsonl per model (a list of them is the run's report,
from which report.sarif, junit.xml and summary.md are written). `clipbridge fleet` checks every line against it
before writing (clipbridge.fleet.reports); schemas/FleetRecord.json is exported from it (docs/fleet.md)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from clipbridge.core.errors import ClipBridgeError
from clipbridge.diff.models import DiffNode, DiffNodeRef


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FleetEngine(_Strict):
    name: str
    version: str | None = Field(description="null when the model failed before the engine ran")
    precision: str
    settings: dict[str, Any] | None = Field(description="how the engine ran, its threads included")


class FleetScan(_Strict):
    format: str = Field(description="onnx or openvino-ir")
    clips: int
    status: str = Field(description="the worst status across the default targets")
    clip_like: int


class FleetRecord(_Strict):
    model: str = Field(description="the model's path as discovered")
    path: str | None = Field(None, description="the model's path inside the registry (relative to the SOURCE it was "
                             "found under): what `--against` matches runs by; null in lines written before 0.1.0's "
                             "registry paths")
    sha256: str
    verdict: Literal["equal", "explained", "unexplained", "error"] | None = Field(
        description="the diff's verdict; error: the model could not be scanned or diffed; null: an IR, scanned "
        "and not diffed (it counts as equal)")
    first_divergence: DiffNodeRef | None
    findings: list[DiffNode] = Field(description="the diff's reported nodes, as /v1/models/diff has them")
    engines: list[FleetEngine]
    scan: FleetScan | None
    cached: bool
    seconds: float
    error: str | None


def check(record: dict[str, Any]) -> None:
    """A line that is not a FleetRecord (a shard of another version given to `fleet merge`) is a user's error that
    names the model and the field, never a traceback."""
    try:
        FleetRecord.model_validate(record)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ClipBridgeError(f"the results.jsonl line of {record.get('model')!r} is not a fleet result: {where}: "
                              f"{first['msg']}", "results.jsonl") from None
