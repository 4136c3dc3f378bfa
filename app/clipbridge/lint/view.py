"""A lint report (a scan or a translation as findings) as the findings view every report format is written from
(clipbridge.reports): a SARIF result and an annotation per item, a JUnit testsuite per target with a testcase per
clip x target, and the Markdown status matrix with the findings under it."""

from __future__ import annotations

from typing import Any

from clipbridge.lint.report import RANK, Case, Item, LintReport
from clipbridge.lint.rules import RULE_IDS, RULES, help_markdown
from clipbridge.reports import view as v

LEVEL: dict[str, v.Level] = {"error": "error", "warning": "warning", "info": "note"}  # SARIF has no 'info'
MAX_ROWS = 200  # a GitHub comment holds 65536 characters
ICON = {"drift": v.Strong("drift"), "unsupported": v.Strong("unsupported")}


def _rule(rule_id: str) -> v.Rule:
    r = RULES[rule_id]
    return v.Rule(rule_id, r.title, name=r.name, full=r.meaning,
                  help_text=f"{r.meaning} Sources: {'; '.join(r.sources)}.", help_markdown=help_markdown(rule_id),
                  level=r.level, properties={"tags": ["clip", "semantic-drift"], "dialects": {
                      d: {"rule": rule, "source": src} for d, (rule, src) in r.dialects.items()}})


def _witness(w: dict[str, Any] | None) -> str | None:
    return f"{w['input']} → {w['source_output']} / {w['target_output']}" if w else None


def _finding(report: LintReport, i: Item) -> v.Finding:
    f = i.finding
    target = f" ({i.target})" if i.target else ""
    text = f"{i.code}{target} at {i.where}: {i.message}"
    body = i.message
    w = f.get("witness")
    if w:
        text += f". Witness: input {w['input']} gives {w['source_output']} (source) but {w['target_output']} (target)"
        body += f"\nwitness: input {w['input']} gives {w['source_output']} (source), {w['target_output']} (target)"
    where = v.Location(report.artifact, i.where.rsplit("/", 1)[-1], i.where,
                       "function" if report.kind == "scan" else "object")
    props = {"clip": i.clip, "target": i.target or None, "severity": i.severity, "reading": i.reading, "witness": w,
             "sourceBehaviour": f.get("source_behaviour") or None,
             "targetBehaviour": f.get("target_behaviour") or None}
    return v.Finding(i.code, LEVEL[i.severity], text, where, _witness(w), props,
                     ("clipbridgeFinding/v1", i.fingerprint), i.suppressed,
                     title=f"clipbridge {i.code}{target} at {i.where}", annotation=f"{body}\nclipbridge explain {i.code}")


def _describe(i: Item) -> str:
    f = i.finding
    lines = [f"[{i.severity}] {i.code}: {i.message}"]
    if i.reading:  # a line of its own, so that a CI tool reads it without parsing the message
        lines.append(f"reading: {i.reading}")
    for k in ("source_behaviour", "target_behaviour"):
        if f.get(k):
            lines.append(f"{k.replace('_', ' ')}: {f[k]}")
    if f.get("witness"):
        w = f["witness"]
        lines.append(f"witness: input {w['input']} -> source {w['source_output']}, target {w['target_output']}")
    lines.append(f"fingerprint: {i.fingerprint}")
    return "\n".join(lines)


def _case(report: LintReport, case: Case, label: str, orphans: list[Item]) -> v.Case:
    own = case.items + [i for i in orphans if i.clip == case.clip and i not in case.items]
    failing = [i for i in own if not i.suppressed and RANK[i.severity] >= RANK[report.fail_on]]
    rest = [i for i in own if i not in failing]
    return v.Case(f"{case.where} [{label}]", case.where,
                  failures=[v.Failure(f"{i.code}: {i.message}", _describe(i), i.code) for i in failing],
                  output="\n".join([f"status: {case.status}"] + [
                      ("suppressed by the baseline: " if i.suppressed else "") + _describe(i) for i in rest]),
                  properties=[("reading", r) for r in dict.fromkeys(i.reading for i in own if i.reading)])


def suites(report: LintReport, prefix: str = "") -> list[v.Suite]:
    """A testsuite per target, a testcase per clip x target; a finding about a clip whatever the target joins
    each of its cases; a case fails by its unsuppressed findings at or above fail_on."""
    orphans = [i for i in report.items if not i.target]
    return [v.Suite(prefix + label, [_case(report, c, label, orphans) for c in report.cases if c.target == label])
            for label in report.targets]


def _matrix(report: LintReport) -> v.Table:
    clips: dict[int, tuple[str, str]] = {}
    status: dict[tuple[int, str], str] = {}
    for c in report.cases:
        clips.setdefault(c.clip, (c.where, c.pattern))
        status[(c.clip, c.target)] = c.status
    rows = tuple((str(cid), v.Code(where), pattern,
                  *(ICON.get(status.get((cid, t), ""), status.get((cid, t), "")) for t in report.targets))
                 for cid, (where, pattern) in sorted(clips.items()))
    return v.Table(("#", "clip", "pattern", *report.targets), rows)


def blocks(report: LintReport) -> list[v.Block]:
    """The status matrix, then the unsuppressed findings (errors first, at most MAX_ROWS)."""
    out: list[v.Block] = [v.Heading(3, ("clipbridge: ", v.Code(report.artifact))),
                          v.Paragraph((report.summary() + ".",)), _matrix(report)]
    shown = [i for i in report.items if not i.suppressed]
    cut = len(shown) - MAX_ROWS
    shown = sorted(shown, key=lambda i: (-RANK[i.severity], i.clip))[:MAX_ROWS]
    if shown:
        out.append(v.Table(("severity", "code", "clip", "target", "message", "witness"), tuple(
            (i.severity, v.Code(i.code), v.Code(i.where), i.target or "any", i.message,
             _witness(i.finding.get("witness")) or "") for i in shown)))
    if cut > 0:
        out.append(v.Paragraph((f"... and {cut} more finding(s) (the full list: `--format sarif` or `json`).",)))
    if report.suppressed:
        out.append(v.Paragraph((f"{report.suppressed} finding(s) suppressed by the baseline.",)))
    return out + [v.Paragraph(("Each code: `clipbridge explain CODE`.",))]


def view(report: LintReport) -> v.Report:
    return v.Report(
        report.artifact, [_finding(report, i) for i in report.items], [_rule(r) for r in RULE_IDS],
        summary=("clipbridge summary", report.summary()), run_properties={"targets": report.targets},
        invocation={"summary": report.summary(), "suppressed": report.suppressed, "failOn": report.fail_on},
        junit_name=f"clipbridge {report.kind}: {report.artifact}", suites=suites(report), markdown=blocks(report))
