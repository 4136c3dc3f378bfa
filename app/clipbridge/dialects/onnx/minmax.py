"""Per-element bounds in ONNX: Clip takes scalars, so the clip is written as Max(x, min) then Min(., max), the
order PyTorch's dynamo exporter writes for clamp with tensor bounds (max wins), or Min then Max (min wins).

Max/Min broadcast multidirectionally from opset 8 (Max-8/Min-8); they take the integer types from opset 12 and
bfloat16 from 13, the same steps as Clip; both propagate NaN from either operand (observed on onnxruntime).
"""

from __future__ import annotations

import base64

import numpy as np
from onnx import helper, numpy_helper

from clipbridge.core.findings import Code, Finding, Notes, Severity
from clipbridge.core.meaning import Meaning, NanBound, NanInput, Order
from clipbridge.dialects.kit.common import Emitted, Mode
from clipbridge.dialects.kit.tensor_bounds import bound_array, scalar_of, tensor_of
from clipbridge.dialects.onnx.dtypes import elem_type, onnx_name
from clipbridge.dialects.onnx.model import ir_version_for
from clipbridge.dialects.onnx.spec import NAME, OnnxTarget
from clipbridge.dialects.onnx.versions import NEWEST_OPSET, newest_known_opset, schema_for_opset

FIRST_OPSET = 8  # Max-8/Min-8: multidirectional (numpy) broadcasting


def minmax_order_onnx(src: Meaning) -> Order:
    """Max then Min gives max where min > max (Clip-13's formula); Min then Max gives min."""
    return Order.MIN_WINS if src.order is Order.MIN_WINS else Order.MAX_WINS


def emit_minmax(src: Meaning, target: OnnxTarget, mode: Mode, shape: list | None) -> Emitted:
    """The per-element clip as Max/Min nodes with constant bounds (an ONNX model), and what it computes."""
    opset = target.opset or NEWEST_OPSET
    dt = src.out_dtype
    if opset > newest_known_opset() or opset < FIRST_OPSET or src.scale_bias is not None:
        why = (f"opset {opset} is newer than this onnx package knows" if opset > newest_known_opset() else
               "ScaleBias is not expressed with tensor bounds" if src.scale_bias is not None else
               f"Max/Min broadcast a tensor bound from opset {FIRST_OPSET}; opset {opset} has only Clip (scalars)")
        return Emitted(None, None, [Finding(Code.TENSOR_BOUNDS, Severity.ERROR, f"Per-element bounds cannot be "
                                            f"written: {why}", "per-element bounds", "not expressible")],
                       unsupported=True)
    schema = schema_for_opset(opset)
    if dt not in schema.dtypes:
        return Emitted(None, None, [Finding(Code.DTYPE_UNSUPPORTED, Severity.ERROR, f"Max/Min at opset {opset} do "
                                            f"not take {onnx_name(dt)}")], unsupported=True)
    notes = Notes()
    lo, hi = bound_array(src, "min", notes, "ONNX Max/Min"), bound_array(src, "max", notes, "ONNX Max/Min")
    order = minmax_order_onnx(src)
    first, second = (("Max", lo), ("Min", hi)) if order is Order.MAX_WINS else (("Min", hi), ("Max", lo))
    elem = elem_type(dt)
    nodes, prev = [], "input"
    for i, (op, arr) in enumerate((first, second)):
        if arr is None:
            continue
        name = "min" if op == "Max" else "max"
        # Constant nodes, not initializers: IR 3 (opset 8) would need initializers listed as graph inputs.
        nodes.append(helper.make_node("Constant", [], [name], name=f"{name}_const",
                                      value=numpy_helper.from_array(arr, name)))
        out = "output" if i == 1 or second[1] is None else f"{op.lower()}_out"
        nodes.append(helper.make_node(op, [prev, name], [out], name=op.lower()))
        prev = out
    if not nodes:  # both sides open: the identity, which Clip with no bounds computes
        nodes.append(helper.make_node("Identity", ["input"], ["output"], name="identity"))
    dims = shape if shape is not None else ["N"]
    out_dims: list | None = None
    bshapes = [a.shape for a in (lo, hi) if a is not None]
    if all(isinstance(d, int) for d in dims):
        try:
            out_dims = list(np.broadcast_shapes(tuple(dims), *bshapes))
        except ValueError:
            return Emitted(None, None, [Finding(Code.TENSOR_BOUNDS, Severity.ERROR, f"The bounds {bshapes} do not "
                                                f"broadcast to the input's shape {dims}")], unsupported=True)
    graph = helper.make_graph(nodes, "clipbridge", [helper.make_tensor_value_info("input", elem, dims)],
                              [helper.make_tensor_value_info("output", elem, out_dims)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              ir_version=ir_version_for(opset), producer_name="clipbridge")
    raw = model.SerializeToString()
    words = "Max(x, min) then Min(., max): max wins" if order is Order.MAX_WINS else \
        "Min(x, max) then Max(., min): min wins"
    notes.add(Code.TENSOR_BOUNDS, Severity.INFO, f"ONNX Clip takes scalar bounds: the per-element clip is written as "
              f"{words} (as PyTorch's exporter writes clamp with tensor bounds)")
    meaning = Meaning(
        NAME, f"Max-{min(opset, 13)}/Min-{min(opset, 13)}", dt, scalar_of(src, "min", lo), scalar_of(src, "max", hi),
        order=order, nan_input=NanInput.PROPAGATE, nan_bound=NanBound.PROPAGATE,
        rules=(f"{words}; constant bounds of type T broadcast to the input (numpy rules)",
               "NaN propagates from the input and from a bound (onnxruntime Max/Min)"),
        lower_tensor=tensor_of(lo, dt), upper_tensor=tensor_of(hi, dt))
    spec = {"dialect": NAME, "model": base64.b64encode(raw).decode()}
    return Emitted(spec, meaning, notes.items, {"onnx_model": spec["model"]})


