"""A scan (or a translation) as lint results: one item per finding per clip x target, with a stable fingerprint,
the --select/--ignore filters, a baseline and the exit code. The renderers (sarif, junit, github, markdown)
read only this."""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from clipbridge.service.capabilities import version_field
from clipbridge.dialects import registry
from clipbridge.lint.filters import status_after_filter
from clipbridge.lint.rules import UNRESOLVED

LEVELS = ("info", "warning", "error")
RANK = {s: i for i, s in enumerate(LEVELS)}


@dataclass
class Item:
    """One finding at one clip for one target ('' when it is about the clip whatever the target)."""

    clip: int
    where: str  # path/node: the clip's logical location in the model
    target: str
    code: str
    severity: str
    message: str
    finding: dict[str, Any]
    fingerprint: str = ""
    suppressed: bool = False  # in the baseline

    @property
    def reading(self) -> str | None:
        """The dialect reading the finding holds under (None: the default readings)."""
        return self.finding.get("reading")


@dataclass
class Case:
    """One clip x target: its status and the items that belong to it."""

    clip: int
    where: str
    pattern: str
    target: str
    status: str
    items: list[Item] = field(default_factory=list)


@dataclass
class LintReport:
    artifact: str  # the model or spec file as given (SARIF artifactLocation.uri)
    kind: str  # 'scan' or 'translate'
    targets: list[str]
    cases: list[Case]
    items: list[Item]
    clips: int
    fail_on: str = "warning"
    suppressed: int = 0
    filtered: bool = False  # --select/--ignore/--baseline/--fail-on given: exit code from the items

    def failing(self) -> list[Item]:
        """Items that fail the run: not suppressed, severity at or above fail_on."""
        return [i for i in self.items if not i.suppressed and RANK[i.severity] >= RANK[self.fail_on]]

    def exit_code(self, status_code: int) -> int:
        """The status-based code (0/1/2) unless a lint option was given, then 1 if anything fails, else 0."""
        if not self.filtered:
            return status_code
        return 1 if self.failing() else 0

    def summary(self) -> str:
        counts = Counter(i.severity for i in self.items if not i.suppressed)
        text = (f"{self.clips} clip(s), {len(self.targets)} target(s): {counts['error']} error(s), "
                f"{counts['warning']} warning(s), {counts['info']} info")
        if self.suppressed:
            text += f"; {self.suppressed} suppressed by the baseline"
        return text


def fingerprint(where: str, target: str, code: str) -> str:
    """Stable across runs and machines: the clip's location, the target and the code (not the message)."""
    return hashlib.sha256(f"{where}|{target}|{code}".encode()).hexdigest()[:32]


def _item(clip: int, where: str, target: str, f: dict[str, Any]) -> Item:
    return Item(clip, where, target, f["code"], f["severity"], f["message"], f, fingerprint(where, target, f["code"]))


def from_scan(body: dict[str, Any], artifact: str) -> LintReport:
    """The /v1/models/inspect body as lint items: translation findings per target, and the clip's own findings
    whose code no translation repeats; an unresolved clip is one `unresolved-clip` error."""
    labels = [t["label"] for t in body["targets"]]
    cases: list[Case] = []
    items: list[Item] = []
    for c in body["clips"]:
        where = f"{c['path']}/{c['node']}"
        if c["error"]:
            it = _item(c["id"], where, "", {"code": UNRESOLVED, "severity": "error", "message": c["error"],
                                            "source_behaviour": "", "target_behaviour": "", "witness": None,
                                            "reading": None})
            items.append(it)
            cases += [Case(c["id"], where, c["pattern"], label, "unsupported", [it]) for label in labels]
            continue
        seen = {f["code"] for t in c["translations"] for f in t["findings"]}
        items += [_item(c["id"], where, "", f) for f in c["findings"] if f["code"] not in seen]
        for t in c["translations"]:
            case = Case(c["id"], where, c["pattern"], t["label"], t["status"],
                        [_item(c["id"], where, t["label"], f) for f in t["findings"]])
            items += case.items
            cases.append(case)
    return LintReport(artifact, "scan", labels, cases, items, len(body["clips"]))


def target_label(target: dict[str, Any] | None, fallback: str) -> str:
    """'onnx:13', 'openvino:opset16', 'directml:2_1' from an emitted target spec (the version field is the one
    the dialect's registered target model has)."""
    if not target:
        return fallback
    d = registry.DIALECTS.get(str(target.get("dialect")))
    key = version_field(d) if d is not None else None
    version = target.get(key) if key else None
    if version is None and fallback.startswith(f"{target.get('dialect')}:"):
        return fallback  # a target spec without a version field: the version as asked
    return f"{target['dialect']}:{version}" if version else str(target["dialect"])


def from_translate(body: dict[str, Any], artifact: str, labels: list[str] | None = None) -> LintReport:
    """A /v1/translate body as lint items: one clip (the source spec), one case per target."""
    src = body["source"]
    where = f"spec/{src.get('dialect', 'spec')}"
    pattern = body["meaning"].get("version", "")
    cases, items = [], []
    for i, t in enumerate(body["translations"]):
        fallback = labels[i] if labels and i < len(labels) else f"target{i}"
        label = target_label(t["target"], fallback)
        case = Case(0, where, pattern, label, t["status"], [_item(0, where, label, f) for f in t["findings"]])
        items += case.items
        cases.append(case)
    return LintReport(artifact, "translate", [c.target for c in cases], cases, items, 1)


def apply_filters(report: LintReport, select: list[str], ignore: list[str], fail_on: str | None,
                  baseline: dict[str, Any] | None) -> LintReport:
    """Drop items not selected or ignored, mark the ones the baseline already holds (a multiset of
    fingerprints: two identical findings need two entries), and set the failure threshold."""
    keep = [i for i in report.items if (not select or i.code in select) and i.code not in ignore]
    kept_ids = {id(i) for i in keep}
    for case in report.cases:
        if len(case.items) != sum(1 for i in case.items if id(i) in kept_ids):
            case.items = [i for i in case.items if id(i) in kept_ids]
            case.status = status_after_filter(case.status, [i.finding for i in case.items])
    report.items = keep
    if baseline is not None:
        known = Counter(e["fingerprint"] for e in baseline.get("findings", []))
        for i in keep:
            if known[i.fingerprint] > 0:
                known[i.fingerprint] -= 1
                i.suppressed = True
        report.suppressed = sum(1 for i in keep if i.suppressed)
    report.fail_on = fail_on or "warning"
    report.filtered = bool(select or ignore or fail_on or baseline is not None)
    return report

