"""A chain report as text: the table with the chain as columns (source op, then per hop what it became and whether
it differs); and as the findings view that clipbridge.reports writes as Markdown, SARIF 2.1.0 and JUnit XML for CI.
JSON is the API's body as it is."""

from __future__ import annotations

import json
from typing import Any

from clipbridge.reports import formats
from clipbridge.reports import view as v

FORMATS = ("table", "json", "markdown", "sarif", "junit")
WIDTH = 40


def _verdict(body: dict) -> str:
    """The verdict as shown: a static answer (verdict null: nothing ran) reads `static (nothing ran)`."""
    return body["verdict"] or "static (nothing ran)"


def _cell(hop: dict[str, Any], node: str) -> str:
    """What the source op became on this hop, and its difference against the source ('=' equal, '!' differs)."""
    row = next((r for r in hop.get("lowering", []) if r["node"] == node), None)
    became = (row or {}).get("became") or ("unpaired" if hop["status"] in ("ok", "static") else "-")
    cmp = hop.get("against_source")
    n = next((x for x in cmp["nodes"] if x["node"] == node), None) if cmp else None
    if cmp is None and row and row.get("findings"):
        mark = " ?" + ",".join(f["rule"] for f in row["findings"])
    elif n is None or n["differing"] is None:
        mark = ""
    elif n["differing"]:
        mark = f" !{n['differing']}/{n['total']} {n['cause'] or 'unexplained'}" + \
            (" (inherited)" if n["origin"] == "inherited" else "")
    else:
        mark = " ="
    return (became + mark)[:WIDTH * 2]


def _head(hop: dict[str, Any]) -> str:
    cmp = hop.get("against_source")
    state = cmp["verdict"] if cmp else hop["status"]
    return f"{hop['to']} ({state})"


def rows(body: dict[str, Any]) -> list[list[str]]:
    hops = body["hops"]
    out = [["source op", *[_head(h) for h in hops]]]
    for c in body["clips"]:
        out.append([f"{c['node']} [{c['op']}]", *[_cell(h, c["node"]) for h in hops]])
    out.append(["outputs differing", *[_outputs(h) for h in hops]])
    out.append(["first divergence", *[_first(h) for h in hops]])
    return out


def _outputs(h: dict[str, Any]) -> str:
    cmp = h.get("against_source")
    if not cmp:
        return h["status"] if h["status"] != "ok" else "-"
    return ", ".join(f"{o['differing']}/{o['total']}" + (f" {o['cause']}" if o.get("cause") else "")
                     for o in cmp["outputs"])


def _first(h: dict[str, Any]) -> str:
    f = (h.get("against_source") or {}).get("first_divergence")
    return f"{f['node']} ({f['at']})" if f else "-"


def table(body: dict[str, Any]) -> str:
    grid = rows(body)
    widths = [max(len(r[k]) for r in grid) for k in range(len(grid[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in grid]
    lines.insert(1, "  ".join("-" * w for w in widths))
    notes = [f"{h['to']}: {h['error'] or h.get('note')}" for h in body["hops"] if h.get("error") or h.get("note")]
    predicted = [f"{h['to']}: predicted {len(h['predicted'])}, confirmed {len(h.get('confirmed', []))}, "
                 f"unpredicted {len(h.get('unpredicted', []))}" for h in body["hops"] if "confirmed" in h]
    return "\n".join([f"chain {' -> '.join(body['chain'])}: {_verdict(body)}", *lines, *notes, *predicted]) + "\n"


def findings(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Every differing source op on a hop, and every failed hop: what CI formats report."""
    out = []
    for h in body["hops"]:
        if h["status"] == "failed":
            out.append({"hop": h["to"], "node": None, "rule": "conversion-failed", "message": h["error"] or ""})
        for n in (h.get("against_source") or {}).get("nodes", []):
            if n["differing"]:
                out.append({"hop": h["to"], "node": n["node"], "rule": n["cause"] or "unexplained",
                            "message": f"{n['node']} ({n['op']}) differs from torch on {h['to']} in {n['differing']}"
                                       f" of {n['total']} elements: {n['cause'] or 'unexplained'}; "
                                       f"witness {json.dumps(n['witness'])}"})
    return out


def _finding(f: dict[str, Any], artifact: str) -> v.Finding:
    """A differing source op at its node (a failed hop: the file as a whole)."""
    return v.Finding(f["rule"], "warning" if f["rule"] != "unexplained" else "error", f"[{f['hop']}] {f['message']}",
                     v.Location(artifact, f["node"]), title=f"clipbridge chain {f['hop']}")


def _suite(body: dict[str, Any], artifact: str) -> v.Suite:
    """A case per hop: failing by its findings, skipped when it did not run (not installed, or --static)."""
    found = findings(body)
    cases = []
    for h in body["hops"]:
        bad = [v.Failure(f["rule"], f["message"]) for f in found if f["hop"] == h["to"]]
        cases.append(v.Case(h["to"], artifact, bad, skipped=not bad and h["status"] in ("not-installed", "static")))
    return v.Suite("clipbridge-chain", cases)


def view(body: dict[str, Any], artifact: str) -> v.Report:
    """The chain report as the findings view: the grid as the Markdown table, each hop a JUnit case."""
    grid = rows(body)
    chain = " -> ".join(body["chain"])
    return v.Report(
        artifact, [_finding(f, artifact) for f in findings(body)],
        [v.Rule(k, text) for k, text in body.get("rules", {}).items()],
        summary=("clipbridge chain", f"verdict {_verdict(body)}"), junit_name=f"clipbridge chain: {artifact}",
        suites=[_suite(body, artifact)],
        markdown=[v.Heading(3, ("clipbridge chain ", v.Code(chain), f": {_verdict(body)}")),
                  v.Table(tuple(grid[0]), tuple(tuple(r) for r in grid[1:]))])


def render(body: dict[str, Any], fmt: str, artifact: str) -> str:
    if fmt == "json":
        return json.dumps(body, indent=2) + "\n"
    if fmt == "table":
        return table(body)
    return formats.render(view(body, artifact), fmt)
