"""The fix for a float16 overflow found by the precision trace (app/clipbridge/diff/trace.py): the smallest repair that the
re-trace proves, tried in this order:
1. `float16-clamp`: Clip(-65504, 65504) after the op that first overflows (one node; enough where what follows
   saturates anyway, e.g. a ReLU6, a sigmoid);
2. `keep-float32`: the ops whose float32 values leave float16's range, and the ops that read them, run in
   float32 between Cast pairs (an RMSNorm's Pow and ReduceMean after a MatMul that overflows): the written
   model is the float16 model with that island in float32.
The written model is the float16 model to deploy; the proof is the trace of it against the float32 run.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from clipbridge.diff import child, run, trace
from clipbridge.fix import engines, proof

F16_MAX = 65504.0


@child.model_errors
def clamp_after(model_bytes: bytes, tensor: str) -> bytes:
    """The float32 model with y = Clip(y', -65504, 65504) after the node that writes `tensor` (its name kept)."""
    m = onnx.load_from_string(model_bytes)
    g = m.graph
    k = next(i for i, n in enumerate(g.node) if tensor in n.output)
    node = g.node[k]
    inner = f"{tensor}_unclamped_clipbridge"
    node.output[list(node.output).index(tensor)] = inner
    lo, hi = f"{tensor}_f16_lo_clipbridge", f"{tensor}_f16_hi_clipbridge"
    g.initializer.extend([numpy_helper.from_array(np.array(-F16_MAX, np.float32), lo),
                          numpy_helper.from_array(np.array(F16_MAX, np.float32), hi)])
    g.node.insert(k + 1, helper.make_node("Clip", [inner, lo, hi], [tensor], name=f"{node.name or tensor}_f16_clamp"))
    return m.SerializeToString()


@child.model_errors
def versions(model_bytes: bytes) -> tuple[int, int]:
    """(opset, IR version) of a model (run in a child)."""
    m = onnx.load_from_string(model_bytes)
    return next((o.version for o in m.opset_import if o.domain in ("", "ai.onnx")), 0), m.ir_version


def _island(plan: child.Plan, a: dict[str, np.ndarray]) -> list[str]:
    """The nodes that write a tensor beyond float16's range in the float32 run, and the nodes that read one."""
    def beyond(t: str) -> bool:
        v = a.get(t)
        return v is not None and v.dtype.kind == "f" and bool((np.abs(v[np.isfinite(v)]) > F16_MAX).any())
    wide = {o for n in plan.nodes for o in n.outputs if beyond(o)}
    return [n.name for n in plan.nodes if wide & set(n.outputs) or wide & set(n.inputs)]


def fix(execute: run.Execute, model: bytes, npz: bytes | None, reference: str, target: str, precision: str,
        rounds: int = 30) -> tuple[bytes, dict[str, Any]]:
    """(the float16 model written, the fix body) for `reference` vs `target@f16`."""
    opts = run.Options((reference, target), precision)
    ref, base = trace.split((reference, target))
    before, runs = trace.diff(execute, model, npz, opts)
    plan, a = runs.plan, runs.values[ref]
    f16 = execute("fix-write", trace.float16_copy, model)
    tried: list[tuple[bytes, dict, dict]] = []
    over = before["trace"].get("first_overflow")
    if over:
        written = execute("fix-write", trace.float16_copy, execute("fix-write", clamp_after, model, over["tensor"]))
        tried.append((written, trace.diff(execute, model, npz, opts, written)[0],
                      {"node": over["node"], "op": over["op"], "rule": "float16-clamp", "cause": "float16-overflow",
                       "why": f"{over['op']} writes {over['outputs'][ref]} in float32 (float16 holds at most 65504): "
                              "Clip(-65504, 65504) after it"}))
    keep = _island(plan, a)
    if keep and not (tried and tried[0][1]["verdict"] == "equal"):
        written = execute("fix-write", trace.float16_copy, model, keep)
        tried.append((written, trace.diff(execute, model, npz, opts, written)[0],
                      {"node": keep[0], "op": next(n.op for n in plan.nodes if n.name == keep[0]), "rule": "keep-float32",
                       "cause": "float16-overflow", "nodes": keep,
                       "why": f"{len(keep)} ops hold or read values beyond 65504 in float32: they run in float32 "
                              "between Cast pairs"}))
    written, proven, rule = next(((w, p, r) for w, p, r in tried if p["verdict"] == "equal"),
                                 tried[-1] if tried else (f16, before, None))
    clean = trace.narrow_feeds(proof.clean_feeds([{"name": k, "shape": list(v.shape), "dtype": v.dtype.name}
                                                  for k, v in plan.feeds.items()]))
    cost = execute("fix-cost", engines.time_pair, base, f16, written, clean, precision, rounds)
    (opset, ir), before_v = execute("fix-write", versions, written), execute("fix-write", versions, model)
    body = {"reference": reference, "target": target, "precision": precision,
            "verdict": proof.verdict(proven),
            "rules_applied": [rule] if rule else [], "skipped": [], "advice": [],
            "compared": {reference: "the original model", target: "the written float16 model"},
            "proof": proven, "proof_generated": None, "tried": [r for _, _, r in tried], "cost": cost,
            "model": {"bytes": len(written), "opset": opset, "ir_version": ir, "opset_before": before_v[0],
                      "ir_version_before": before_v[1], "opset_note": None, "node_names_kept": True}}
    return written, body
