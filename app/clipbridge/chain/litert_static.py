"""LiteRT in the static table: what litert-torch writes for each clip-like source op, predicted from the source
alone (its op, its bounds, the op that feeds it), so that `--static` names it without the converter environment,
and a clamp whose tensor carries no name of its own (the root module's functional clamp) is found by it.

Each lowering fact is a named function `(clip) -> ops | None` returning the ops litert-torch writes (shaped as
litert_graph.read's, so the rules in rules.py read them unchanged), or None where the fact does not speak; FACTS
lists them with their evidence. Measured with litert-torch 0.10.0 and ai-edge-litert 2.3.0
(tests/chain/test_litert_static.py::test_the_prediction_is_what_litert_torch_wrote)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from clipbridge import behaviour
from clipbridge.chain import rules
from clipbridge.chain.litert_graph import CONVOLUTIONS

MEASURED = "measured with litert-torch 0.10.0, ai-edge-litert 2.3.0: tests/chain/test_litert_static.py"
PREDICTED_HOW = "predicted from the source (litert-torch 0.10.0's lowering, chain/litert_static.py)"
# aten op that feeds a clamp -> the LiteRT op an activation can be fused into (its builtin options carry it).
FUSES_INTO = {"conv2d": "CONV_2D", "linear": "FULLY_CONNECTED", "mul": "MUL", "div": "MUL", "sub": "SUB",
              "add": "ADD"}
FUSABLE = ("RELU", "RELU6", "RELU_N1_TO_1")  # litert_graph.ACTIVATIONS a clamp lowers to (RELU_0_TO_1 is not one)
Ops = list[dict[str, Any]]


def _op(t: str, *consts: float, fused: str | None = None) -> dict[str, Any]:
    return {"name": "(predicted)", "type": t, "tensor": None, "input": None if fused else -1, "names": [],
            "operands": [("tensor", None), *[("const", float(c)) for c in consts]],
            "attrs": {"fused": fused} if fused else {}, "predicted": True}


def _bounds(clip: dict) -> tuple[float | None, float | None] | None:
    """The clamp's constant bounds (None: an open side); None where a bound is a tensor."""
    lo, hi = clip.get("lo"), clip.get("hi")
    if "tensor" in (lo, hi):
        return None
    return (None if lo is None else float(lo)), (None if hi is None else float(hi))


@behaviour.states("litert-lowers-hardswish")
def hardswish_is_hard_swish(clip: dict) -> Ops | None:
    """hardswish becomes HARD_SWISH, never fused (measured: Clamps.hardswish, conv_hardswish)."""
    return [_op("HARD_SWISH")] if clip["op"] == "hardswish" else None


@behaviour.states("litert-lowers-hardsigmoid")
def hardsigmoid_is_add_relu6_mul(clip: dict) -> Ops | None:
    """hardsigmoid becomes ADD(x, 3) with RELU6 fused, then MUL(x, 1/6); after a convolution the + 3 is folded
    into its bias: CONV_2D (fused RELU6) -> MUL (measured: Clamps.hardsigmoid, MobileBlock.se)."""
    if clip["op"] != "hardsigmoid":
        return None
    sixth = float(np.float32(1) / np.float32(6))
    into = fused_into(clip, "RELU6")
    head = _op(into, fused="RELU6") if into in CONVOLUTIONS else _op("ADD", 3.0, fused="RELU6")
    return [head, _op("MUL", sixth)]


@behaviour.states("litert-lowers-relu6")
def zero_six_is_relu6(clip: dict) -> Ops | None:
    """Bounds [0, 6] (relu6, hardtanh(0, 6), clamp(x, 0, 6), int or float) become RELU6 (measured)."""
    return [_op("RELU6")] if _bounds(clip) == (0.0, 6.0) else None


@behaviour.states("litert-lowers-relu-n1-to-1")
def minus_one_one_is_relu_n1_to_1(clip: dict) -> Ops | None:
    """Bounds [-1, 1] (hardtanh's default, clamp(x, -1, 1)) become RELU_N1_TO_1 (measured)."""
    return [_op("RELU_N1_TO_1")] if _bounds(clip) == (-1.0, 1.0) else None


@behaviour.states("litert-lowers-relu-0-to-1")
def zero_one_is_relu_0_to_1(clip: dict) -> Ops | None:
    """Bounds [0, 1] become RELU_0_TO_1, never fused: no activation function of that name (measured)."""
    return [_op("RELU_0_TO_1")] if _bounds(clip) == (0.0, 1.0) else None


@behaviour.states("litert-lowers-relu")
def min_zero_is_relu(clip: dict) -> Ops | None:
    """A min of 0 and no max (relu, clamp(x, min=0), clamp_min(x, 0)) becomes RELU; with another max,
    RELU -> MINIMUM(x, max) (measured: clamp(x, 0, 3), inf_bounds' clamp(x, 0, inf))."""
    b = _bounds(clip)
    if b is None or b[0] != 0.0:
        return None
    return [_op("RELU")] if b[1] is None else [_op("RELU"), _op("MINIMUM", b[1])]


@behaviour.states("litert-lowers-maximum-minimum")
def bounds_are_maximum_minimum(clip: dict) -> Ops | None:
    """Any other bounds: MAXIMUM(x, min) then MINIMUM(x, max), tensor first, the constants as written (+-inf
    kept, min > max kept) (measured: Clamps.clamp, clamp_4, clamp_6, inf_bounds)."""
    b = _bounds(clip)
    if b is None or b == (None, None):
        return None
    return [_op(t, c) for t, c in (("MAXIMUM", b[0]), ("MINIMUM", b[1])) if c is not None]


LOWERING = (hardswish_is_hard_swish, hardsigmoid_is_add_relu6_mul, zero_six_is_relu6, minus_one_one_is_relu_n1_to_1,
            zero_one_is_relu_0_to_1, min_zero_is_relu, bounds_are_maximum_minimum)  # the first that speaks


@behaviour.states("litert-fuses-activation")
def fused_into(clip: dict, activation: str) -> str | None:
    """The op an activation is fused into: the op feeding the clamp is a convolution, a linear, a mul, a div by
    a constant, a sub or an add, and the clamp is its only user; an add of a constant fuses hardtanh's and
    hardsigmoid's only (relu, relu6 and clamp stay an op of their own there: measured, fuse forms)."""
    p = clip.get("producer")
    if activation not in FUSABLE or not p or p.get("users") != 1 or p["op"] not in FUSES_INTO:
        return None
    if p["op"] == "div" and p.get("scalar") is None:
        return None  # a DIV of two tensors: not measured
    if p["op"] == "add" and p.get("scalar") is not None and clip["op"] not in ("hardtanh", "hardsigmoid"):
        return None
    if p["op"] == "conv2d":
        return "DEPTHWISE_CONV_2D" if p.get("depthwise") else "CONV_2D"
    return FUSES_INTO[p["op"]]


def _fused(clip: dict, ops: Ops) -> Ops:
    """One activation op fused into the op feeding it: that op, with the activation in its options."""
    if len(ops) != 1 or clip["op"] == "hardsigmoid":
        return ops
    into = fused_into(clip, ops[0]["type"])
    if into is None:
        return ops
    p = clip["producer"]
    const = [] if p.get("scalar") is None or into not in ("MUL", "SUB", "ADD") else \
        [1.0 / p["scalar"] if p["op"] == "div" else p["scalar"]]
    return [_op(into, *[float(np.float32(c)) for c in const], fused=ops[0]["type"])]


def predict(clip: dict) -> Ops:
    """The ops litert-torch writes for the source op, in order ([] where no fact speaks: a tensor bound)."""
    for fact in LOWERING:
        ops = fact(clip)
        if ops is not None:
            ops = _fused(clip, ops)
            feeder = _feeder(clip.get("producer") or {})
            if feeder and rules.saturating_op(feeder) and not ops[0]["attrs"].get("fused"):
                ops[0]["input_from"] = feeder  # an unfused builtin op that saturates inf feeds it (rules.SATURATION)
            return saturating(ops)
    return []


def _feeder(p: dict) -> str | None:
    """The LiteRT op the aten op feeding a clamp becomes when no activation is fused into it (a div by a constant
    is a MUL, by a tensor a DIV: measured with litert-torch 0.10.0)."""
    if p.get("op") == "conv2d":
        return "DEPTHWISE_CONV_2D" if p.get("depthwise") else "CONV_2D"
    if p.get("op") == "div" and p.get("scalar") is None:
        return "DIV"
    return FUSES_INTO.get(p.get("op", ""))


def saturating(group: Ops) -> Ops:
    """An op with the clamp fused into it saturates +-inf itself on the builtin kernels, where its activation lets
    inf through (RELU: measured with ai-edge-litert 2.3.0, CONV_2D, ADD, SUB, MUL, FULLY_CONNECTED and
    AVERAGE_POOL_2D with RELU fused wrote FLT_MAX for torch's inf): a saturation rule's condition, at the clamp's
    output."""
    if group and rules.saturating_op(group[0]["type"]) and group[0].get("attrs", {}).get("fused"):
        return [{**group[0], "input_from": group[0]["type"]}, *group[1:]]
    return group


def signature(ops: Ops) -> list[tuple[str, str | None]]:
    """What a group is compared by: each op's type and fused activation, in order."""
    return [(op["type"], op.get("attrs", {}).get("fused")) for op in ops]


def _consts(op: dict) -> list[float]:
    return [c for k, c in op.get("operands", []) if k == "const" and c is not None]


def _same_consts(a: dict, b: dict) -> bool:
    ca, cb = _consts(a), _consts(b)
    return len(ca) == len(cb) and all(x == y or (math.isnan(x) and math.isnan(y)) or
                                      float(np.float32(x)) == float(np.float32(y)) for x, y in zip(ca, cb))


def find(predicted: Ops, ops: Ops, claimed: set[int]) -> Ops:
    """The first run of unclaimed graph ops, each feeding the next, with the predicted types, activations and
    constants: how a clamp whose tensor carries no name of its own is found (the root's functional clamp)."""
    by_tensor = {op["tensor"]: op for op in ops}
    for start in ops:
        run, cur = [], start
        for want in predicted:
            if cur is None or cur["index"] in claimed or signature([cur]) != signature([want]) or \
                    not _same_consts(cur, want):
                break
            run.append(cur)
            cur = next((o for o in ops if o.get("input") == cur["tensor"] and o["index"] not in claimed), None)
        if len(run) == len(predicted) and run:
            src = by_tensor.get(run[0]["input"] if run[0]["input"] is not None else -1)
            while src is not None and src["type"] in ("TRANSPOSE", "RESHAPE"):  # layout only, as lowering's
                src = by_tensor.get(src["input"] if src["input"] is not None else -1)
            if src is not None and rules.saturating_op(src["type"]) and not src["attrs"].get("fused"):
                run[0] = {**run[0], "input_from": src["type"]}
            return run
    return []


def saturation_shows(clip: dict) -> bool:
    """Whether +-inf turned +-FLT_MAX at a clamp's input changes its output (torch's meaning): never for a clamp
    with both bounds finite, which maps both to a bound (measured: a ReLU6 after an unfused builtin CONV_2D equals
    torch, tests/chain/test_litert_static.py), so conv-saturates-inf is no finding there."""
    return any(not rules.same(rules.torch_value(clip, s * math.inf), rules.torch_value(clip, s * rules.FLT_MAX))
               for s in (1.0, -1.0))


def findings(clip: dict, group: Ops, stage: str) -> list[dict[str, Any]]:
    """The rules' predictions on a group (read, or predicted from the source)."""
    at_input = [f for f in rules.predict_input(clip, group, stage) if saturation_shows(clip)]
    return rules.predict(clip, group, stage) + at_input


# Each lowering function -> the text of the behaviour rows it implements (the facts live there, once).
FACTS = {f.__name__.replace("_", "-"): " | ".join(behaviour.row(i).text() for i in getattr(f, "rows"))
         for f in (*LOWERING, fused_into)}
