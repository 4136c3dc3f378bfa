"""A differing node as the cause rules beyond clips read it (clipbridge.diff.op_causes, accumulation): its
attributes, each engine's captured inputs (constants read from the model) and outputs, and which input elements
one output element was computed from (a Softmax row, a reduced slice, a pooling window)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from clipbridge.diff.child import NodeInfo
from clipbridge.scan.wire import is_external


@dataclass
class Site:
    """A differing node as the rules read it: its attributes, each engine's captured inputs (constants filled
    from the model) and each engine's output."""

    op: str
    attrs: dict[str, Any]
    opset: int
    inputs: dict[str, list[np.ndarray | None]]  # engine -> the node's inputs, in order
    outs: dict[str, np.ndarray]
    memo: dict[str, Any] = field(default_factory=dict)

    @property
    def first(self) -> list[np.ndarray | None]:
        return next(iter(self.inputs.values()))


class Graph:
    """The model's main-graph nodes (attributes) and constants, read once, when a rule first needs them (a diff
    whose differing nodes are all clip-like never parses the model again)."""

    def __init__(self, model: bytes) -> None:
        self._bytes = model
        self._nodes: dict[str, onnx.NodeProto] | None = None
        self._consts: dict[str, onnx.TensorProto] = {}
        self._opset = 13

    def _load(self) -> dict[str, onnx.NodeProto]:
        if self._nodes is None:
            m = onnx.load_from_string(self._bytes)
            self._nodes = {p.name or p.output[0]: p for p in m.graph.node if p.name or p.output}  # as child names it
            self._consts = {t.name: t for t in m.graph.initializer}
            self._consts.update({c.output[0]: c.attribute[0].t for c in m.graph.node  # a Constant's tensor
                                 if c.op_type == "Constant" and c.attribute and c.attribute[0].name == "value"})
            self._opset = next((o.version for o in m.opset_import if o.domain in ("", "ai.onnx")), 13)
        return self._nodes

    def site(self, n: NodeInfo, values: dict[str, dict[str, np.ndarray]]) -> Site | None:
        node = self._load().get(n.name)
        if node is None or not n.outputs:  # a body's node: its attributes are not read here
            return None
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        ins = {e: [self._tensor(i, v, self._consts) for i in n.inputs] for e, v in values.items()}
        return Site(node.op_type, attrs, self._opset, ins, {e: v[n.outputs[0]] for e, v in values.items()})

    @staticmethod
    def _tensor(name: str, captured: dict[str, np.ndarray], inits: dict) -> np.ndarray | None:
        if not name:
            return None
        if name in captured:
            return captured[name]
        if name not in inits or is_external(inits[name]):  # a weight left in its file is never opened here
            return None
        return numpy_helper.to_array(inits[name])


def axis_of(a: int, rank: int) -> int:
    return a + rank if a < 0 else a


def row_of(site: Site, idx: tuple[int, ...], axis: int, coerced: bool) -> np.ndarray:
    """The input elements one Softmax (or Arg*) output element was computed from: the line along `axis`, or
    (Softmax before opset 13) every element sharing the index before `axis` (the input coerced to 2-D)."""
    x = site.first[0]
    return x[idx[:axis]].reshape(-1) if coerced else x[(*idx[:axis], slice(None), *idx[axis + 1:])]


def reduced(site: Site, idx: tuple[int, ...], engine: str | None = None) -> np.ndarray:
    """The input elements a ReduceMax/ReduceMin output element reduces (axes from the attribute, or the input
    from opset 18; keepdims as given)."""
    ins = site.inputs[engine] if engine else site.first
    x = ins[0]
    axes_in = ins[1] if len(ins) > 1 else None
    axes = list(site.attrs.get("axes", [])) if axes_in is None else [int(a) for a in axes_in.reshape(-1)]
    axes = [axis_of(a, x.ndim) for a in axes] or (list(range(x.ndim)) if not site.attrs.get(
        "noop_with_empty_axes") else [])
    keep = int(site.attrs.get("keepdims", 1))
    rest = iter(idx)
    sel = [slice(None) if d in axes else None for d in range(x.ndim)]
    for d in range(x.ndim):
        if d in axes:
            if keep:
                next(rest)
        else:
            sel[d] = next(rest)
    return x[tuple(sel)].reshape(-1)


def taps(site: Site, idx: tuple[int, ...], kernel: list[int], spatial: tuple[int, ...]) -> list[list[tuple[int, int]]]:
    """Per spatial axis, the (input position, kernel position) pairs one MaxPool/Conv output element reads
    (pads, strides, dilations, auto_pad SAME_*); a position in the padding is left out (it adds nothing)."""
    nd = len(kernel)
    s = list(site.attrs.get("strides", [1] * nd))
    d = list(site.attrs.get("dilations", [1] * nd))
    begin = list(site.attrs.get("pads", [0] * 2 * nd))[:nd]
    auto = site.attrs.get("auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else auto
    out_shape = next(iter(site.outs.values())).shape
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        for i in range(nd):
            total = max((out_shape[2 + i] - 1) * s[i] + (kernel[i] - 1) * d[i] + 1 - spatial[i], 0)
            begin[i] = total // 2 if auto == "SAME_UPPER" else (total + 1) // 2
    out = []
    for i in range(nd):
        start = idx[2 + i] * s[i] - begin[i]
        out.append([(start + t * d[i], t) for t in range(kernel[i]) if 0 <= start + t * d[i] < spatial[i]])
    return out


def pooled(site: Site, idx: tuple[int, ...]) -> np.ndarray:
    """The input window one MaxPool output element reads."""
    x = site.first[0]
    per_axis = taps(site, idx, list(site.attrs["kernel_shape"]), x.shape[2:])
    return x[np.ix_([idx[0]], [idx[1]], *[[p for p, _ in t] for t in per_axis])].reshape(-1)
