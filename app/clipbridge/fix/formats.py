"""A fix's report in every format the diff has: the fix's own findings (rules applied, the advice that no rewrite
can replace, the cost) with the proof's (clipbridge.diff.formats), as one findings view that clipbridge.reports
writes. Advice is never silent: it is a warning in every format."""

from __future__ import annotations


from clipbridge.diff import formats as diff_formats
from clipbridge.reports import formats
from clipbridge.reports import view as v

FORMATS = diff_formats.FORMATS


def _rule(r: dict) -> str:
    return f"{r['node']} ({r['op']}): {r['rule']}: {r['why']}"


def _advice(a: dict) -> str:
    setting = ", ".join(f"{k}={val}" for k, val in a["setting"].items())
    alt = ", ".join(f"{k}={val}" for k, val in a["alternative"].items())
    return f"{a['code']} ({a['role']} {a['engine']} ran in {a['ran_in']}): set {setting} (or {alt})"


def _cost(c: dict) -> str:
    if c["original_ms"] is None:
        return f"cost on {c['engine']}: written {c['written_ms']} ms; {c['note']}"
    return (f"cost on {c['engine']} ({c['precision']}): original {c['original_ms']} ms, written {c['written_ms']} ms,"
            f" ratio {c['ratio']} (median of {c['rounds']}, {c['note'] or 'interleaved'}); clean outputs "
            f"bit-identical: {c['clean_identical']}")


def table(body: dict) -> str:
    rows = [f"fix: {body['reference']} -> {body['target']}: verdict {body['verdict']}"]
    rows += [f"  rule {_rule(r)}" for r in body["rules_applied"]] or ["  no rule needed"]
    rows += [f"  skipped {s['node']} ({s['op']}): {s['reason']}" for s in body["skipped"]]
    rows += [f"  ADVICE {_advice(a)}" for a in body["advice"]]
    rows.append(f"  {_cost(body['cost'])}")
    if body["model"]["opset_note"]:
        rows.append(f"  {body['model']['opset_note']}")
    return "\n".join(rows) + "\nproof:\n" + diff_formats.table(body["proof"])


def _findings(body: dict, artifact: str) -> list[v.Finding]:
    """Each advice a warning (never silent), each rule applied a note at its node."""
    advice = [v.Finding(f"fix/{a['code']}", "warning", _advice(a), v.Location(artifact), properties=a,
                        title=f"clipbridge fix {a['code']}") for a in body["advice"]]
    return advice + [v.Finding(f"fix/{r['rule']}", "note", _rule(r), v.Location(artifact, r["node"]),
                               title=f"clipbridge fix {r['node']}") for r in body["rules_applied"]]


def _suite(body: dict) -> v.Suite:
    """A case per advice (failing: the difference stays) and per rule applied."""
    return v.Suite("fix", [v.Case(a["code"], f"fix.{a['engine']}", [v.Failure(_advice(a), a["message"])])
                           for a in body["advice"]]
                   + [v.Case(r["node"], f"fix.{r['rule']}") for r in body["rules_applied"]])


def _blocks(body: dict, artifact: str) -> list[v.Block]:
    out: list[v.Block] = [
        v.Heading(3, f"clipbridge fix: {artifact} for {body['target']} (as on {body['reference']})"),
        v.Paragraph((v.Strong(f"Verdict: {body['verdict']}"),)),
        v.Table(("node", "op", "rule", "why"), tuple((r["node"], r["op"], r["rule"], r["why"])
                                                     for r in body["rules_applied"]))]
    if body["advice"]:
        out.append(v.Quote("Warning", tuple(_advice(a) for a in body["advice"])))
    return out + [v.Paragraph((_cost(body["cost"]),))]


def view(body: dict, artifact: str) -> v.Report:
    """The fix's own findings after the proof's (the diff of the written model), in one report."""
    proof = diff_formats.view(body["proof"], artifact)
    ids = sorted({f"fix/{a['code']}" for a in body["advice"]} | {f"fix/{r['rule']}" for r in body["rules_applied"]})
    proof.rules += [v.Rule(i, i.split("/", 1)[1]) for i in ids]
    proof.findings += _findings(body, artifact)
    proof.run_properties = {**(proof.run_properties or {}),
                            "fix": {k: body[k] for k in ("reference", "target", "verdict", "cost")}}
    proof.suites.append(_suite(body))
    proof.markdown = _blocks(body, artifact) + proof.markdown
    return proof


def render(body: dict, fmt: str, artifact: str = "model.onnx") -> str:
    """`body` as `fmt`: json pretty-printed without NaN, the table, or a CI format by its one writer."""
    return formats.render_body(body, fmt, table, view, artifact)
