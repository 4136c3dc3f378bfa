"""JUnit XML: a testsuite per target, a testcase per clip x target, a failure per finding that fails the run."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from clipbridge.lint.report import RANK, Item, LintReport


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


def _reading_properties(tc: ET.Element, items: list[Item]) -> None:
    """The readings the case's findings hold under, as testcase properties (the convention pytest's
    record_property writes), so that a CI tool reads them as data."""
    readings = list(dict.fromkeys(i.reading for i in items if i.reading))
    if readings:
        props = ET.SubElement(tc, "properties")
        for r in readings:
            ET.SubElement(props, "property", name="reading", value=r)


def render(report: LintReport) -> str:
    """The XML document (UTF-8 declaration included); built with ElementTree, so every text is escaped."""
    return render_many([report], f"clipbridge {report.kind}: {report.artifact}", prefix=False)


def render_many(reports: list[LintReport], name: str = "clipbridge lint", prefix: bool = True) -> str:
    """One document over several reports (`clipbridge lint`): each model's testsuites, named `model: target`."""
    root = ET.Element("testsuites", name=name)
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for report in reports:
        _suites(root, report, totals, f"{report.artifact}: " if prefix else "")
    for k, v in totals.items():
        root.set(k, str(v))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _suites(root: ET.Element, report: LintReport, totals: dict[str, int], prefix: str) -> None:
    """A testsuite per target of one report, appended to `root`; the counts added to `totals`."""
    orphans = [i for i in report.items if not i.target]  # about a clip whatever the target
    for label in report.targets:
        suite = ET.SubElement(root, "testsuite", name=prefix + label)
        counts = dict.fromkeys(totals, 0)
        for case in (c for c in report.cases if c.target == label):
            tc = ET.SubElement(suite, "testcase", name=f"{case.where} [{label}]", classname=case.where)
            counts["tests"] += 1
            own = case.items + [i for i in orphans if i.clip == case.clip and i not in case.items]
            _reading_properties(tc, own)
            failing = [i for i in own if not i.suppressed and RANK[i.severity] >= RANK[report.fail_on]]
            for i in failing:
                el = ET.SubElement(tc, "failure", message=f"{i.code}: {i.message}", type=i.code)
                el.text = _describe(i)
            counts["failures"] += 1 if failing else 0
            rest = [i for i in own if i not in failing]
            if rest or case.status:
                out = ET.SubElement(tc, "system-out")
                out.text = "\n".join([f"status: {case.status}"] + [
                    ("suppressed by the baseline: " if i.suppressed else "") + _describe(i) for i in rest])
        for k, v in counts.items():
            suite.set(k, str(v))
            totals[k] += v
