"""Drift findings: what changes between a source meaning and a target meaning, with a witness input."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from clipbridge.core.numbers import Number, wire_number


class Severity(StrEnum):
    INFO = "info"  # an adjustment or a fact; the outputs do not change
    WARNING = "warning"  # outputs may change, or a behaviour is undocumented
    ERROR = "error"  # outputs change, or the target cannot build the op


class Code(StrEnum):
    BOUND_ROUNDING = "bound-rounding"
    BOUND_SATURATION = "bound-saturation"
    BOUND_PRECISION = "bound-precision"
    DEFAULT_BOUND = "default-bound"
    MIN_GREATER_THAN_MAX = "min-greater-than-max"
    NAN_INPUT = "nan-input"
    NAN_BOUND = "nan-bound"
    INFINITE_BOUND = "infinite-bound"
    FLOAT16_BOUND_OVERFLOW = "float16-bound-overflow"
    DTYPE_UNSUPPORTED = "dtype-unsupported"
    VERSION_UNSUPPORTED = "version-unsupported"
    RANK_UNSUPPORTED = "rank-unsupported"
    SCALE_BIAS = "scale-bias"
    STRIDES = "strides"
    DYNAMIC_BOUNDS = "dynamic-bounds"
    SHAPE_UNKNOWN = "shape-unknown"
    ENGINE_BEHAVIOUR = "engine-behaviour"
    TENSOR_BOUNDS = "tensor-bounds"
    DTYPE_PROMOTION = "dtype-promotion"


# One line each on what a code means and where its rule comes from (README table, /v1/dialects).
CODE_DOCS: dict[Code, str] = {
    Code.BOUND_ROUNDING: "An integer tensor's bound is rounded differently: DirectML truncates toward zero, "
                         "OpenVINO ceils min and floors max, ONNX Clip-11+ bounds are already typed.",
    Code.BOUND_SATURATION: "A bound lies outside the dtype's range and is clamped to it (OpenVINO saturates; "
                           "DirectML does not document out-of-range casts).",
    Code.BOUND_PRECISION: "The carrier type cannot hold the bound exactly: a FLOAT DirectML Min/Max for an int32 "
                          "or int64 bound beyond 2^24, an OpenVINO double beyond 2^53, a float ONNX attribute for a "
                          "double tensor.",
    Code.DEFAULT_BOUND: "A missing bound defaults differently: Clip-6's FLT_MAX literals (inf in float16), "
                        "Clip-11+'s numeric_limits<T>::lowest()/max(), none in OpenVINO/DirectML.",
    Code.MIN_GREATER_THAN_MAX: "min > max: ONNX Clip-13 gives max, OpenVINO Clamp-1 refuses to build, DirectML's "
                               "two documents give Max or Min.",
    Code.NAN_INPUT: "NaN inputs: ONNX and OpenVINO propagate them; DirectML does not document NaN.",
    Code.NAN_BOUND: "A NaN bound: the ONNX formula gives all-NaN, OpenVINO rejects it (min <= max fails), "
                    "DirectML does not document it.",
    Code.INFINITE_BOUND: "An infinite bound the target cannot carry as such (an integer cast of inf, an IR "
                         "attribute older OpenVINO reads wrongly).",
    Code.FLOAT16_BOUND_OVERFLOW: "A bound beyond float16's range overflows to inf when cast (Clip-6 defaults, "
                                 "FLOAT Min/Max on a FLOAT16 tensor).",
    Code.DTYPE_UNSUPPORTED: "The target version cannot take the tensor's dtype.",
    Code.VERSION_UNSUPPORTED: "The target version is valid but beyond what this installation can build and check "
                              "(an ONNX opset newer than the installed onnx package knows).",
    Code.RANK_UNSUPPORTED: "The target cannot take the tensor's rank (DirectML FL < 3.0: exactly 4; else 1 to 8).",
    Code.SCALE_BIAS: "DirectML's ScaleBias (x*Scale+Bias before clipping) and how the target expresses it.",
    Code.STRIDES: "A strided or broadcast DirectML tensor; ONNX and OpenVINO tensors are dense.",
    Code.DYNAMIC_BOUNDS: "Bounds computed at run time: the meaning depends on values clipbridge cannot see.",
    Code.SHAPE_UNKNOWN: "The target needs concrete sizes the source does not give.",
    Code.ENGINE_BEHAVIOUR: "A real engine deviates from its own spec here (observed, cited); it does not change "
                           "the status, which is about the specs.",
    Code.TENSOR_BOUNDS: "Per-element (tensor-valued) bounds: PyTorch broadcasts them, StableHLO takes rank 0 or the "
                        "operand's shape; ONNX Clip, OpenVINO and DirectML take scalars only (Max then Min instead).",
    Code.DTYPE_PROMOTION: "The output dtype changes: PyTorch promotes an integer tensor clamped by a float scalar to "
                          "the default float dtype; ONNX, OpenVINO and the others keep the input's dtype.",
}


@dataclass(frozen=True)
class Witness:
    input: Number
    source_output: Number
    target_output: Number
    # The dialect reading (Dialect.readings: "2022-doc", "chromium", "header", "builtin") the outputs were computed
    # under; None for the default readings. Data, so that a CI tool never parses the message (issue 37).
    reading: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"input": wire_number(self.input), "source_output": wire_number(self.source_output),
                "target_output": wire_number(self.target_output), "reading": self.reading}


@dataclass(frozen=True)
class Finding:
    code: Code
    severity: Severity
    message: str
    source_behaviour: str = ""
    target_behaviour: str = ""
    witness: Witness | None = None
    reading: str | None = None  # the reading this finding holds under (None: the default readings)

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code._value_, "severity": self.severity._value_, "message": self.message,
                "source_behaviour": self.source_behaviour, "target_behaviour": self.target_behaviour,
                "witness": self.witness.to_json() if self.witness else None, "reading": self.reading}

    def under(self, reading: str) -> "Finding":
        """This finding as it holds under another reading: the field set, the message still readable."""
        w = self.witness
        return Finding(self.code, self.severity, f"under the {reading} reading: {self.message}",
                       self.source_behaviour, self.target_behaviour,
                       Witness(w.input, w.source_output, w.target_output, reading) if w else None, reading)


@dataclass
class Notes:
    """Findings collected while resolving or emitting, before the comparison adds its own."""

    items: list[Finding] = field(default_factory=list)

    def add(self, code: Code, severity: Severity, message: str, source: str = "", target: str = "") -> None:
        self.items.append(Finding(code, severity, message, source, target))
