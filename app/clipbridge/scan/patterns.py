"""Clip-like ONNX ops: each a named pattern with the range it clips to and what each engine does with a NaN.

A pattern is recognised from the node and the model's constants only (never from a run). Its per-engine
NaN reading is a row of the behaviour table (clipbridge.behaviour): what the scan lists and what the diff's
`nan-input` cause is checked against are the same row, so the two cannot disagree
(tests/behaviour/test_agreement.py; tests/diff/test_patterns.py re-measures the rows on the installed engines).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import onnx
from onnx import helper

from clipbridge import behaviour
from clipbridge.scan.constant_reader import MAX_CONSTANT, BadConstant, Constants, graph_constants, scalar

ENGINES = behaviour.ENGINES
ONNX_NAN = "nan-propagates-onnx"  # onnxruntime and onnx.reference on every clip-like op


@dataclass(frozen=True)
class Pattern:
    """A clip-like pattern; what each engine gives for a NaN input is the behaviour table's row it names."""

    name: str
    op: str
    summary: str
    openvino_row: str  # the behaviour row of OpenVINO's NaN reading; the other engines read ONNX_NAN

    def row_of(self, engine: str) -> str:
        return self.openvino_row if engine == "openvino" else ONNX_NAN

    @property
    def nan(self) -> dict[str, str]:
        """engine -> "propagate" | "lower" | "upper" | "zero" | "one" | "engine", from the rows."""
        return {e: behaviour.reading(self.row_of(e), e) for e in ENGINES}

    @property
    def sources(self) -> dict[str, str]:
        return {"spec": behaviour.row(ONNX_NAN).source, "openvino": behaviour.row(self.openvino_row).source,
                "rows": ", ".join(dict.fromkeys(self.row_of(e) for e in ENGINES))}


def _one_sided(op: str, side: str, row: str) -> Pattern:
    """Max or Min against a scalar constant: a one-sided clip; OpenVINO's result depends on the operand order."""
    return Pattern(f"{op.lower()}-constant", op, f"one-sided {op}(x, c) against a scalar constant: clip from {side} "
                   "at c", row)


PATTERNS: dict[str, Pattern] = {p.name: p for p in (
    Pattern("clip", "Clip", "clip(x, min, max); an omitted bound is the type's lowest()/max() (Clip-11+)",
            "openvino-clamp-nan-to-lower"),
    Pattern("relu", "Relu", "max(x, 0)", "openvino-relu-nan-to-zero"),
    Pattern("leaky-relu-0", "LeakyRelu", "LeakyRelu with alpha 0: max(x, 0)", "openvino-prelu-nan-propagates"),
    Pattern("hard-sigmoid", "HardSigmoid", "clip(alpha * x + beta, 0, 1)", "openvino-hardsigmoid-nan-to-one"),
    Pattern("hard-swish", "HardSwish", "x * clip(x / 6 + 1/2, 0, 1)", "openvino-hswish-nan-propagates"),
    _one_sided("Max", "below", "openvino-max-nan-to-constant"),
    _one_sided("Min", "above", "openvino-min-nan-to-constant"),
    Pattern("quantize-saturate", "QuantizeLinear", "round(x / scale) + zero_point saturated to the integer type",
            "quantize-nan-engine-specific"),
)}
OP_PATTERN = {"Clip": "clip", "Relu": "relu", "HardSigmoid": "hard-sigmoid", "HardSwish": "hard-swish",
              "QuantizeLinear": "quantize-saturate"}


@dataclass
class ClipLike:
    """One clip-like node of a graph: its pattern, the tensor it clips, its output, and the range."""

    node: str
    op: str
    pattern: str
    x: str
    output: str
    lo: float | None = None  # the range the output is clipped to, as the spec reads it (None: unbounded)
    hi: float | None = None
    omitted: tuple[str, ...] = ()  # Clip-11+ bounds left out (the spec's lowest()/max() default applies)
    params: dict = field(default_factory=dict)


def constants(g: onnx.GraphProto) -> Constants:
    """Small initializers and Constant-node values of one graph, by tensor name (clipbridge.scan.constant_reader:
    a constant that cannot be read is a 400 naming it when a pattern uses it)."""
    return graph_constants(g, MAX_CONSTANT)


def _scalar(consts: Constants, name: str, n: onnx.NodeProto) -> float | None:
    return scalar(consts, name, f"input {name[:60]!r} of {n.op_type} node {(n.name or n.output[0])[:60]!r}")


def _attr(n: onnx.NodeProto, name: str, default: float) -> float:
    """A numeric attribute (alpha, beta, Clip-6's min/max); one of another type is a 400 naming it."""
    a = next((a for a in n.attribute if a.name == name), None)
    if a is None:
        return default
    if a.type not in (onnx.AttributeProto.FLOAT, onnx.AttributeProto.INT):
        raise BadConstant(f"attribute {name!r} of {n.op_type} node {(n.name or n.output[0])[:60]!r} has type "
                          f"{onnx.AttributeProto.AttributeType.Name(a.type)}; it must be a FLOAT", "model")
    return float(helper.get_attribute_value(a))


def clip_like(n: onnx.NodeProto, consts: Constants, opset: int) -> ClipLike | None:
    """The node as a clip-like pattern, or None when it is not one."""
    if n.domain not in ("", "ai.onnx") or not n.input or not n.output:
        return None
    name, op = n.name or n.output[0], n.op_type
    if op == "LeakyRelu" and _attr(n, "alpha", 0.01) == 0.0:
        return ClipLike(name, op, "leaky-relu-0", n.input[0], n.output[0], 0.0, None)
    if op in ("Max", "Min") and len(n.input) == 2:
        for i in (0, 1):
            c = _scalar(consts, n.input[1 - i], n)
            if c is not None and n.input[i] not in consts:
                lo, hi = (c, None) if op == "Max" else (None, c)
                return ClipLike(name, op, f"{op.lower()}-constant", n.input[i], n.output[0], lo, hi,
                                params={"tensor_first": i == 0})
        return None
    if op not in OP_PATTERN:
        return None
    c = ClipLike(name, op, OP_PATTERN[op], n.input[0], n.output[0])
    if op == "Clip":
        _clip_range(c, n, consts, opset)
    elif op == "Relu":
        c.lo = 0.0
    elif op in ("HardSigmoid", "HardSwish"):
        c.lo, c.hi = 0.0, 1.0 if op == "HardSigmoid" else None
        c.params = {"alpha": _attr(n, "alpha", 0.2 if op == "HardSigmoid" else 1 / 6),
                    "beta": _attr(n, "beta", 0.5)}
    return c


def _clip_range(c: ClipLike, n: onnx.NodeProto, consts: Constants, opset: int) -> None:
    if opset < 11:
        c.lo, c.hi = _attr(n, "min", -3.4028234663852886e38), _attr(n, "max", 3.4028234663852886e38)
        return
    omitted = []
    for pos, side in ((1, "lo"), (2, "hi")):
        if len(n.input) > pos and n.input[pos]:
            setattr(c, side, _scalar(consts, n.input[pos], n))
            c.params[f"{side}_name"] = n.input[pos]
            if getattr(c, side) is None:
                c.params[f"{side}_dynamic"] = True
        else:
            omitted.append("min" if side == "lo" else "max")
    c.omitted = tuple(omitted)


def opset_of(model: onnx.ModelProto) -> int:
    return next((int(i.version) for i in model.opset_import if i.domain in ("", "ai.onnx")), 0)


def find(model: onnx.ModelProto, strict: bool = True) -> dict[str, ClipLike]:
    """Every clip-like node of the main graph, by node name (unnamed nodes go by their first output). A node
    whose constant cannot be read is a BadConstant naming it; with strict=False it is left out instead (the
    scan lists the others, and reports that clip's bound as its own site error)."""
    consts, opset = constants(model.graph), opset_of(model)
    found = {}
    for n in model.graph.node:
        try:
            c = clip_like(n, consts, opset)
        except BadConstant:
            if strict:
                raise
            continue
        if c is not None:
            found[c.node] = c
    _mark_merged(found)
    return found


def _mark_merged(found: dict[str, ClipLike]) -> None:
    """Clips that read one input and one min constant (row openvino-merged-clip-nan-propagates): params merged."""
    groups: dict[tuple[str, str], list[ClipLike]] = {}
    for c in found.values():
        if c.pattern == "clip" and c.params.get("lo_name"):
            groups.setdefault((c.x, c.params["lo_name"]), []).append(c)
    for group in groups.values():
        for c in group if len(group) > 1 else ():
            c.params["merged"] = True


def nan_value(c: ClipLike, engine: str, lowest: float, highest: float) -> float | None:
    """What `engine` gives for a NaN input under this pattern's rule, or None when the rule is 'propagate'
    or engine-specific (then nothing is predicted)."""
    p = PATTERNS[c.pattern]
    rule = p.nan.get(engine, "propagate")
    lo = lowest if c.lo is None or "min" in c.omitted else c.lo
    hi = highest if c.hi is None or "max" in c.omitted else c.hi
    row = reading_row(c, engine)
    if row != p.row_of(engine):  # a condition of the pattern's row does not hold: the row that does decides
        rule = behaviour.reading(row, engine)
    return {"lower": lo, "upper": hi, "zero": 0.0, "one": 1.0}.get(rule)


def reading_row(c: ClipLike, engine: str) -> str:
    """The behaviour row that decides what `engine` gives for a NaN input at this node."""
    p = PATTERNS[c.pattern]
    if engine != "openvino":
        return p.row_of(engine)
    if c.pattern in ("max-constant", "min-constant") and not c.params.get("tensor_first", True):
        return "openvino-minmax-constant-first-propagates"
    crossed = c.lo is not None and c.hi is not None and "min" not in c.omitted and "max" not in c.omitted \
        and c.hi < c.lo
    if c.pattern == "clip" and (crossed or c.params.get("lo_dynamic") or c.params.get("hi_dynamic")):
        return "openvino-clamp-dynamic-nan-propagates"
    if c.pattern == "clip" and c.params.get("merged"):
        return "openvino-merged-clip-nan-propagates"
    return p.row_of(engine)


def readings(c: ClipLike) -> list[dict]:
    """What each engine gives for a NaN input at c, with the behaviour row that says so (the scan's engine
    readings; tests/behaviour/test_agreement.py checks them against the diff)."""
    return [{"node": c.node, "engine": e, "nan_input": behaviour.reading(reading_row(c, e), e),
             "row": reading_row(c, e)} for e in ENGINES]


def describe(c: ClipLike) -> dict:
    """A clip-like node as the scan lists it: its pattern, range, NaN rule per engine, and sources."""
    p = PATTERNS[c.pattern]
    return {"node": c.node, "op": c.op, "pattern": c.pattern, "input": c.x, "output": c.output,
            "summary": p.summary, "nan_input": {e: behaviour.reading(reading_row(c, e), e) for e in ENGINES},
            "sources": {**p.sources, "rows": ", ".join(dict.fromkeys(reading_row(c, e) for e in ENGINES))}}
