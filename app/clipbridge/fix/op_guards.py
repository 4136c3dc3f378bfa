"""Fix rules beyond clip-like nodes: NaN guards that make a Softmax/LogSoftmax or a MaxPool on engine B compute
what engine A computes, each from its row of the behaviour table (softmax-nan-row, maxpool-nan). Imported by
clipbridge.fix.rules, whose RULES lists them."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from clipbridge import behaviour
from clipbridge.fix.edit import Edit, Site

SOFTMAX_KINDS = ("softmax", "logsoftmax")


@behaviour.states("softmax-nan-row", "reducesum-propagates-nan")
def softmax_nan_guard(e: Edit, s: Site, a: str, b: str) -> bool:
    """Row softmax-nan-row: A gives the whole row NaN where B gives NaN only at the row's NaN and +inf elements.
    B's output row then sums to NaN exactly there (row reducesum-propagates-nan), so y = Where(Equal(r, r), y', r)
    with r = ReduceSum(y', axis, keepdims=1) gives B A's row and leaves every other row bit for bit. The other
    way round, _softmax_elements."""
    if s.node.kind not in SOFTMAX_KINDS:
        return False
    ra, rb = behaviour.reading("softmax-nan-row", a), behaviour.reading("softmax-nan-row", b)
    if (ra, rb) == ("element", "row"):
        return _softmax_elements(e, s, a, b)
    if (ra, rb) != ("row", "element"):
        return False
    base, y = s.name.lstrip("#") or s.proto.op_type, s.proto.output[0]
    inner, total = e.fresh(f"{y}_unguarded_clipbridge"), e.fresh(f"{y}_rowsum_clipbridge")
    cond = e.fresh(f"{y}_notnan_clipbridge")
    axes = e.constant(np.array([s.node.axis], np.int64), np.dtype(np.int64), f"{base}_axis_clipbridge")
    s.proto.output[0] = inner
    e.after.setdefault(s.index, []).extend([
        helper.make_node("ReduceSum", [inner, axes], [total], name=e.fresh(f"{base}_rowsum_clipbridge"), keepdims=1),
        helper.make_node("Equal", [total, total], [cond], name=e.fresh(f"{base}_notnan_clipbridge")),
        helper.make_node("Where", [cond, inner, total], [y], name=e.fresh(f"{base}_where_clipbridge"))])
    s.done = True
    e.note(s, "softmax-nan-guard", f"a row holding NaN or +inf: {a} gives the whole row NaN, {b} NaN only at "
           "those elements; NaN written over the row where it sums to NaN",
           cause=behaviour.row("softmax-nan-row").cause)
    return True


@behaviour.states("maxpool-nan")
def maxpool_nan_guard(e: Edit, s: Site, a: str, b: str) -> bool:
    """Row maxpool-nan: A gives a window's largest number where B may give its NaN; the pool then reads
    Where(Equal(x, x), x, -inf), so that no window holds a NaN on B and its largest number is A's."""
    if s.node.kind != "maxpool" or e.opset < 11:  # Equal takes floats from opset 11
        return False
    if behaviour.reading("maxpool-nan", a) != "drops" or behaviour.reading("maxpool-nan", b) != "window":
        return False
    base = s.name.lstrip("#") or s.proto.op_type
    cond, kept = e.fresh(f"{s.x}_notnan_clipbridge"), e.fresh(f"{s.x}_nan_dropped_clipbridge")
    low = e.constant(-np.inf, s.node.dtype, f"{base}_lowest_clipbridge")
    e.before.setdefault(s.index, []).extend([
        helper.make_node("Equal", [s.x, s.x], [cond], name=e.fresh(f"{base}_notnan_clipbridge")),
        helper.make_node("Where", [cond, s.x, low], [kept], name=e.fresh(f"{base}_drop_nan_clipbridge"))])
    s.proto.input[0] = kept
    s.done = True
    e.note(s, "maxpool-nan-guard", f"a window holding NaN: {a} gives its largest number, {b} may give the NaN; "
           "NaN read as -inf before the pool", cause=behaviour.row("maxpool-nan").cause)
    return True


def _softmax_elements(e: Edit, s: Site, a: str, b: str) -> bool:
    """Row softmax-nan-row, A giving NaN only at a row's NaN and +inf elements and 0 (LogSoftmax: -inf) at the
    others, where B gives the whole row NaN: bad = IsNaN(x) or x == +inf; a row with any bad element
    gets 0 (-inf) at its other elements and NaN at the bad ones; every other row is B's own, bit for bit."""
    if e.opset < 13:  # ReduceSum-13 takes its axes as an input
        return False
    base, y, x, dt = s.name.lstrip("#") or s.proto.op_type, s.proto.output[0], s.x, s.node.dtype
    n = {k: e.fresh(f"{y}_{k}_clipbridge") for k in ("nan", "posinf", "bad", "badf", "count", "inrow", "rowed")}
    inner = e.fresh(f"{y}_unguarded_clipbridge")
    axes = e.constant(np.array([s.node.axis], np.int64), np.dtype(np.int64), f"{base}_axis_clipbridge")
    zero, nan = e.constant(0.0, dt, f"{base}_zero_clipbridge"), e.constant(np.nan, dt, f"{base}_nan_clipbridge")
    inf = e.constant(np.inf, dt, f"{base}_posinf_clipbridge")
    fill = zero if s.node.kind == "softmax" else e.constant(-np.inf, dt, f"{base}_neginf_clipbridge")
    s.proto.output[0] = inner

    def node(op: str, ins: list[str], out: str, **attrs: object) -> onnx.NodeProto:
        return helper.make_node(op, ins, [out], name=e.fresh(f"{base}_{op.lower()}_clipbridge"), **attrs)
    e.after.setdefault(s.index, []).extend([
        node("IsNaN", [x], n["nan"]), node("Equal", [x, inf], n["posinf"]),  # IsInf takes float16 from opset 20
        node("Or", [n["nan"], n["posinf"]], n["bad"]),
        node("Cast", [n["bad"]], n["badf"], to=helper.np_dtype_to_tensor_dtype(dt)),
        node("ReduceSum", [n["badf"], axes], n["count"], keepdims=1), node("Greater", [n["count"], zero], n["inrow"]),
        node("Where", [n["inrow"], fill, inner], n["rowed"]), node("Where", [n["bad"], nan, n["rowed"]], y)])
    s.done = True
    e.note(s, "softmax-nan-guard", f"a row holding NaN or +inf: {a} gives NaN only at those elements, {b} the whole "
           "row NaN; the row's other elements written as A gives them", cause=behaviour.row("softmax-nan-row").cause)
    return True
