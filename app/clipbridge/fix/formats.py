"""A fix's report in every format the diff has: the fix's own findings (rules applied, the advice that no rewrite
can replace, the cost) in front of the proof rendered by clipbridge.diff.formats. Advice is never silent: it is a
warning in every format."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from clipbridge.diff import formats as diff_formats
from clipbridge.lint.github import escape_data, escape_property
from clipbridge.lint.markdown import cell

FORMATS = diff_formats.FORMATS


def _rule(r: dict) -> str:
    return f"{r['node']} ({r['op']}): {r['rule']}: {r['why']}"


def _advice(a: dict) -> str:
    setting = ", ".join(f"{k}={v}" for k, v in a["setting"].items())
    alt = ", ".join(f"{k}={v}" for k, v in a["alternative"].items())
    return f"{a['code']} ({a['role']} {a['engine']} ran in {a['ran_in']}): set {setting} (or {alt})"


def _cost(c: dict) -> str:
    if c["original_ms"] is None:
        return f"cost on {c['engine']}: written {c['written_ms']} ms; {c['note']}"
    return (f"cost on {c['engine']} ({c['precision']}): original {c['original_ms']} ms, written {c['written_ms']} ms,"
            f" ratio {c['ratio']} (median of {c['rounds']}, interleaved); clean outputs bit-identical: "
            f"{c['clean_identical']}")


def table(body: dict) -> str:
    rows = [f"fix: {body['reference']} -> {body['target']}: verdict {body['verdict']}"]
    rows += [f"  rule {_rule(r)}" for r in body["rules_applied"]] or ["  no rule needed"]
    rows += [f"  skipped {s['node']} ({s['op']}): {s['reason']}" for s in body["skipped"]]
    rows += [f"  ADVICE {_advice(a)}" for a in body["advice"]]
    rows.append(f"  {_cost(body['cost'])}")
    if body["model"]["opset_note"]:
        rows.append(f"  {body['model']['opset_note']}")
    return "\n".join(rows) + "\nproof:\n" + diff_formats.table(body["proof"])


def markdown(body: dict, artifact: str) -> str:
    out = [f"### clipbridge fix: {cell(artifact)} for {body['target']} (as on {body['reference']})", "",
           f"**Verdict: {body['verdict']}**", "", "| node | op | rule | why |", "|---|---|---|---|"]
    out += [f"| {cell(r['node'])} | {cell(r['op'])} | {cell(r['rule'])} | {cell(r['why'])} |"
            for r in body["rules_applied"]]
    out += [""] + [f"> **Warning:** {cell(_advice(a))}" for a in body["advice"]] + ["", cell(_cost(body["cost"])), ""]
    return "\n".join(out) + "\n" + diff_formats.markdown(body["proof"], artifact)


def github(body: dict, artifact: str) -> str:
    f = escape_property(artifact)
    lines = [f"::warning file={f},title={escape_property('clipbridge fix ' + a['code'])}::{escape_data(_advice(a))}"
             for a in body["advice"]]
    lines += [f"::notice file={f},title={escape_property('clipbridge fix ' + r['node'])}::{escape_data(_rule(r))}"
              for r in body["rules_applied"]]
    return "\n".join(lines) + ("\n" if lines else "") + diff_formats.github(body["proof"], artifact)


def sarif(body: dict, artifact: str) -> dict[str, Any]:
    doc = diff_formats.sarif(body["proof"], artifact)
    run = doc["runs"][0]
    loc = [{"physicalLocation": {"artifactLocation": {"uri": artifact}}}]
    ids = sorted({f"fix/{a['code']}" for a in body["advice"]} | {f"fix/{r['rule']}" for r in body["rules_applied"]})
    run["tool"]["driver"]["rules"] += [{"id": i, "shortDescription": {"text": i.split("/", 1)[1]}} for i in ids]
    run["results"] += [{"ruleId": f"fix/{a['code']}", "level": "warning", "message": {"text": _advice(a)},
                        "locations": loc, "properties": a} for a in body["advice"]]
    run["results"] += [{"ruleId": f"fix/{r['rule']}", "level": "note", "message": {"text": _rule(r)},
                        "locations": [{**loc[0], "logicalLocations": [{"name": r["node"], "kind": "function"}]}]}
                       for r in body["rules_applied"]]
    run["properties"]["fix"] = {k: body[k] for k in ("reference", "target", "verdict", "cost")}
    return doc


def junit(body: dict, artifact: str) -> str:
    root = ET.fromstring(diff_formats.junit(body["proof"], artifact).split("\n", 1)[1])
    suite = ET.SubElement(root, "testsuite", name="fix", tests=str(len(body["advice"]) + len(body["rules_applied"])),
                          failures=str(len(body["advice"])))
    for a in body["advice"]:
        case = ET.SubElement(suite, "testcase", name=a["code"], classname=f"fix.{a['engine']}")
        ET.SubElement(case, "failure", message=_advice(a)).text = a["message"]
    for r in body["rules_applied"]:
        ET.SubElement(suite, "testcase", name=r["node"], classname=f"fix.{r['rule']}")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def render(body: dict, fmt: str, artifact: str = "model.onnx") -> str:
    return diff_formats.render_with({"sarif": sarif, "table": lambda b, a: table(b), "junit": junit, "github": github,
                                     "markdown": markdown}, body, fmt, artifact)
