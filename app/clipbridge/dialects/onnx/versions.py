"""ONNX Clip's versions as data (Clip-1, -6, -11, -12, -13) and how a target's opset is read.

The Clip schema in force is the highest `since_version` at or below the requested opset (onnx.defs.get_schema);
a row only where the behaviour changes, as onnx/reference/ops/op_clip.py and OpenVINO's ONNX frontend do."""

from __future__ import annotations

from dataclasses import dataclass

import onnx

from clipbridge.core.dtypes import BFLOAT16, FLOAT16, FLOAT32, FLOAT64, INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, \
    UINT64, DType
from clipbridge.core.errors import ClipBridgeError
from clipbridge.dialects.kit.versions import VersionTable
from clipbridge.dialects.onnx.spec import NAME, OnnxTarget

FLOATS = (FLOAT16, FLOAT32, FLOAT64)
INTS = (INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64)
NEWEST_OPSET = 13  # the opset a translation targets by default: the newest Clip schema


@dataclass(frozen=True)
class ClipSchema:
    """One ONNX Clip version: where the bounds live and which element types it takes."""

    since: int
    attributes: bool  # bounds are float attributes (Clip-1, -6) rather than typed inputs (Clip-11+)
    dtypes: tuple[DType, ...]
    summary: str

    @property
    def name(self) -> str:
        return f"Clip-{self.since}"


clip_1 = ClipSchema(1, True, FLOATS, "float attributes min/max with no stated default; legacy consumed_inputs")
clip_6 = ClipSchema(6, True, FLOATS, "float attributes, defaults -3.402823e+38 / 3.402823e+38")
clip_11 = ClipSchema(11, False, FLOATS, "optional scalar inputs of type T, defaults lowest()/max()")
clip_12 = ClipSchema(12, False, FLOATS + INTS, "all numeric types")
clip_13 = ClipSchema(13, False, FLOATS + INTS + (BFLOAT16,), "adds bfloat16; min > max gives max")
CLIP_VERSIONS: VersionTable[int, ClipSchema] = VersionTable(
    "opset", tuple((s.since, s) for s in (clip_1, clip_6, clip_11, clip_12, clip_13)),
    too_old="ONNX opsets start at {first}. Got: {requested}")


def schema_for_opset(opset: int) -> ClipSchema:
    """The Clip schema in force at `opset`: the highest since_version at or below it."""
    return CLIP_VERSIONS.resolve(opset)


def first_schema_for(dt: DType) -> ClipSchema | None:
    """The first Clip version whose type constraint T takes `dt`."""
    return next((s for s in CLIP_VERSIONS if dt in s.dtypes), None)


def newest_known_opset() -> int:
    """The newest ai.onnx opset the installed onnx package can check (an emitted model must pass it)."""
    return int(onnx.defs.onnx_opset_version())


def _opset(version: str) -> int:
    if not version.strip().isdigit() or int(version) < 1:
        raise ClipBridgeError(f"onnx:N takes an opset number from 1. Got: {version!r}")
    return int(version)


def check_version(version: str) -> str:
    """An opset number from 1 to 1000 (the Clip schema it selects is looked up when emitting)."""
    if not version.strip().isdigit():
        raise ClipBridgeError(f"an ONNX target's version is an opset number (onnx:13). Got: {version!r}")
    OnnxTarget(dialect=NAME, opset=int(version))  # the model's own range check (ValidationError)
    return version.strip()


def target(version: str | None) -> OnnxTarget:
    """A target opset (beyond 1000 read as 1000: every opset past 13 selects Clip-13)."""
    if version is None:
        return OnnxTarget(dialect=NAME)
    return OnnxTarget(dialect=NAME, opset=min(_opset(version), 1000))
