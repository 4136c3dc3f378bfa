"""Translate a clip spec into other dialects: resolve, emit per target, compare, and report."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from pydantic import BaseModel

from app.dialects import directml, onnx, openvino
from app.dialects.common import Emitted, Mode
from app.drift import UNSUPPORTED, compare, source_findings, status_of
from app.errors import RejectedSpec, UnsupportedTarget, located
from app.findings import Code, Finding, Severity
from app.meaning import Meaning, State
from app.suggest import one_of
from app.specs import (AnySpec, AnyTarget, DirectMLTarget, OnnxSpec, OnnxTarget, OpenVinoSpec,
                       OpenVinoTarget)

DIALECTS = ("onnx", "openvino", "directml")


@dataclass(frozen=True)
class Resolved:
    """A source spec read, validated and resolved."""

    dialect: str
    meaning: Meaning
    normalized: dict[str, Any]
    shape: list | None
    strided: bool = False


@dataclass
class Translation:
    target: dict[str, Any] | None
    status: str
    findings: list[Finding] = field(default_factory=list)
    artifacts: dict[str, str] = field(default_factory=dict)
    meaning: Meaning | None = None

    def to_json(self) -> dict[str, Any]:
        return {"target": self.target, "status": self.status,
                "findings": [f.to_json() for f in self.findings], "artifacts": self.artifacts,
                "meaning": self.meaning.to_json() if self.meaning else None}


def resolve_spec(spec: AnySpec) -> Resolved:
    """Any dialect's spec (compact or native form) to its meaning."""
    if isinstance(spec, OnnxSpec):
        p = onnx.parse(spec)
        return Resolved("onnx", onnx.resolve(p), onnx.normalize(p), p.spec.shape)
    if isinstance(spec, OpenVinoSpec):
        q = openvino.parse(spec)
        return Resolved("openvino", openvino.resolve(q), openvino.normalize(q), q.spec.shape)
    d = directml.parse(spec)
    t = spec.desc.InputTensor
    strided = t.Strides is not None and t.Strides != _packed_strides(t.Sizes)
    return Resolved("directml", directml.resolve(d), directml.normalize(d), list(t.Sizes), strided)


def _packed_strides(sizes: list[int]) -> list[int]:
    out, acc = [], 1
    for s in reversed(sizes):
        out.append(acc)
        acc *= s
    return list(reversed(out))


def default_targets(source_dialect: str) -> list[AnyTarget]:
    """Every other dialect at its newest version."""
    table: dict[str, AnyTarget] = {"onnx": OnnxTarget(dialect="onnx"), "openvino": OpenVinoTarget(dialect="openvino"),
                                   "directml": DirectMLTarget(dialect="directml")}
    return [t for name, t in table.items() if name != source_dialect]


def target_from(item: str | AnyTarget) -> AnyTarget:
    if isinstance(item, str):
        name = item.strip().lower()
        if name == "onnx":
            return OnnxTarget(dialect="onnx")
        if name == "openvino":
            return OpenVinoTarget(dialect="openvino")
        if name == "directml":
            return DirectMLTarget(dialect="directml")
        raise UnsupportedTarget(one_of("Unknown target dialect", item, DIALECTS))
    return item


def emit_to(src: Resolved, target: AnyTarget, mode: Mode) -> Emitted:
    if isinstance(target, OnnxTarget):
        return onnx.emit(src.meaning, target, mode, src.shape)
    if isinstance(target, OpenVinoTarget):
        return openvino.emit(src.meaning, target, mode, src.shape)
    return directml.emit(src.meaning, target, mode, src.shape)


def translate_one(src: Resolved, target: AnyTarget, mode: Mode) -> Translation:
    """One target: emit, resolve what was emitted, compare meanings, merge the findings."""
    m = src.meaning
    if m.dynamic:
        return Translation(None, UNSUPPORTED, [Finding(
            Code.DYNAMIC_BOUNDS, Severity.ERROR, "The source computes its bounds at run time; a translation needs "
            "constant bounds (OpenVINO Clamp attributes, DirectML Min/Max, ONNX initializers)")])
    e = emit_to(src, target, mode)
    notes = list(e.notes)
    if src.strided and target.dialect != "directml":
        notes.append(Finding(Code.STRIDES, Severity.INFO, "The DirectML tensor is strided or broadcast; "
                             f"{target.dialect} tensors are dense: the target clips the dense elements"))
    if e.meaning is None or e.unsupported:
        return Translation(e.spec, UNSUPPORTED, notes + source_findings(m), e.artifacts, e.meaning)
    found = compare(m, e.meaning)
    merged = _merge(notes, found) + source_findings(m)
    return Translation(e.spec, status_of(merged, False), merged, e.artifacts, e.meaning)


def _merge(notes: list[Finding], found: list[Finding]) -> list[Finding]:
    """Emit notes first; a comparison finding of the same code lends its witness instead of repeating."""
    out = list(notes)
    for f in found:
        twin = next((i for i, n in enumerate(out) if n.code is f.code and n.witness is None
                     and n.severity is not Severity.INFO and f.witness is not None), None)
        if f.witness is None and any(n.code is f.code and _rank(n.severity) >= _rank(f.severity) for n in out):
            continue
        if twin is not None:
            n = out[twin]
            out[twin] = Finding(n.code, n.severity, n.message, f.source_behaviour, f.target_behaviour, f.witness)
        else:
            out.append(f)
    return out


def _rank(s: Severity) -> int:
    return (Severity.INFO, Severity.WARNING, Severity.ERROR).index(s)


@dataclass
class TranslateResult:
    source: dict[str, Any]
    meaning: Meaning
    translations: list[Translation]

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "meaning": self.meaning.to_json(),
                "translations": [t.to_json() for t in self.translations]}


def translate(source: AnySpec, targets: list[str | AnyTarget] | None = None,
              mode: Mode = Mode.PRESERVE) -> TranslateResult:
    """The source's meaning and one translation per target (default: every other dialect, newest version)."""
    src = resolve_spec(source)
    if src.meaning.state is State.REJECTED:
        raise RejectedSpec(f"{src.dialect} refuses to build this clip: {src.meaning.reason}", "source")
    if not targets:
        return TranslateResult(src.normalized, src.meaning,
                               [translate_one(src, t, mode) for t in default_targets(src.dialect)])
    out = []
    for i, item in enumerate(targets):
        with located(f"targets[{i}]"):  # a target's bad version names that target, not the source
            out.append(translate_one(src, target_from(item), mode))
    return TranslateResult(src.normalized, src.meaning, out)


@lru_cache(maxsize=4096)
def _translate_cached(key: str) -> str:
    from pydantic import TypeAdapter

    from app.specs import Spec, TargetSpec
    payload = json.loads(key)
    source = TypeAdapter(Spec).validate_python(payload["source"])
    targets = [t if isinstance(t, str) else TypeAdapter(TargetSpec).validate_python(t)
               for t in payload["targets"]] if payload["targets"] is not None else None
    return json.dumps(translate(source, targets, Mode(payload["mode"])).to_json(), allow_nan=False,
                      separators=(",", ":"))


def translate_text(source: BaseModel, targets: list[Any] | None, mode: Mode) -> str:
    """translate() as a JSON document, memoized on the normalized request (translation is pure)."""
    key = json.dumps({"source": source.model_dump(mode="json"),
                      "targets": None if targets is None else
                      [t if isinstance(t, str) else t.model_dump(mode="json") for t in targets],
                      "mode": mode.value}, sort_keys=True)
    return _translate_cached(key)
