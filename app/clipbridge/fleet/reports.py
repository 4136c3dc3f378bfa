"""The run's files: results.jsonl (one line per model, sorted by model), report.sarif (2.1.0, one result per
finding with the model as its artifact), junit.xml (one test case per model) and summary.md."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

from clipbridge import __version__
from clipbridge.diff.formats import CAUSES
from clipbridge.fleet.store import atomic_write, dumps
from clipbridge.lint.sarif import SCHEMA_URI

EQUAL = ("equal", "scanned")  # a scanned IR is not diffed: nothing differs (docs/fleet.md)


def exit_code(records: list[dict[str, Any]]) -> int:
    """0 every model equal, 1 any differs, 2 any failed to run."""
    if any(r["error"] for r in records):
        return 2
    return 1 if any(r["verdict"] not in EQUAL for r in records) else 0


def _finding_text(f: dict[str, Any]) -> str:
    w = f.get("witness") or {}
    outs = ", ".join(f"{e} {v}" for e, v in (w.get("outputs") or {}).items())
    return (f"{f['node']} ({f['op']}): {f['differing']}/{f['total']} differ, {f['origin'] or 'not replayed'}, "
            f"cause {f['cause'] or 'unexplained'}" + (f"; witness at {w.get('index')}: {outs}" if w else ""))


def sarif(records: list[dict[str, Any]]) -> dict[str, Any]:
    results, rules = [], set()
    for r in records:
        where = [{"physicalLocation": {"artifactLocation": {"uri": r["model"]}}}]
        if r["error"]:
            rules.add("error")
            results.append({"ruleId": "fleet/error", "level": "error", "message": {"text": r["error"]},
                            "locations": where})
        for f in r["findings"]:
            rule = f["cause"] or "unexplained"
            rules.add(rule)
            results.append({"ruleId": f"diff/{rule}", "level": "warning" if f["origin"] == "inherited" else "error",
                            "message": {"text": _finding_text(f)},
                            "locations": [{**where[0], "logicalLocations": [{"name": f["node"], "kind": "function"}]}],
                            "partialFingerprints": {"clipbridgeFleet/v1": f"{r['sha256']}|{f['node']}|{f['cause']}"},
                            "properties": {"op": f["op"], "origin": f["origin"], "witness": f.get("witness")}})
    described = {**CAUSES, "error": "The model could not be scanned or diffed (the error says why)."}
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [{
        "tool": {"driver": {"name": "clipbridge", "version": __version__, "semanticVersion": __version__,
                            "rules": [{"id": f"{'fleet' if x == 'error' else 'diff'}/{x}",
                                       "shortDescription": {"text": described.get(x, x)}} for x in sorted(rules)]}},
        "artifacts": [{"location": {"uri": r["model"]}} for r in records], "results": results}]}


def junit(records: list[dict[str, Any]]) -> str:
    root = ET.Element("testsuites", name="clipbridge fleet")
    suite = ET.SubElement(root, "testsuite", name="models", tests=str(len(records)),
                          failures=str(sum(1 for r in records if not r["error"] and r["verdict"] not in EQUAL)),
                          errors=str(sum(1 for r in records if r["error"])),
                          time=f"{sum(r['seconds'] for r in records):.3f}")
    for r in records:
        case = ET.SubElement(suite, "testcase", name=r["model"], classname="fleet", time=f"{r['seconds']:.3f}")
        if r["error"]:
            ET.SubElement(case, "error", message=r["error"][:200]).text = r["error"]
        elif r["verdict"] not in EQUAL:
            ET.SubElement(case, "failure", message=f"verdict {r['verdict']}").text = \
                "\n".join(_finding_text(f) for f in r["findings"])
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _introduced(r: dict[str, Any]) -> int:
    return sum(1 for f in r["findings"] if f["origin"] == "introduced")


def summary(records: list[dict[str, Any]], top: int = 10) -> str:
    verdicts = Counter("error" if r["error"] else r["verdict"] for r in records)
    out = ["# clipbridge fleet", "", f"{len(records)} models; " + ", ".join(f"{n} {v}" for v, n in
                                                                         sorted(verdicts.items())),
           f"{sum(r['cached'] for r in records)} from the cache; exit code {exit_code(records)}", ""]
    worst = sorted((r for r in records if r["error"] or r["verdict"] not in EQUAL),
                   key=lambda r: (not r["error"], -_introduced(r), r["model"]))[:top]
    if worst:
        out += ["## The worst models", "", "| model | verdict | introduced | first divergence | error |",
                "|---|---|---|---|---|"]
        for r in worst:
            fd = r["first_divergence"]
            out.append(f"| {r['model']} | {r['verdict']} | {_introduced(r)} | "
                       f"{fd['node'] + ' (' + fd['op'] + ')' if fd else '-'} | {(r['error'] or '-')[:120]} |")
        out.append("")
    out += ["## The slowest models", "", "| model | seconds | cached |", "|---|---|---|"]
    out += [f"| {r['model']} | {r['seconds']:.3f} | {r['cached']} |"
            for r in sorted(records, key=lambda r: -r["seconds"])[:top]]
    return "\n".join(out).replace("|  |", "| - |") + "\n"


def write_all(out: Path, records: list[dict[str, Any]]) -> None:
    """Every report, each written atomically; results.jsonl sorted by model (then sha256) so that two backends
    or a merge of shards give the same file."""
    records = sorted(records, key=lambda r: (r["model"], r["sha256"]))
    atomic_write(out / "results.jsonl", "".join(dumps(r) + "\n" for r in records))
    atomic_write(out / "report.sarif", json.dumps(sarif(records), indent=2, allow_nan=False) + "\n")
    atomic_write(out / "junit.xml", junit(records))
    atomic_write(out / "summary.md", summary(records))
