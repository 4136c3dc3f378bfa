"""Translate a clip spec into other dialects: resolve, emit per target, compare, and report."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError, to_json

from clipbridge.dialects import registry
from clipbridge.dialects.kit.base import Resolved
from clipbridge.dialects.kit.common import Emitted, Mode
from clipbridge.core.drift import UNSUPPORTED, compare, demoted, source_findings, status_of
from clipbridge.core.errors import RejectedSpec, located
from clipbridge.core.findings import Code, Finding, Severity
from clipbridge.core.meaning import Meaning, State, evolve
from clipbridge.core.memo import MEMO_MAX_KEY_BYTES, Memo
from clipbridge.core.settings import Settings
from clipbridge.service import json_text

if TYPE_CHECKING:  # annotations only: the unions import every dialect (app/clipbridge/service/specs.py)
    from clipbridge.service.specs import AnySpec, AnyTarget

__all__ = ["Resolved", "Translation", "TranslateResult", "resolve_spec", "default_targets", "target_from",
           "emit_to", "translate_one", "translate", "translate_text"]


@dataclass
class Translation:
    target: dict[str, Any] | None
    status: str
    findings: list[Finding] = field(default_factory=list)
    artifacts: Mapping[str, str] = field(default_factory=dict)
    meaning: Meaning | None = None

    def to_json(self, artifacts: bool = True) -> dict[str, Any]:
        """The translation; `artifacts=False` leaves them out ({}), and a lazy one is then never built."""
        return {"target": self.target, "status": self.status,
                "findings": [f.to_json() for f in self.findings],
                "artifacts": dict(self.artifacts) if artifacts else {},
                "meaning": self.meaning.to_json() if self.meaning else None}


def resolve_spec(spec: AnySpec) -> Resolved:
    """Any dialect's spec (compact or native form) to its meaning."""
    return registry.DIALECTS[spec.dialect].resolve(spec)


@lru_cache(maxsize=64)
def _newest(make: Callable[[str | None], AnyTarget]) -> AnyTarget:
    """A dialect's newest-version target, built once per dialect (keyed on its `target` function: a registry a
    test swaps in gets its own); target models are never mutated."""
    return make(None)


def default_targets(source_dialect: str) -> list[AnyTarget]:
    """Every other default dialect at its newest version."""
    return [_newest(registry.DIALECTS[name].target) for name in registry.default_names() if name != source_dialect]


def target_from(item: str | AnyTarget) -> AnyTarget:
    """A dialect name (its newest version) or a target model, as a target model."""
    if isinstance(item, str):
        return _newest(registry.get(item).target)
    return item


def emit_to(src: Resolved, target: AnyTarget, mode: Mode) -> Emitted:
    # A promoting source (PyTorch int + float bound) goes to other dialects as its input-dtype clip; compare()
    # still sees the promoting meaning and reports dtype-promotion.
    m = src.meaning if target.dialect == src.dialect else demoted(src.meaning)
    return registry.DIALECTS[target.dialect].emit(m, target, mode, src.shape)


def translate_one(src: Resolved, target: AnyTarget, mode: Mode) -> Translation:
    """One target: emit, resolve what was emitted, compare meanings, merge the findings."""
    m = src.meaning
    if m.dynamic:
        same = _runtime_bounds_kept(src, target, mode)
        if same is not None:
            return same
        return Translation(None, UNSUPPORTED, [Finding(
            Code.DYNAMIC_BOUNDS, Severity.ERROR, "The source computes its bounds at run time; a translation needs "
            "constant bounds (OpenVINO Clamp attributes, DirectML Min/Max, ONNX initializers)")])
    e = emit_to(src, target, mode)
    notes = list(e.notes)
    if src.strided and not registry.DIALECTS[target.dialect].strided_tensors:
        notes.append(Finding(Code.STRIDES, Severity.INFO, "The DirectML tensor is strided or broadcast; "
                             f"{target.dialect} tensors are dense: the target clips the dense elements"))
    if e.meaning is None or e.unsupported:
        return Translation(e.spec, UNSUPPORTED, notes + source_findings(m), e.artifacts, e.meaning)
    found = compare(m, e.meaning)
    # The other readings' findings keep their own message and witness (never lent to a default-reading finding).
    merged = _merge(notes, found) + _reading_findings(m, e.meaning, found) + source_findings(m)
    return Translation(e.spec, status_of(merged, False), merged, e.artifacts, e.meaning)


def _runtime_bounds_kept(src: Resolved, target: AnyTarget, mode: Mode) -> Translation | None:
    """A clip whose bounds are computed at run time, towards its own dialect at an op version no older than its
    own (ONNX Clip-11 -> Clip-13: min and max stay inputs): the same op computes the same function of the same
    run-time values, so it is exact, not unsupported (issue 37). None when that does not hold (another dialect,
    an older version with attribute bounds, or a version whose rules differ for this dtype)."""
    m = src.meaning
    if target.dialect != src.dialect:
        return None
    order = [str(v["version"]) for v in registry.DIALECTS[src.dialect].capability()["versions"]]
    if m.version not in order or m.lower is None or m.upper is None:  # a Min/Max pair, a bound with no stand-in
        return None
    stand_in = Resolved(src.dialect, evolve(m, dynamic=False), src.normalized, src.shape)
    e = emit_to(stand_in, target, mode)
    if e.meaning is None or e.unsupported or e.meaning.version not in order:
        return None
    if order.index(e.meaning.version) < order.index(m.version):
        return None
    if any(f.severity is not Severity.INFO for f in compare(stand_in.meaning, e.meaning)):
        return None
    same = "the same op takes them as inputs" if e.meaning.version == m.version else \
        f"{e.meaning.version} takes them as inputs as {m.version} does"
    return Translation(None, "exact", [Finding(
        Code.DYNAMIC_BOUNDS, Severity.INFO, f"The bounds are computed at run time; {same} and computes the same "
        "function of them: keep the node as it is")])


def _reading_findings(src: Meaning, tgt: Meaning, found: list[Finding]) -> list[Finding]:
    """Drift under the source's or the target's other readings (Meaning.alternates), where it differs from the
    default readings' findings: each has `reading` set (and its witness too); the message still names it."""
    names = dict.fromkeys(name for m in (src, tgt) for name, _ in m.alternates)
    if not names:
        return []
    seen = {(f.code, f.message, repr(f.witness)) for f in found}  # repr: a NaN witness equals itself
    out: list[Finding] = []
    for name in names:  # each side under that reading where it has it, else its one meaning
        a, b = src.under(name), tgt.under(name)
        rejected = [m for m in (a, b) if m.state is State.REJECTED]
        if rejected:
            out.append(Finding(Code.MIN_GREATER_THAN_MAX, Severity.ERROR, f"{rejected[0].dialect} refuses to "
                               f"build this clip: {rejected[0].reason}", a.describe(), b.describe()).under(name))
            continue
        for f in compare(a, b):
            if (f.code, f.message, repr(f.witness)) not in seen:
                seen.add((f.code, f.message, repr(f.witness)))
                out.append(f.under(name))
    return out


def _merge(notes: list[Finding], found: list[Finding]) -> list[Finding]:
    """Emit notes first; a comparison finding of the same code lends its witness instead of repeating, and its
    severity when higher: one bound change has one severity whichever target emits it (issue 37: an emit note's
    warning towards ONNX was an error towards DirectML, where no note came first)."""
    out = list(notes)
    for f in found:
        twin = next((i for i, n in enumerate(out) if n.code is f.code and n.witness is None
                     and n.severity is not Severity.INFO and f.witness is not None), None)
        if f.witness is None and any(_covers(n, f) for n in out):
            continue
        if twin is not None:
            n = out[twin]
            severity = max(n.severity, f.severity, key=_rank)  # the witness shows the outputs change
            out[twin] = Finding(n.code, severity, n.message, f.source_behaviour, f.target_behaviour, f.witness)
        else:
            out.append(f)
    return out


def _covers(n: Finding, f: Finding) -> bool:
    """`n` already says what `f` says: the same code at least as severe. Engine notes are each their own fact
    (a NaN-bound note must not hide a 'cannot run this artifact' one), so those must also share the message."""
    same = n.code is f.code and (f.code is not Code.ENGINE_BEHAVIOUR or n.message == f.message)
    return same and _rank(n.severity) >= _rank(f.severity)


def _rank(s: Severity) -> int:
    return (Severity.INFO, Severity.WARNING, Severity.ERROR).index(s)


@dataclass
class TranslateResult:
    source: dict[str, Any]
    meaning: Meaning
    translations: list[Translation]

    def to_json(self, artifacts: bool = True) -> dict[str, Any]:
        return {"source": self.source, "meaning": self.meaning.to_json(),
                "translations": [t.to_json(artifacts) for t in self.translations]}


def translate(source: AnySpec, targets: list[str | AnyTarget] | None = None,
              mode: Mode = Mode.PRESERVE) -> TranslateResult:
    """The source's meaning and one translation per target (default: every other dialect, newest version)."""
    src = resolve_spec(source)
    if src.meaning.state is State.REJECTED:
        raise RejectedSpec(f"{src.dialect} refuses to build this clip: {src.meaning.reason}", "spec")
    if not targets:
        return TranslateResult(src.normalized, src.meaning,
                               [translate_one(src, t, mode) for t in default_targets(src.dialect)])
    out = []
    for i, item in enumerate(targets):
        with located(f"targets[{i}]"):  # a target's bad version names that target, not the source
            out.append(translate_one(src, target_from(item), mode))
    return TranslateResult(src.normalized, src.meaning, out)


def _dumps(result: TranslateResult, artifacts: bool = True) -> str:
    """The compact JSON text (json.dumps', byte for byte: app/clipbridge/service/json_text.py)."""
    return json_text.dumps(result.to_json(artifacts))


class Answer(str):
    """translate_text's JSON document, carrying the (code, count) pairs of its findings (sorted by code) for the
    findings metric, which then never scans the text (app/clipbridge/server/observability.py)."""

    codes: tuple[tuple[str, int], ...] = ()


def _answer(result: TranslateResult, artifacts: bool) -> Answer:
    out = Answer(_dumps(result, artifacts))
    out.codes = tuple(sorted(Counter(f.code.value for t in result.translations for f in t.findings).items()))
    return out


DEFAULT_MEMO = Memo(Settings.memo_bytes, Settings.memo_entries)


def translate_text(source: BaseModel, targets: list[Any] | None, mode: Mode, memo: Memo | None = None,
                   artifacts: bool = True) -> str:
    """translate() as a JSON document, memoized on a digest of the normalized request (translation is pure).

    `artifacts=False` (the request's include=[]): every translation's artifacts are {} and are never built.

    Requests whose normalized form passes MEMO_MAX_KEY_BYTES (model-form sources carry the model) are
    translated every time: holding them would keep megabytes per request after the answer."""
    memo = DEFAULT_MEMO if memo is None else memo
    fields = vars(source)  # the model's fields (getattr of an absent one goes through pydantic's __getattr__)
    if sum(len(fields.get(f) or "") for f in ("model", "ir_xml")) > MEMO_MAX_KEY_BYTES:
        memo.skipped += 1  # a model or IR source: not memoized, so not even its key (another copy) is built
        return _answer(translate(source, targets, mode), artifacts)  # type: ignore[arg-type]
    # Computed from the request pydantic already validated: the key is only a digest input, never parsed back.
    return memo.get_or_compute(_memo_key(source, targets, mode, artifacts),
                               lambda _key: _answer(translate(source, targets, mode), artifacts))  # type: ignore[arg-type]


def _memo_key(source: BaseModel, targets: list[Any] | None, mode: Mode, artifacts: bool) -> str:
    """The normalized request as one text: equal for equal requests, different for different ones. Written by
    pydantic_core (NaN and the infinities as distinct tokens); a string it cannot encode (a lone surrogate)
    makes it json.dumps' sorted text, whose spaces after ':' and ',' keep the two kinds of key apart."""
    doc = {"source": source.model_dump(mode="json"),
           "targets": None if targets is None else
           [t if isinstance(t, str) else t.model_dump(mode="json") for t in targets],
           "mode": mode.value, "artifacts": artifacts}
    try:
        return to_json(doc, inf_nan_mode="constants").decode()
    except PydanticSerializationError:
        return json.dumps(doc, sort_keys=True)
