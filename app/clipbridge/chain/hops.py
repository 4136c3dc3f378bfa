"""One comparison of a hop (against the source, or against the stage it was converted from): the outputs, the
first divergence among the clip-like ops' inputs and outputs, and each source op's difference with its origin,
its cause (a lowering rule, app/clipbridge/chain/rules.py) and a witness."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from clipbridge.chain import rules
from clipbridge.core.numbers import wire_number
from clipbridge.diff import compare

MAX_CLASSIFIED = 4096  # differing elements classified per node (the counts say how many were)


@dataclass
class Ran:
    """A stage as it ran: its final outputs in order, and per source op its captured (input, output)."""

    name: str
    outputs: list[np.ndarray]
    tensors: dict[str, tuple[np.ndarray | None, np.ndarray | None]]  # source node -> (input, output)
    groups: dict[str, list[dict]] = field(default_factory=dict)  # source node -> the ops it became
    output_ops: list[dict | None] = field(default_factory=list)  # the converted op that wrote each output (LiteRT)


def _num(x: Any) -> Any:
    v = np.asarray(x).reshape(()).item()
    return wire_number(float(v)) if isinstance(v, float) else wire_number(v)


def _mask(a: np.ndarray | None, b: np.ndarray | None) -> np.ndarray | None:
    if a is None or b is None or a.shape != b.shape:
        return None
    return compare.differing(a, b)


def outputs(ref: Ran, got: Ran, stage: str) -> list[dict[str, Any]]:
    rows = []
    for k, a in enumerate(ref.outputs):
        b = got.outputs[k] if k < len(got.outputs) else None
        m = _mask(a, b)
        op = got.output_ops[k] if k < len(got.output_ops) else None
        rows.append({"index": k, "differing": int(a.size) if m is None else int(m.sum()), "total": int(a.size),
                     "cause": _output_cause(op, stage, a, b, m)})
    return rows


def _output_cause(op: dict | None, stage: str, a: np.ndarray, b: np.ndarray | None, m: np.ndarray | None
                  ) -> str | None:
    """The hop rule every differing element of a graph output obeys (a saturation at the op that wrote it), or
    None: what explains an output that differs where no clamp does (clamp_min(x, 0) + 1's builtin ADD)."""
    if b is None or m is None or not m.any():
        return None
    ref, out = a.reshape(-1), b.reshape(-1)
    found = {rules.output_saturation(op, stage, float(ref[i]), float(out[i]))
             for i in np.flatnonzero(m.reshape(-1))[:MAX_CLASSIFIED]}
    return found.pop() if len(found) == 1 and None not in found else None


def first_divergence(clips: list[dict], ref: Ran, got: Ran) -> dict[str, Any] | None:
    """The first clip-like source op, in graph order, whose input or output differs (its input first: a
    non-clip op upstream may be where the stages part, converter-chain-notes.md)."""
    for clip in clips:
        r, g = ref.tensors.get(clip["node"]), got.tensors.get(clip["node"])
        if r is None or g is None:
            continue
        for at, k in (("input", 0), ("output", 1)):
            m = _mask(r[k], g[k])
            if m is not None and m.any():
                ops = got.groups.get(clip["node"], [])
                return {"node": clip["node"], "op": clip["op"], "at": at,
                        "became": ops[0]["name"] if ops and at == "input" else ops[-1]["name"] if ops else None}
    return None


def node_row(clip: dict, ref: Ran, got: Ran, stage: str, last_cause: tuple[str, str | None] | None
             ) -> dict[str, Any]:
    """The source op on this comparison: differing elements, introduced or inherited, cause and witness."""
    node = clip["node"]
    row: dict[str, Any] = {"node": node, "op": clip["op"], "differing": None, "total": None, "origin": None,
                           "cause": None, "witness": None}
    r, g = ref.tensors.get(node), got.tensors.get(node)
    if r is None or g is None:
        row["detail"] = "not captured on this stage (unpaired, or the stage did not run)"
        return row
    mask = _mask(r[1], g[1])
    if mask is None:
        row["detail"] = "output not comparable (missing or another shape)"
        return row
    row.update(differing=int(mask.sum()), total=int(mask.size))
    if not mask.any():
        return row
    in_mask = _mask(r[0], g[0])
    if in_mask is not None and in_mask.shape != mask.shape:  # an input of another shape (broadcast) says nothing
        in_mask = None
    fresh = mask & ~in_mask if in_mask is not None else mask
    if not fresh.any():
        flat = int(np.flatnonzero(mask.reshape(-1))[0])
        row.update(origin="inherited", cause=last_cause[1] if last_cause else None,
                   inherited_from=[last_cause[0]] if last_cause else [])
        if last_cause is None and in_mask is not None:  # no clamp upstream made it: what fed this one?
            at = int(np.flatnonzero(in_mask.reshape(-1))[0])
            hop_rule = rules.saturation(got.groups.get(node, []), stage, float(r[0].reshape(-1)[at]),
                                        float(g[0].reshape(-1)[at]))
            if hop_rule:
                row.update(cause=hop_rule, inherited_from=[got.groups[node][0]["input_from"]])
                flat = at
        row["witness"] = _witness(r, g, ref.name, stage, flat)
        return row
    counts: dict[str, int] = {}
    first: dict[str, int] = {}
    x, src, out = g[0].reshape(-1) if g[0] is not None else None, r[1].reshape(-1), g[1].reshape(-1)
    for i in np.flatnonzero(fresh.reshape(-1))[:MAX_CLASSIFIED]:
        v = float(x[i]) if x is not None and x.size == out.size else float("nan")
        group = got.groups.get(node, [])
        cause = _explain(clip, group, stage, v, float(out[i]), float(src[i])) if x is not None else \
            rules.saturation(group, stage, float(src[i]), float(out[i]))
        key = cause or "unexplained"
        counts[key] = counts.get(key, 0) + 1
        first.setdefault(key, int(i))
    explained = {k: n for k, n in counts.items() if k != "unexplained"}
    top = max(explained, key=lambda k: explained[k]) if explained and "unexplained" not in counts else None
    flat = first[top] if top else first.get("unexplained", int(np.flatnonzero(fresh.reshape(-1))[0]))
    counts.update(_carried(node, got, stage, r[0], g[0], mask & in_mask if in_mask is not None else None))
    row.update(origin="introduced", cause=top, causes=counts, witness=_witness(r, g, ref.name, stage, flat))
    return row


def _carried(node: str, got: Ran, stage: str, ref_in: np.ndarray | None, got_in: np.ndarray | None,
             carried: np.ndarray | None) -> dict[str, int]:
    """The elements of an introduced row that came in differing, counted under the hop rule that made them so
    (rules.SATURATION): a node can both introduce a difference and carry a builtin op's saturation."""
    if carried is None or ref_in is None or got_in is None or not carried.any():
        return {}
    a, b = ref_in.reshape(-1), got_in.reshape(-1)
    group = got.groups.get(node, [])
    counts: dict[str, int] = {}
    for i in np.flatnonzero(carried.reshape(-1))[:MAX_CLASSIFIED]:
        name = rules.saturation(group, stage, float(a[i]), float(b[i]))
        if name:
            counts[name] = counts.get(name, 0) + 1
    return counts


def _explain(clip: dict, group: list[dict], stage: str, v: float, got: float, ref: float) -> str | None:
    """The rule that predicts the stage's value where the reference stage gave another (for the torch source, a
    rule whose prediction differs from torch's meaning; for a converted reference, from what it gave)."""
    if rules.same(ref, got):
        return None
    for name, rule in rules.RULES.items():
        want = rule(clip, group, stage, v)
        if want is not None and rules.same(want, got):
            return name
    return None


def _witness(r: tuple, g: tuple, ref: str, stage: str, flat: int) -> dict[str, Any]:
    shape = g[1].shape
    x = g[0].reshape(-1)[flat] if g[0] is not None and g[0].size == g[1].size else None
    return {"index": [int(i) for i in np.unravel_index(flat, shape)] if shape else [],
            "input": None if x is None else _num(x),
            "outputs": {ref: _num(r[1].reshape(-1)[flat]), stage: _num(g[1].reshape(-1)[flat])}}


def verdict(outs: list[dict], nodes: list[dict], first: dict | None) -> str:
    if first is None and not any(o["differing"] for o in outs) and not any(n["differing"] for n in nodes):
        return "equal"
    differing = [n for n in nodes if n["origin"]]  # introduced here, or inherited (a saturation: a hop rule)
    # An output that differs where no clamp does is explained only by its own cause (a builtin op saturating inf).
    unowned = [o for o in outs if o["differing"]] if not differing else []
    if (differing or unowned) and all(n["cause"] for n in differing) and all(o["cause"] for o in unowned):
        return "explained"
    return "unexplained"


def _layout(r: np.ndarray | None, g: np.ndarray | None) -> np.ndarray | None:
    """`g` in `r`'s layout: LiteRT computes convolutions channels-last, so a tensor captured inside it is NHWC
    where torch's is NCHW (a graph output is transposed back by the converter)."""
    if r is None or g is None or r.shape == g.shape or r.ndim != 4:
        return g
    n, c, h, w = r.shape
    return np.ascontiguousarray(g.transpose(0, 3, 1, 2)) if g.shape == (n, h, w, c) else g


def aligned(ref: Ran, got: Ran) -> Ran:
    """`got` with each captured tensor in the reference's layout."""
    tensors = {k: (_layout(ref.tensors.get(k, (None, None))[0], v[0]), _layout(ref.tensors.get(k, (None, None))[1],
                                                                               v[1]))
               for k, v in got.tensors.items()}
    return Ran(got.name, got.outputs, tensors, got.groups, got.output_ops)


def compare_stages(clips: list[dict], ref: Ran, got: Ran, stage: str) -> dict[str, Any]:
    """`against_source` or `against_previous`: diff's fields for one pair of stages."""
    got = aligned(ref, got)
    nodes, last = [], None
    for clip in clips:
        row = node_row(clip, ref, got, stage, last)
        if row["origin"] == "introduced":
            last = (row["node"], row["cause"])
        nodes.append(row)
    outs = outputs(ref, got, stage)
    first = first_divergence(clips, ref, got)
    return {"reference": ref.name, "verdict": verdict(outs, nodes, first), "outputs": outs,
            "first_divergence": first, "nodes": nodes}
