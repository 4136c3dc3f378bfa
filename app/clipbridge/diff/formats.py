"""The diff's body as a table, as the findings view the CI formats are written from (clipbridge.reports: SARIF
2.1.0, JUnit XML, GitHub annotations, Markdown), or as Model Explorer node data."""

from __future__ import annotations

from typing import Any

from clipbridge.reports import formats
from clipbridge.reports import view as v
from clipbridge.reports.view import Level

FORMATS = ("table", "json", "sarif", "junit", "github", "markdown")
CAUSES = {
    "nan-input": "A NaN input: one engine propagates it, another gives a bound, 0 or 1 (its clip kernel).",
    "bound-rounding": "A bound that is not a value of the tensor's type is rounded differently by the engines.",
    "default-bound": "An omitted Clip bound: the spec's lowest()/max(), read as an open side by one engine.",
    "min-greater-than-max": "min > max: the engines apply the two bounds in different orders.",
    "float16-bound-overflow": "A bound beyond float16's range: float16 holds it as inf, so a NaN clipped there "
                              "gives -inf or inf on the engine that writes the bound.",
    "quantize-saturation": "A clip folded into an int8/uint8 range (its bound moved to the grid), or a non-finite "
                           "value into QuantizeLinear.",
    "quantize-rounding": "QuantizeLinear of a value exactly between two steps: half to even against half away.",
    "inference-precision": "The engine ran the node (or the kernel it was fused into) in another type than the "
                           "model's: narrower (bf16), or wider (a float16 model computed in f32).",
    "nan-through-softmax": "A Softmax/LogSoftmax row holding NaN or +inf: the engines give NaN at different "
                           "elements of the row (behaviour row softmax-nan-row).",
    "nan-through-max": "A MaxPool window, ReduceMax/Min or ArgMax/Min row, or Max/Min operand holding NaN: the "
                       "engines give NaN or different numbers of it (behaviour rows max-like-nan, maxpool-nan).",
    "cast-out-of-range": "A float-to-int Cast of NaN, +-inf or a value beyond the type (undefined): each engine "
                         "gives an integer of its own (behaviour row cast-out-of-range).",
    "accumulation-order": "A Conv/MatMul/Gemm/ReduceSum summed in another order: within the rounding bound of "
                          "the sum (n u sum|a_i b_i|), so it counts as agreeing.",
    "not-a-clip": "The node is not clip-like: clipbridge names no clip rule for its difference.",
}


def _witness(w: dict | None) -> str:
    if not w:
        return ""
    inp = w.get("input")
    inp_text = ", ".join(f"{e} {v}" for e, v in inp.items()) if isinstance(inp, dict) else str(inp)
    outs = ", ".join(f"{e} {v}" for e, v in w["outputs"].items())
    return f"at {w['index']}: " + (f"input {inp_text} -> " if inp is not None else "") + outs


def _line(n: dict) -> str:
    frm = f" from {', '.join(n['inherited_from'])}" if n.get("inherited_from") else ""
    return (f"{n['node']} ({n['op']}): {n['differing']}/{n['total']} differ, {n['origin'] or 'not replayed'}{frm}, "
            f"cause {n['cause'] or 'unexplained'}" + (f" ({n['detail']})" if n.get("detail") else "")
            + f"; witness {_witness(n.get('witness'))}")


def table(body: dict) -> str:
    rows = [f"verdict: {body['verdict']}"]
    rows += [f"engine {e['name']} {e['version']} precision {e['precision']}"
             + (f" (marking changed {', '.join(e['observer_effect'])})" if e["observer_effect"] else "")
             for e in body["engines"]]
    rows += _sides_lines(body.get("sides"))
    i = body["inputs"]
    rows.append(f"inputs: {i['source']}" + (f" {i.get('sample') or ''} sample (seed {i['seed']})"
                                             if i["seed"] is not None else "")
                + f"; method {body['method']}")
    if i.get("symbolic"):
        rows.append("symbolic dimensions: " + ", ".join(f"{d['input']}[{d['axis']}] {d['dim'] or '?'}={d['value']}"
                                                        for d in i["symbolic"]))
    rows += [f"output {o['name']}: {o['differing']}/{o['total']} differ" + _tolerance_text(o.get("tolerance"))
             + (f", agreeing by {o['agrees_by']} (within the summation bound)" if o.get("agrees_by") else "")
             for o in body["outputs"]]
    rows += [_body_line(v) for v in body.get("subgraphs", [])]
    fd = body["first_divergence"]
    rows.append(f"first divergence: {fd['node']} ({fd['op']})" if fd else "first divergence: none")
    rows += [f"  {_line(n)}" for n in body["nodes"]]
    return "\n".join(rows + _outcome_lines(body)) + "\n"


def _sides_lines(sides: dict | None) -> list[str]:
    """A diff of two sides (clipbridge.cli.diff_sides): which model each engine ran, and the tensors compared on
    neither side because only one has them."""
    if not sides:
        return []
    rows = ["sides: " + ", ".join(f"{s['model']} on {s['engine']}" for s in sides["models"])]
    for key, which in (("only_first", "the first"), ("only_second", "the second")):
        if sides.get(f"{key}_count"):
            rows.append(f"  {sides[f'{key}_count']} tensors only on {which} side, compared on neither: "
                        + ", ".join(sides[key][:8]) + (", ..." if sides[f"{key}_count"] > 8 else ""))
    return rows


def _outcome_lines(body: dict) -> list[str]:
    """Issue 44: the masked differences (one line, the nodes indented), layouts aligned, the edge probe's pass."""
    rows = [f"layout: {n['tensor']} on {n['engine']}: {n['shape']} compared as {n['as']} ({n['note']})"
            for n in body.get("layout") or []]
    masked = body.get("masked") or {}
    if masked.get("summary"):
        rows.append(f"masked: {masked['summary']}")
        rows += [f"  {_line(n)}" for n in masked["nodes"]]
    rows += _sample_lines(body.get("samples"))
    edge = body.get("edge")
    if edge is not None:
        if edge.get("error"):
            return rows + [f"edge probe: error: {edge['error']['message']}"]
        i = edge["inputs"]
        rows.append(f"edge probe: {edge['verdict']} (generated NaN, +-inf, 65504, the bounds; seed {i['seed']}; "
                    "counts for the exit code with --fail-on edge)")
        rows += [f"  output {o['name']}: {o['differing']}/{o['total']} differ" for o in edge["outputs"]]
        fd = edge["first_divergence"]
        rows.append(f"  first divergence: {fd['node']} ({fd['op']})" if fd else "  first divergence: none")
        rows += [f"    {_line(n)}" for n in edge["nodes"]]
        if edge["masked"].get("summary"):
            rows.append(f"  masked: {edge['masked']['summary']}")
    if body.get("fails") and body.get("verdict") == "equal":
        rows.append(f"fails: --fail-on {','.join(body.get('fail_on') or [])}")
    return rows


def _tolerance_text(t: dict | None) -> str:
    """An output's tolerance where the caller chose it (the defaults are docs/diff.md's; JSON always has it)."""
    if not t or t["source"].startswith("default"):
        return ""
    return f" (rtol {t['rtol']:g}, atol {t['atol']:g}: {t['source']})"


def _sample_lines(s: dict | None) -> list[str]:
    """An input set: how many samples, the one walked, and per output its statistics against the first engine."""
    if not s:
        return []
    rows = [f"samples: {s['count']}; walked {s['walked']}"
            + (" (the first whose outputs differ)" if s["first_differing"] else " (no sample's outputs differ)")]
    for o in s["statistics"]:
        for e, st in o["engines"].items():
            keys = ("max_abs", "max_rel", "max_ulp", "cosine", "sqnr_db", "top1", "top5")
            rest = ", ".join(f"{k} {st[k]:.4g}" if isinstance(st[k], float) else f"{k} {st[k]}" for k in keys if k in st)
            rows.append(f"  output {o['name']} ({e} against {o['against']}): {st['samples_differing']}/{s['count']} "
                        f"samples differ, {st['elements_differing']} elements" + (f"; {rest}" if rest else ""))
    return rows


def _body_line(b: dict) -> str:
    """How the diff read one If/Loop/Scan body (docs/diff.md, "Subgraphs")."""
    if b["walked"]:
        return f"body {b['graph']} ({b['op']}): walked, {b['view']}" + (f"; {b['reason']}" if b["reason"] else "")
    return f"body {b['graph']} ({b['op']}): not walked: {b['reason']}"


def _level(n: dict) -> Level:
    return "warning" if n["origin"] == "inherited" else "error"


def _finding(n: dict, artifact: str, part: str = "", level: Level | None = None) -> v.Finding:
    """A reported node as a finding; `part` ("masked", "edge") names a row outside the outputs' verdict, whose
    level is `note` unless --fail-on names that part (then as the outputs' rows)."""
    cause = n["cause"] or "unexplained"
    where = f"{part}|" if part else ""
    return v.Finding(f"diff/{cause}", level or _level(n), (f"{part}: " if part else "") + _line(n),
                     v.Location(artifact, n["node"]), _witness(n.get("witness")) or None,
                     {"op": n["op"], "origin": n["origin"], "witness": n.get("witness"), **({"part": part} if part
                                                                                          else {})},
                     ("clipbridgeDiff/v1", f"{where}{n['node']}|{n['cause']}"), title=f"clipbridge diff {n['node']}")


def _parts(body: dict) -> list[tuple[str, list[dict]]]:
    """Issue 44: the rows beside the outputs' own: masked differences, the edge probe's nodes and its masked."""
    edge = body.get("edge") or {}
    return [("masked", (body.get("masked") or {}).get("nodes", [])), ("edge", edge.get("nodes", [])),
            ("edge", (edge.get("masked") or {}).get("nodes", []))]


def _findings(body: dict, artifact: str) -> list[v.Finding]:
    fail_on = set(body.get("fail_on") or [])
    out = [_finding(n, artifact) for n in body["nodes"]]
    for part, rows in _parts(body):
        out += [_finding(n, artifact, part, None if part in fail_on else "note") for n in rows]
    return out


def _suites(body: dict) -> list[v.Suite]:
    """A case per output (failing when it differs) and per reported node (failing unless inherited)."""
    outputs = [v.Case(o["name"], "diff.outputs", [v.Failure(f"{o['differing']}/{o['total']} elements differ",
                                                            "\n".join(_line(n) for n in body["nodes"]))]
                      if o["differing"] and not o.get("agrees_by") else []) for o in body["outputs"]]
    nodes = [v.Case(n["node"], f"diff.{n['op']}", [v.Failure(f"cause {n['cause'] or 'unexplained'}", _line(n))]
                    if n["origin"] != "inherited" else []) for n in body["nodes"]]
    fail_on = set(body.get("fail_on") or [])
    extra = [v.Suite(part, [v.Case(n["node"], f"diff.{part}.{n['op']}", [v.Failure(
        f"{part}: cause {n['cause'] or 'unexplained'}", _line(n))] if part in fail_on and n["origin"] != "inherited"
        else []) for n in rows]) for part, rows in _parts(body) if rows]
    return [v.Suite("outputs", outputs), v.Suite("nodes", nodes), *extra]


def blocks(body: dict, artifact: str) -> list[v.Block]:
    """The verdict, the engines as they ran, a row per reported node."""
    return [v.Heading(3, f"clipbridge diff: {artifact}"), v.Paragraph((v.Strong(f"Verdict: {body['verdict']}"),)),
            v.Table(("engine", "version", "precision"),
                    tuple((e["name"], e["version"], e["precision"]) for e in body["engines"])),
            v.Table(("node", "op", "differing", "origin", "cause", "witness"), tuple(
                (n["node"], n["op"], f"{n['differing']}/{n['total']}", n["origin"] or "not replayed",
                 n["cause"] or "unexplained", _witness(n.get("witness"))) for n in body["nodes"])),
            *[v.Paragraph((line,)) for line in _outcome_lines(body)]]


def view(body: dict, artifact: str) -> v.Report:
    """The diff body as the findings view: a finding per reported node, its cause the rule."""
    findings = _findings(body, artifact)
    rules = sorted({f.rule.removeprefix("diff/") for f in findings})
    return v.Report(
        artifact, findings,
        [v.Rule(f"diff/{r}", CAUSES.get(r, r)) for r in rules],
        summary=("clipbridge diff", f"verdict {body['verdict']}"),
        run_properties={"verdict": body["verdict"], "engines": body["engines"], "inputs": body["inputs"],
                        "outputs": body["outputs"], "firstDivergence": body["first_divergence"],
                        "masked": (body.get("masked") or {}).get("summary"), "fails": body.get("fails"),
                        "edgeVerdict": (body.get("edge") or {}).get("verdict")},
        junit_name=f"clipbridge diff: {artifact}", suites=_suites(body), markdown=blocks(body, artifact))


def render(body: dict, fmt: str, artifact: str = "model.onnx") -> str:
    """`body` as `fmt`: json pretty-printed without NaN, the table, or a CI format by its one writer."""
    return formats.render_body(body, fmt, table, view, artifact)


def node_data(body: dict, graph: str = "main_graph") -> dict[str, Any]:
    """Model Explorer node data: per differing node its differing-element count as `value`, coloured by
    thresholds; and a second graph entry whose value is the cause (a string label)."""
    counts = {n["node"]: {"value": n["differing"]} for n in body["nodes"]}
    if body["first_divergence"] and body["first_divergence"]["node"] not in counts:
        counts[body["first_divergence"]["node"]] = {"value": 1}
    thresholds = [{"value": 0, "bgColor": "#388e3c"}, {"value": 1e12, "bgColor": "#d32f2f"}]
    return {graph: {"results": counts, "thresholds": thresholds}}


def cause_layer(body: dict, graph: str = "main_graph") -> dict[str, Any]:
    """The cause of each reported node as a string value (Model Explorer shows it as the node's label)."""
    colors = {"introduced": "#d32f2f", "inherited": "#f9a825"}
    return {graph: {"results": {n["node"]: {"value": n["cause"] or "unexplained",
                                            "bgColor": colors.get(n["origin"] or "", "#757575")}
                                for n in body["nodes"]}}}
