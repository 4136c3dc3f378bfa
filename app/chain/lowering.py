"""The static lowering table: for each clip-like source op, what each converter wrote for it (read from the converted
graph, nothing run), how the pair was made, and the findings the rules predict."""

from __future__ import annotations

import re
from typing import Any

from app.chain import rules
from app.core.numbers import format_number

COREML_CLIPS = ("clip", "relu6", "relu", "maximum", "minimum", "thresholded_relu", "sigmoid_hard", "fill")


def _num(c: float | None) -> str:
    return "?" if c is None else format_number(c)


def became_text(op: dict[str, Any]) -> str:
    """One op as the table shows it: its type and operands in the order the converter wrote them."""
    t, attrs = op["type"], op.get("attrs", {})
    if t == "Clamp":
        return f"Clamp({_num(attrs.get('min'))}, {_num(attrs.get('max'))})"
    if t == "clip" and op.get("consts"):
        return f"clip({_num(op['consts'].get('alpha'))}, {_num(op['consts'].get('beta'))})"
    if op.get("operands") and t not in ("HardSigmoid",):
        args = ["x" if k == "tensor" else "''" if k == "omitted" else _num(c) for k, c in op["operands"]]
        return f"{t}({', '.join(args)})"
    if t == "HardSigmoid" and attrs:
        return f"HardSigmoid({_num(attrs.get('alpha'))}, {_num(attrs.get('beta'))})"
    return t


def _token(name: str, node: str) -> bool:
    """Whether a converter's tensor name carries the torch node name as a whole token (hardtanh, not hardtanh_1)."""
    return re.search(rf"(^|[/;:.\s]){re.escape(node)}($|[/;:.\s])", name) is not None


def pair(clip: dict[str, Any], stage: str, ops: list[dict[str, Any]]) -> tuple[list[dict], str | None]:
    """The ops of a stage that a source op became, and how the pair was made (None: no pairing found it)."""
    node = clip["node"]
    if stage == "onnx":
        group = [op for op in ops if op.get("key") == node]
        if group:
            return group, "ONNX node metadata pkg.torch.onnx.name_scopes names the torch node"
        group = [op for op in ops if node in op.get("names", [])]
        return group, "ONNX output tensor name is the torch node name" if group else None
    if stage == "openvino":
        group = [op for op in ops if node in op["names"] or f"{node}:0" in op["names"]]
        return group, ("OpenVINO tensor names (the torch node name, or the ONNX tensor name it kept)"
                       if group else None)
    if stage == "coreml":
        group = [op for op in ops if op["type"] in COREML_CLIPS and (op["name"] == node or
                                                                      op["name"].startswith(node + "_cast"))]
        return group, "Core ML MIL op name is the torch node name" if group else None
    group = [op for op in ops if any(_token(n, node) for n in op["names"])]
    return group, "LiteRT tensor names carry the torch node name" if group else None


def table(clips: list[dict[str, Any]], stage: str, graph: dict[str, Any] | None) -> list[dict[str, Any]]:
    """`lowering` of one hop: [{node, op, became, pairing, findings}] (findings: the rules' predictions)."""
    rows = []
    for clip in clips:
        if graph is None:
            rows.append({"node": clip["node"], "op": clip["op"], "became": None, "pairing": None, "findings": []})
            continue
        group, how = pair(clip, stage, graph["ops"])
        became = " -> ".join(became_text(op) for op in group) if group else None
        if not group and stage == "coreml":
            became = "folded (no op of its own)"
        rows.append({"node": clip["node"], "op": clip["op"], "became": became, "pairing": how or "unpaired",
                     "findings": rules.predict(clip, group, stage), "group": group})
    return rows


def failure_findings(clips: list[dict[str, Any]], stage: str) -> list[dict[str, Any]]:
    """Predicted before converting: the source ops this stage's converter refuses (int-literal-refused)."""
    return [{"node": c["node"], "rule": "int-literal-refused", "detail": rules.HOP_RULES["int-literal-refused"]}
            for c in clips if rules.refused(c, stage)]
