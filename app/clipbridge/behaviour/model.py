"""One row of the behaviour table (clipbridge.behaviour): a frozen record, no logic."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

ENGINES = ("onnxruntime", "openvino", "onnx-reference")
SPEC = "spec"  # the side a row gives for the specification itself


def frozen(d: Mapping[str, str] | None = None) -> Mapping[str, str]:
    """A read-only mapping: a row never changes after the table is built."""
    return MappingProxyType(dict(d or {}))


@dataclass(frozen=True)
class Row:
    """How an engine (or the specification) computes one op under one condition.

    `gives` is what each side gives, in words (engine or "spec" -> text); `reading` is the same as a key the code
    reads (engine -> "propagate", "lower", "zero", ...), where a consumer needs one. `source` is a spec citation
    or "measured with ENGINE VERSION"; `test` is the pytest node id that measures (or checks) it. `phrases` are
    the words that state this fact: only this package may write them (tests/behaviour/test_once.py)."""

    id: str
    ops: tuple[str, ...]
    engines: tuple[str, ...]
    condition: str
    gives: Mapping[str, str]
    source: str
    test: str
    kind: str  # nan, bound, rounding, saturation, cast, precision, accumulation, fusion, lowering, rewrite
    reading: Mapping[str, str] = field(default_factory=frozen)
    phrases: tuple[str, ...] = ()
    cause: str | None = None  # the diff's cause name where the diff names this fact

    def text(self) -> str:
        """The fact in one sentence, as reports and notes quote it."""
        sides = "; ".join(f"{k}: {v}" for k, v in self.gives.items())
        return f"{'/'.join(self.ops)}, {self.condition}: {sides} ({self.source})"


# The engine versions the table was measured with: each `measured(...)` source names them; the measuring tests
# re-run on the installed engines, so a release that changes a fact fails its test first.
VERSIONS = {"onnxruntime": "onnxruntime 1.32.0 (CPU)", "openvino": "OpenVINO 2026.4.1 (CPU plugin)",
            "onnx-reference": "onnx 1.21.0 reference evaluator", "litert": "ai-edge-litert 2.3.0", "litert-torch": "litert-torch 0.10.0",
            "coreml": "coremltools (converter-chain-notes.md)", "torch": "torch eager (float32)"}
X86_MAXPS = "Intel SDM vol. 2B MAXPS/MINPS: if either operand is NaN, the second operand is returned"


def measured(*engines: str) -> str:
    """A source that is a measurement: 'measured with ENGINE VERSION, ...'."""
    return "measured with " + ", ".join(VERSIONS[e] for e in engines)
