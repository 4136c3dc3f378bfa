"""SARIF 2.1.0 (OASIS): one run, the rule catalogue as tool.driver.rules, one result per finding."""

from __future__ import annotations

from typing import Any

from clipbridge import __version__
from clipbridge.lint.report import Item, LintReport
from clipbridge.lint.rules import RULE_IDS, RULES, help_markdown

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
LEVEL = {"error": "error", "warning": "warning", "info": "note"}  # SARIF has no 'info'


def _rule(rule_id: str) -> dict[str, Any]:
    r = RULES[rule_id]
    return {"id": rule_id, "name": r.name, "shortDescription": {"text": r.title},
            "fullDescription": {"text": r.meaning},
            "help": {"text": f"{r.meaning} Sources: {'; '.join(r.sources)}.", "markdown": help_markdown(rule_id)},
            "defaultConfiguration": {"level": r.level},
            "properties": {"tags": ["clip", "semantic-drift"],
                           "dialects": {d: {"rule": rule, "source": src} for d, (rule, src) in r.dialects.items()}}}


def _result(report: LintReport, item: Item) -> dict[str, Any]:
    f = item.finding
    target = f" ({item.target})" if item.target else ""
    text = f"{item.code}{target} at {item.where}: {item.message}"
    w = f.get("witness")
    if w:
        text += f". Witness: input {w['input']} gives {w['source_output']} (source) but {w['target_output']} (target)"
    kind = "function" if report.kind == "scan" else "object"
    result: dict[str, Any] = {
        "ruleId": item.code, "ruleIndex": RULE_IDS.index(item.code), "level": LEVEL[item.severity],
        "message": {"text": text},
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": report.artifact}},
                       "logicalLocations": [{"name": item.where.rsplit("/", 1)[-1], "fullyQualifiedName": item.where,
                                             "kind": kind}]}],
        # GitHub code scanning keys alerts on this: the same finding keeps its alert across runs.
        "partialFingerprints": {"clipbridgeFinding/v1": item.fingerprint},
        "properties": {"clip": item.clip, "target": item.target or None, "severity": item.severity,
                       "reading": item.reading, "witness": w, "sourceBehaviour": f.get("source_behaviour") or None,
                       "targetBehaviour": f.get("target_behaviour") or None},
    }
    if item.suppressed:
        result["suppressions"] = [{"kind": "external", "justification": "in the clipbridge baseline"}]
        result["baselineState"] = "unchanged"
    return result


def render(report: LintReport) -> dict[str, Any]:
    """The SARIF log as JSON-ready data."""
    return {
        "$schema": SCHEMA_URI, "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "clipbridge", "version": __version__, "semanticVersion": __version__,
                                "rules": [_rule(r) for r in RULE_IDS]}},
            "artifacts": [{"location": {"uri": report.artifact}}],
            "results": [_result(report, i) for i in report.items],
            "invocations": [{"executionSuccessful": True,
                             "properties": {"summary": report.summary(), "suppressed": report.suppressed,
                                            "failOn": report.fail_on}}],
            "properties": {"targets": report.targets},
        }],
    }


def render_empty() -> dict[str, Any]:
    """A SARIF log with no run (a lint over no model that could be read)."""
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": []}
