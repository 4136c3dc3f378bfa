"""The static lowering table: for each clip-like source op, what each converter wrote for it (read from the converted
graph, nothing run), how the pair was made, and the findings the rules predict."""

from __future__ import annotations

from typing import Any

import numpy as np

from clipbridge.chain import rules
from clipbridge.core.numbers import format_number

LAYOUT_OPS = ("TRANSPOSE", "RESHAPE")  # what litert-torch adds before a graph output, no value of its own
COREML_CLIPS = ("clip", "relu6", "relu", "maximum", "minimum", "thresholded_relu", "sigmoid_hard", "fill")


def _num(c: float | None) -> str:
    """A constant as the table shows it: FLT_MAX by name, else float32's shortest repr (1/6 is 0.16666667)."""
    if c is None:
        return "?"
    if abs(c) == rules.FLT_MAX:
        return "-FLT_MAX" if c < 0 else "FLT_MAX"
    return format_number(float(str(np.float32(c))))


def became_text(op: dict[str, Any]) -> str:
    """One op as the table shows it: its type and operands in the order the converter wrote them."""
    t, attrs = op["type"], op.get("attrs", {})
    if attrs.get("fused"):  # LiteRT: the activation is the op's own (a CONV_2D or ADD with RELU6 fused)
        consts = [_num(c) for k, c in op.get("operands", []) if k == "const"]
        head = f"{t}({', '.join(['x', *consts])})" if consts else t
        return f"{head} (fused {attrs['fused']})"
    if t == "Clamp":
        return f"Clamp({_num(attrs.get('min'))}, {_num(attrs.get('max'))})"
    if t == "clip" and op.get("consts"):
        return f"clip({_num(op['consts'].get('alpha'))}, {_num(op['consts'].get('beta'))})"
    if op.get("operands") and t not in ("HardSigmoid",):
        args = ["x" if k == "tensor" else "''" if k == "omitted" else _num(c) for k, c in op["operands"]]
        return f"{t}({', '.join(args)})"
    if t == "const":
        return "const (folded)"
    if t == "HardSigmoid" and attrs:
        return f"HardSigmoid({_num(attrs.get('alpha'))}, {_num(attrs.get('beta'))})"
    return t


def pair(clip: dict[str, Any], stage: str, ops: list[dict[str, Any]], outputs: list[int] | None = None
         ) -> tuple[list[dict], str | None]:
    """The ops of a stage that a source op became, and how the pair was made (None: no pairing found it);
    `outputs`: LiteRT's graph output tensors in order."""
    node = clip["node"]
    if stage == "onnx":
        group = [op for op in ops if op.get("key") == node]
        if group:
            return group, "ONNX node metadata pkg.torch.onnx.name_scopes names the torch node"
        group = [op for op in ops if node in op.get("names", [])]
        return group, "ONNX output tensor name is the torch node name" if group else None
    if stage == "openvino":
        group = [op for op in ops if node in op["names"] or f"{node}:0" in op["names"]]
        shared = _shared_upstream(clip, group, ops)
        how = "OpenVINO tensor names (the torch node name, or the ONNX tensor name it kept)"
        return shared + group, (how + (" and the op it shares with another" if shared else "")) if group else None
    if stage == "coreml":
        return _coreml(clip, ops)
    return _litert(clip, ops, outputs or [])


def _litert(clip: dict[str, Any], ops: list[dict], outputs: list[int]) -> tuple[list[dict], str | None]:
    """litert-torch names an op's tensor by the torch module path (its first `;` part; a fused op lists the
    activation's path first) and a graph output `serving_default_output_K_output`: a source op inside a module is
    found by its path, one the model returns by its output position, with the MAXIMUM before a MINIMUM (a
    two-sided clamp) and hardsigmoid's ADD(x, 3) (RELU6 fused) before its MUL(., 1/6)."""
    by_tensor = {op["tensor"]: op for op in ops}
    scope = clip.get("scope")
    group = [op for op in ops if scope and op["names"] and op["names"][0] == scope]
    how = ["LiteRT tensor names carry the torch module path"] if group else []
    for k in clip.get("outputs", []):
        last = by_tensor.get(outputs[k]) if k < len(outputs) else None
        while last is not None and last["type"] in LAYOUT_OPS:  # channels-last back to torch's layout
            last = by_tensor.get(last["input"] if last["input"] is not None else -1)
        if last is None:
            continue
        up = by_tensor.get(last.get("input") if last.get("input") is not None else -1)
        pairs = {"MINIMUM": ("MAXIMUM", "RELU"), "MAXIMUM": ("MINIMUM",)}  # clamp(x, 0, hi): RELU -> MINIMUM
        found = [up, last] if up is not None and (up["type"] in pairs.get(last["type"], ()) or (
            clip["op"] == "hardsigmoid" and last["type"] == "MUL" and up["attrs"].get("fused") == "RELU6")) \
            else [last]
        group += [op for op in found if op not in group]
        how.append(f"LiteRT graph output {k} is the source op's value")
    group.sort(key=lambda op: op.get("index", 0))
    src = by_tensor.get(group[0]["input"] if group and group[0]["input"] is not None else -1)
    while src is not None and src["type"] in LAYOUT_OPS:  # a TRANSPOSE back to NCHW between the conv and it
        src = by_tensor.get(src["input"] if src["input"] is not None else -1)
    if src is not None and rules.saturating_op(src["type"]) and not src["attrs"].get("fused"):
        group[0] = {**group[0], "input_from": src["type"]}  # a saturation hop rule's condition (rules.SATURATION)
    if group and clip["op"] == "hardsigmoid" and group[0]["type"] == "ADD" and group[0]["input"] is None:
        # ADD(x, 3) with RELU6 fused: its tensor operand is hardsigmoid's own input (a convolution's is not)
        group[0] = {**group[0], "input": group[0]["inputs"][0]}
    return group, "; ".join(dict.fromkeys(how)) or None


def writers(graph: dict[str, Any]) -> list[dict | None]:
    """The LiteRT op that computed each graph output, past the layout ops before it (the op a saturation rule
    reads at an output, hops._output_cause)."""
    by_tensor = {op["tensor"]: op for op in graph["ops"]}
    out: list[dict | None] = []
    for t in graph.get("output_tensors") or []:
        op = by_tensor.get(t)
        while op is not None and op["type"] in LAYOUT_OPS:
            op = by_tensor.get(op["input"] if op["input"] is not None else -1)
        out.append(op)
    return out


def _shared_upstream(clip: dict[str, Any], group: list[dict], ops: list[dict]) -> list[dict]:
    """Clip-like ops upstream of the group that another source op was paired with: OpenVINO merges equal ops
    (relu6's Maximum(x, 0) is clamp(x, min=0)'s), so the source op's input is above them."""
    out: list[dict] = []
    by_tensor = {op["tensor"]: op for op in ops}
    while group or out:
        first = (out or group)[0]
        up = by_tensor.get(first.get("input", ""))
        if up is None or clip.get("input") in first.get("input_names", []) or up in out or len(out) > 3:
            return out
        out.insert(0, up)
    return out


def _coreml(clip: dict[str, Any], ops: list[dict]) -> tuple[list[dict], str | None]:
    """Core ML keeps a torch node's name on the op that gives its result, names clamps clip_N in torch's order
    (clamp -> clip_0, clamp_3 -> clip_3), and prefixes the ops it adds with their type (thresholded_relu_0)."""
    node, by_out = clip["node"], {o: op for op in ops for o in op["outputs"]}
    named = next((op for op in ops if op["name"] == node), None)
    how = "Core ML MIL op name is the torch node name"
    if named is None and clip["op"] in ("clamp", "clamp_min", "clamp_max"):
        k = node.rpartition("_")[2] if "_" in node else "0"
        named = next((op for op in ops if op["type"] == "clip" and op["name"] == f"clip_{k}"), None)
        how = "Core ML names clamps clip_N in the order of torch's clamp nodes"
    if named is None:
        return [], None
    group, todo = [named], [named]
    while todo and len(group) < 6:  # the ops Core ML added for it (hardswish: thresholded_relu, sigmoid_hard)
        ups = [by_out[i] for i in todo.pop()["inputs"] if i in by_out and by_out[i]["type"] in COREML_CLIPS
               and by_out[i] not in group]
        group[:0], todo = ups, todo + ups
    return group, how


def table(clips: list[dict[str, Any]], stage: str, graph: dict[str, Any] | None) -> list[dict[str, Any]]:
    """`lowering` of one hop: [{node, op, became, pairing, findings}] (findings: the rules' predictions)."""
    rows = []
    for clip in clips:
        if graph is None:
            rows.append({"node": clip["node"], "op": clip["op"], "became": None, "pairing": None, "findings": []})
            continue
        group, how = pair(clip, stage, graph["ops"], graph.get("output_tensors"))
        became = " -> ".join(became_text(op) for op in group) if group else None
        if not group and stage == "coreml":
            became = "folded (no op of its own)"
        rows.append({"node": clip["node"], "op": clip["op"], "became": became, "pairing": how or "unpaired",
                     "findings": rules.predict(clip, group, stage) + rules.predict_input(clip, group, stage),
                     "group": group})
    return rows


def failure_findings(clips: list[dict[str, Any]], stage: str) -> list[dict[str, Any]]:
    """Predicted before converting: the source ops this stage's converter refuses (int-literal-refused)."""
    return [{"node": c["node"], "rule": "int-literal-refused", "detail": rules.HOP_RULES["int-literal-refused"]}
            for c in clips if rules.refused(c, stage)]
