"""SARIF 2.1.0 (OASIS): a run per report, its rules as tool.driver.rules, one result per finding. The only module
that writes SARIF (tests/data/sarif-schema-2.1.0.json validates what it writes)."""

from __future__ import annotations

import json
from typing import Any

from clipbridge import __version__
from clipbridge.reports.view import Finding, Location, Report, Rule

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
VERSION = "2.1.0"


def _rule(r: Rule) -> dict[str, Any]:
    out: dict[str, Any] = {"id": r.id}
    if r.name is not None:
        out["name"] = r.name
    out["shortDescription"] = {"text": r.short}
    if r.full is not None:
        out["fullDescription"] = {"text": r.full}
    if r.help_text is not None:
        out["help"] = {"text": r.help_text, **({"markdown": r.help_markdown} if r.help_markdown else {})}
    if r.level is not None:
        out["defaultConfiguration"] = {"level": r.level}
    if r.properties is not None:
        out["properties"] = r.properties
    return out


def _location(loc: Location) -> dict[str, Any]:
    out: dict[str, Any] = {"physicalLocation": {"artifactLocation": {"uri": loc.artifact}}}
    if loc.node is not None:
        logical = {"name": loc.node, **({"fullyQualifiedName": loc.qualified} if loc.qualified else {}),
                   "kind": loc.kind}
        out["logicalLocations"] = [logical]
    return out


def _result(f: Finding, index: dict[str, int]) -> dict[str, Any]:
    out: dict[str, Any] = {"ruleId": f.rule}
    if f.rule in index:
        out["ruleIndex"] = index[f.rule]
    out.update(level=f.level, message={"text": f.message}, locations=[_location(f.location)])
    if f.fingerprint:
        # GitHub code scanning keys alerts on this: the same finding keeps its alert across runs.
        out["partialFingerprints"] = {f.fingerprint[0]: f.fingerprint[1]}
    if f.properties is not None:
        out["properties"] = f.properties
    if f.suppressed:
        out["suppressions"] = [{"kind": "external", "justification": "in the clipbridge baseline"}]
        out["baselineState"] = "unchanged"
    return out


def run(report: Report) -> dict[str, Any]:
    """One SARIF run: the tool and its rules, the artifacts, the results, then what the report adds."""
    index = {r.id: i for i, r in enumerate(report.rules)}
    out: dict[str, Any] = {
        "tool": {"driver": {"name": "clipbridge", "version": __version__, "semanticVersion": __version__,
                            "rules": [_rule(r) for r in report.rules]}},
        "artifacts": [{"location": {"uri": a}} for a in (report.artifacts if report.artifacts is not None
                                                          else [report.artifact])],
        "results": [_result(f, index) for f in report.findings],
    }
    if report.invocation is not None:
        out["invocations"] = [{"executionSuccessful": True, "properties": report.invocation}]
    if report.run_properties is not None:
        out["properties"] = report.run_properties
    return out


def log(reports: list[Report]) -> dict[str, Any]:
    """The SARIF log as JSON-ready data: a run per report (none: a log with no run)."""
    return {"$schema": SCHEMA_URI, "version": VERSION, "runs": [run(r) for r in reports]}


def render(reports: list[Report]) -> str:
    """The log as text: pretty-printed, and never NaN (JSON has none; a witness carries "nan" as a string)."""
    return json.dumps(log(reports), indent=2, allow_nan=False) + "\n"
