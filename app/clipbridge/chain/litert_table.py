"""The lowering table of a LiteRT hop: what litert-torch wrote for each source op when the converted file was read
(paired by name, else found by its predicted lowering, chain/litert_static.py), or, when there is no file (the
converter environment is not built, the conversion failed), what it writes, predicted from the source."""

from __future__ import annotations

from typing import Any

from clipbridge.chain import lowering, litert_static


def _row(clip: dict, group: list[dict], how: str | None, stage: str) -> dict[str, Any]:
    became = " -> ".join(lowering.became_text(op) for op in group) if group else None
    return {"node": clip["node"], "op": clip["op"], "became": became, "pairing": how or "unpaired",
            "findings": litert_static.findings(clip, group, stage), "group": group}


def _read(clip: dict, graph: dict, claimed: set[int]) -> tuple[list[dict], str | None]:
    """Paired by name (lowering.pair); a name's group narrowed to the predicted ops when it holds more (a module
    whose ADD precedes its clamp); unnamed, found by the predicted lowering among the ops no one claimed."""
    want = litert_static.predict(clip)
    group, how = lowering.pair(clip, "tflite", graph["ops"], graph.get("output_tensors"))
    sig = litert_static.signature(want)
    if group and want and len(group) > len(want):
        narrowed = [op for op in group if litert_static.signature([op])[0] in sig]
        group = narrowed if litert_static.signature(narrowed) == sig else group
    if not group and want:
        group = litert_static.find(want, graph["ops"], claimed)
        how = "LiteRT ops found by the lowering predicted from the source (no tensor name carries it)" \
            if group else None
    return litert_static.saturating(group), how


def table(clips: list[dict[str, Any]], stage: str, graph: dict[str, Any] | None) -> list[dict[str, Any]]:
    """`lowering` of a LiteRT hop: [{node, op, became, pairing, findings, group}]."""
    if graph is None:
        return [_row(c, litert_static.predict(c), litert_static.PREDICTED_HOW, stage) for c in clips]
    named = {c["node"]: lowering.pair(c, "tflite", graph["ops"], graph.get("output_tensors")) for c in clips}
    claimed = {op["index"] for g, _ in named.values() for op in g}
    rows = []
    for clip in clips:
        group, how = _read(clip, graph, claimed)
        claimed |= {op["index"] for op in group}
        rows.append(_row(clip, group, how, stage))
    return rows
