"""The rewrite rules. Each is applied to one node (clip-like here; a Softmax or a MaxPool in
clipbridge.fix.op_guards) only where the behaviour table (clipbridge.behaviour, read through clipbridge.fix.facts)
says that reference A and target B compute it differently; each names its rows (`behaviour.states`) and returns
why it fired.
"""

from __future__ import annotations

import math

import numpy as np
from onnx import helper

from clipbridge import behaviour
from clipbridge.fix import facts
from clipbridge.fix.edit import Edit, Site
from clipbridge.fix.op_guards import maxpool_nan_guard, softmax_nan_guard
from clipbridge.fix.facts import Node

THRESHOLDED_RELU_OPSET = 10  # ThresholdedRelu-10 (ai.onnx)
NAN_ROWS = tuple(dict.fromkeys(("nan-propagates-onnx", *facts.OPENVINO_NAN_ROW.values())))  # a NaN at a clip
NAN_CAUSE = behaviour.row("nan-propagates-onnx").cause


def _show(v: float | np.ndarray | None) -> str:
    if v is None:
        return "NaN (propagates)"
    a = np.asarray(v)
    return repr(float(a)) if a.size == 1 else f"the constant operand ({a.size} values)"


@behaviour.states("omitted-bound-default")
def explicit_default_bound(e: Edit, s: Site, a: str, b: str) -> bool:
    """Row omitted-bound-default: where A and B read an omitted bound differently, write the bound A really
    uses as an explicit input."""
    n = s.node
    if n.kind != "clip" or n.dynamic:
        return False
    changed = False
    for side, pos in (("min", 1), ("max", 2)):
        if (n.lo if side == "min" else n.hi) is not None:
            continue
        va, vb = facts.default_bound(a, n.dtype, side), facts.default_bound(b, n.dtype, side)
        if va == vb:
            continue
        name = e.constant(va, n.dtype, f"{s.name.lstrip('#')}_{side}_clipbridge")
        while len(s.proto.input) <= pos:
            s.proto.input.append("")
        s.proto.input[pos] = name
        s.node = _with(n, **{"lo" if side == "min" else "hi": va})
        n = s.node
        rule = "float16-overflow-clamp" if n.dtype == np.float16 and math.isfinite(va) else "explicit-default-bound"
        e.note(s, rule, f"omitted {side}: {a} uses {va!r}, {b} uses {vb!r}; written as an explicit input",
               cause=behaviour.row("omitted-bound-default").cause)
        changed = True
    return changed


@behaviour.states("clip-min-greater-than-max", "clip6-crossed-refused")
def crossed_clip6(e: Edit, s: Site, a: str, b: str) -> bool:
    """Rows clip6-crossed-refused and clip-min-greater-than-max: A runs a Clip-6 with min > max that B refuses;
    write min = max = the constant A gives."""
    n = s.node
    if n.kind != "clip6" or n.lo is None or n.hi is None or not n.lo > n.hi:
        return False
    if not facts.loads_crossed_clip6(a) or facts.loads_crossed_clip6(b):
        return False
    value = facts.crossed_value(a, n)
    for attr in s.proto.attribute:
        if attr.name in ("min", "max"):
            attr.f = float(value)
    s.node = _with(n, lo=value, hi=value)
    e.note(s, "crossed-bounds-constant", f"min {n.lo!r} > max {n.hi!r}: {a} gives {value!r} on every number, "
           f"{b} refuses the model; written as min = max = {value!r}",
           cause=behaviour.row("clip-min-greater-than-max").cause)
    return True


@behaviour.states(*NAN_ROWS)
def nan_guard(e: Edit, s: Site, a: str, b: str) -> bool:
    """A propagates NaN where B writes a value (the NaN rows): Where(IsNaN(x), x, y), written as
    Where(Equal(x, x), y, x), gives B A's NaN and leaves every other number
    untouched."""
    va, vb = facts.nan_output(a, s.node), facts.nan_output(b, s.node)
    if va is not facts.PROPAGATE or vb is facts.PROPAGATE:
        return False
    _guard(e, s, s.x)
    e.note(s, "nan-guard", f"a NaN input: {a} gives NaN, {b} gives {_show(vb)}", cause=NAN_CAUSE)
    return True


@behaviour.states(*NAN_ROWS, "thresholded-relu-drops-nan")
def nan_to_zero(e: Edit, s: Site, a: str, b: str) -> bool:
    """A writes 0 for a NaN input where B propagates it, at a node whose other outputs are >= 0 (Relu, Clip with
    min 0, Max(x, 0)): ThresholdedRelu(alpha=0) after it where B drops NaN there (row thresholded-relu-drops-nan),
    at Relu's cost, a quarter of Equal + Where's there."""
    va, vb = facts.nan_output(a, s.node), facts.nan_output(b, s.node)
    if va is facts.PROPAGATE or vb is not facts.PROPAGATE or e.opset < THRESHOLDED_RELU_OPSET:
        return False
    if not facts.thresholded_relu_drops_nan(b) or not facts.nonnegative(s.node) or np.any(np.asarray(va) != 0):
        return False
    base, y = s.name.lstrip("#") or s.proto.op_type, s.proto.output[0]
    inner = e.fresh(f"{y}_unguarded_clipbridge")
    s.proto.output[0] = inner
    e.after.setdefault(s.index, []).append(helper.make_node(
        "ThresholdedRelu", [inner], [y], name=e.fresh(f"{base}_nan_to_zero_clipbridge"), alpha=0.0))
    s.done = True
    e.note(s, "nan-to-zero", f"a NaN input: {a} gives 0.0, {b} gives NaN; ThresholdedRelu(alpha=0) after it",
           cause=NAN_CAUSE)
    return True


@behaviour.states(*NAN_ROWS)
def nan_to_value(e: Edit, s: Site, a: str, b: str) -> bool:
    """A writes a value for a NaN input where B propagates it (or writes another): Where(IsNaN(x), v, y), written
    as Where(Equal(y, y), y, v), with A's value v (the value A's NaN row gives)."""
    va, vb = facts.nan_output(a, s.node), facts.nan_output(b, s.node)
    if s.done or va is facts.PROPAGATE or (vb is not facts.PROPAGATE and np.array_equal(va, vb)):
        return False
    v = e.constant(va, s.node.dtype, f"{s.name.lstrip('#')}_nan_value_clipbridge")
    # Where B propagates NaN, its own output is NaN exactly where x is: testing y' instead of x leaves x with one
    # reader, so onnxruntime still fuses a Conv with this Clip (FusedConv) and the guard costs two light passes.
    _guard(e, s, v, test_output=vb is facts.PROPAGATE)
    e.note(s, "nan-to-value", f"a NaN input: {a} gives {_show(va)}, {b} gives {_show(vb)}", cause=NAN_CAUSE)
    return True


RULES = (explicit_default_bound, crossed_clip6, nan_guard, nan_to_zero, nan_to_value, softmax_nan_guard,
         maxpool_nan_guard)  # bounds
# first: the NaN rules read them; nan_to_zero before nan_to_value (the cheaper form where it is exact)


def _guard(e: Edit, s: Site, when_nan: str, test_output: bool = False) -> None:
    """y = Where(Equal(x, x), y', when_nan) (opset >= 11; Equal takes floats from 11) or Where(IsNaN(x), when_nan,
    y') below: the node keeps its name and computes y'; its output name moves to the Where. OpenVINO fuses the
    Equal form with the Clamp into one eltwise subgraph (one pass after the Conv), while IsNaN stays a kernel of
    its own (two)."""
    base = s.name.lstrip("#") or s.proto.op_type
    y = s.proto.output[0]
    kind = "notnan" if e.opset >= 11 else "isnan"
    inner, cond = e.fresh(f"{y}_unguarded_clipbridge"), e.fresh(f"{y}_{kind}_clipbridge")
    s.proto.output[0] = inner
    x = inner if test_output else s.x
    if e.opset >= 11:
        nodes = [helper.make_node("Equal", [x, x], [cond], name=e.fresh(f"{base}_notnan_clipbridge")),
                 helper.make_node("Where", [cond, inner, when_nan], [y], name=e.fresh(f"{base}_where_clipbridge"))]
    else:
        nodes = [helper.make_node("IsNaN", [x], [cond], name=e.fresh(f"{base}_isnan_clipbridge")),
                 helper.make_node("Where", [cond, when_nan, inner], [y], name=e.fresh(f"{base}_where_clipbridge"))]
    e.after.setdefault(s.index, []).extend(nodes)


def _with(n: Node, **changes: object) -> Node:
    return Node(**{**n.__dict__, **changes})
