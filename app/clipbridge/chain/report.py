"""A chain run as one report: the source, the inputs, each stage converted and run, and each hop compared against
the source and against the stage it was converted from, with the static lowering and what the run confirmed."""

from __future__ import annotations

from typing import Any

from clipbridge.chain import child_engines, child_torch, hops, inputs, lowering, preflight, rules, stages
from clipbridge.chain.stages import source_kind
from clipbridge.core.errors import BackendUnavailable, ClipBridgeError
from clipbridge.core.numbers import wire_number
from clipbridge.chain.stagerun import Execute, Stage, convert, dist_version, read_lowering, run_stage
from clipbridge.diff.inputs import SEED

STATIC_NOTE = "static only: coremltools cannot predict off Apple hardware (libcoremlpython is missing)"
ONNX_OPS = {"Clip": "clamp", "Max": "clamp", "Min": "clamp", "Relu": "relu", "HardSwish": "hardswish",
            "HardSigmoid": "hardsigmoid", "LeakyRelu": "relu"}


def _onnx_clips(graph: dict[str, Any]) -> list[dict[str, Any]]:
    """An ONNX source's clip-like nodes as source ops (keyed by output tensor name, which OpenVINO keeps)."""
    out = []
    for op in graph["ops"]:
        consts = [c if k == "const" else None for k, c in op["operands"]] + [None, None, None]
        if op["type"] == "Clip":  # an omitted bound means lowest()/max() in ONNX, not an open side (Clip-11+)
            ops = op["operands"] + [("omitted", None)] * 3
            lo = -rules.FLT_MAX if ops[1][0] == "omitted" else consts[1]
            hi = rules.FLT_MAX if ops[2][0] == "omitted" else consts[2]
        else:
            lo, hi = consts[1] if op["type"] == "Max" else None, consts[1] if op["type"] == "Min" else None
        out.append({"node": op["tensor"], "op": ONNX_OPS[op["type"]], "lo": lo, "hi": hi, "int_literal": [],
                    "input": op["input"], "module": "", "stack_trace": "", "onnx_node": op["name"], "source": "onnx"})
    return out


def _describe(execute: Execute, model: bytes, kind: str) -> dict[str, Any]:
    """The source's inputs and clip-like ops; a model that cannot be read is a 4xx on `model`, never a 5xx, and
    a reader that is not installed (torch, for a .pt2) is named with its install command, never blamed on the
    model."""
    absent = preflight.missing(["torch"], kind, server=False) if kind == "torch" else []
    if absent:
        raise BackendUnavailable(f"a .pt2 is read by torch, and {absent[0]}", "model")
    try:
        if kind == "torch":
            return execute("chain:torch", child_torch.describe, model)
        graph = execute("chain:onnx", child_engines.onnx_graph, model)
        specs = execute("chain:onnx", child_engines.onnx_inputs, model)
    except ClipBridgeError:
        raise
    except Exception as exc:  # a parser's own failure on the bytes: named, reduced, never relayed raw
        what = "torch.export.save archive" if kind == "torch" else "ONNX model"
        raise ClipBridgeError(f"model is not a readable {what} ({type(exc).__name__})", "model") from None
    return {"inputs": specs, "clips": _onnx_clips(graph)}


def _hop_head(st: Stage) -> dict[str, Any]:
    conv = stages.CONVERTERS.get(st.name)
    engine, delegate = stages.ENGINES[st.name]
    same_file = st.name == "tflite:builtin" and st.source == "tflite"
    return {"from": st.source, "to": st.name, "status": st.status, "error": st.error,
            "converter": None if conv is None or same_file else
            {"name": conv.name, "version": conv.version or dist_version(conv.name), "options": conv.options},
            "engine": {"name": engine, "version": st.engine.get("version") or dist_version(engine),
                       "precision": st.engine.get("precision"), "delegate": delegate},
            **({"note": STATIC_NOTE} if st.name == "coreml" else {}),
            **({"note": "the tflite file of the previous hop, run with the builtin kernels"} if same_file else {})}


def _confirmation(predicted: list[dict], *comparisons: dict | None) -> dict[str, list]:
    measured = {(n["node"], c) for cmp in comparisons if cmp for n in cmp["nodes"] if n["origin"] == "introduced"
                for c in (n.get("causes") or {}) if c != "unexplained"}
    measured |= {(n["node"], n["cause"]) for cmp in comparisons if cmp for n in cmp["nodes"]
                 if n["origin"] == "inherited" and n["cause"] in rules.HOP_RULES}  # a hop rule at the input
    said = {(p["node"], p["rule"]) for p in predicted}
    pack = lambda pairs: [{"node": n, "rule": r} for n, r in sorted(pairs)]  # noqa: E731
    return {"confirmed": pack(said & measured), "not_reached": pack(said - measured),
            "unpredicted": pack(measured - said)}


def hop(st: Stage, chain: dict[str, Stage], clips: list[dict], source: str, ran: bool) -> dict[str, Any]:
    body = _hop_head(st)
    body["lowering"] = [{k: v for k, v in r.items() if k != "group"} for r in st.lowering]
    predicted = [{"node": r["node"], "rule": f["rule"]} for r in st.lowering for f in r["findings"]]
    refused = lowering.failure_findings(clips, st.name)
    predicted += [{"node": f["node"], "rule": f["rule"]} for f in refused]
    body["predicted"] = predicted
    if st.status == "failed" and refused:  # the failure the source predicted: named by its rule
        body["cause"] = {"rule": refused[0]["rule"], "nodes": [f["node"] for f in refused]}
    if not ran:
        return body
    src, prev = chain[source].ran, chain.get(st.source or "")
    if st.ran is None or src is None:
        body["against_source"] = body["against_previous"] = None
        return body
    body["against_source"] = hops.compare_stages(clips, src, st.ran, st.name)
    if prev is not None and prev.name != source and prev.ran is not None:
        body["against_previous"] = hops.compare_stages(clips, prev.ran, st.ran, st.name)
    else:
        body["against_previous"] = body["against_source"] if prev is not None and prev.name == source else None
    body.update(_confirmation(predicted, body["against_source"], body["against_previous"]))
    return body


def _verdict(hop_rows: list[dict]) -> str:
    verdicts = {c["verdict"] for h in hop_rows for c in (h.get("against_source"), h.get("against_previous")) if c}
    for v in ("unexplained", "explained"):
        if v in verdicts:
            return v
    return "equal"


def chain(execute: Execute, model: bytes, npz: bytes | None, spec: str, seed: int = SEED,
          static: bool = False, loc: str = "chain") -> dict[str, Any]:
    """The report of `clipbridge chain MODEL STAGES` (and POST /v1/models/chain)."""
    kind = source_kind(model)
    names = stages.parse(spec, kind, loc)
    desc = _describe(execute, model, kind)
    clips, specs = desc["clips"], desc["inputs"]
    # A static report runs nothing: inputs are neither generated nor required (a bool input needs no .npz there).
    feeds = None if static else inputs.read(npz, specs) if npz is not None else inputs.generate(specs, seed)
    chain_: dict[str, Stage] = {}
    for name in names:
        st = Stage(name, None if name == kind else stages.converted_from(name, names))
        if st.name == kind:
            st.artifact = model
            if kind == "onnx":
                st.graph = execute("chain:onnx", child_engines.onnx_graph, model)
        else:
            convert(execute, st, chain_, model, specs)
        read_lowering(st, clips)
        chain_[name] = st
    if feeds is not None:
        for st in chain_.values():
            run_stage(execute, st, clips, model, feeds)
    hop_rows = [hop(st, chain_, clips, kind, not static) for st in chain_.values() if st.name != kind]
    return {"verdict": None if static else _verdict(hop_rows), "static": static, "chain": names, "source": kind,
            "inputs": {"source": "none" if static else "given" if npz is not None else "generated",
                       "seed": None if npz or static else seed,
                       "tensors": [{"name": s["name"], "dtype": s["dtype"], "shape": s["shape"]} for s in specs]},
            "clips": [{k: wire_number(c[k]) if k in ("lo", "hi") and isinstance(c[k], float) else c[k]
                       for k in ("node", "op", "lo", "hi", "module", "stack_trace")} for c in clips],
            "stages": [{"name": st.name, "status": st.status, "error": st.error} for st in chain_.values()],
            "hops": hop_rows, "rules": _rule_docs()}



def _rule_docs() -> dict[str, str]:
    """Each rule's name and the fact it implements, from the behaviour table (the citation travels with the report)."""
    return {**rules.RULE_TEXT, **rules.HOP_RULES}
