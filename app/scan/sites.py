"""A clip found in a model (a site), and the meanings of the patterns that are not a Clip/Clamp op."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from pydantic import ValidationError

from app.dialects import onnx as onnx_dialect
from app.dtypes import DType
from app.errors import ClipBridgeError
from app.findings import Code, Finding, Severity
from app.meaning import EngineNote, Order
from app.numbers import format_number
from app.scan.graph import Const, Graph, MinMax, ScaleBiasCandidate, scale_bias_candidate
from app.specs import OnnxSpec
from app.translate import Resolved


@dataclass
class Site:
    path: str
    node: str
    pattern: str
    nodes: tuple[str, ...]
    input: str
    output: str
    dtype: DType | None = None
    shape: list | None = None
    resolved: Resolved | None = None
    findings: list[Finding] = field(default_factory=list)
    scale_bias: dict | None = None
    error: str | None = None
    ref: Any = None  # (NodeProto, the GraphProto holding it or None in a function): for rewriting


def bound_value(c: Const, dt: DType, side: str) -> int | float:
    """A constant scalar bound as an exact value of the tensor's dtype; a differently typed one is refused."""
    assert c.value is not None
    if c.value.dtype != dt.np_dtype:
        raise ClipBridgeError(f"the {side} bound is {c.value.dtype} but the input is {dt.name}: ONNX Clip-11+ and "
                              "Min/Max take one type T for all inputs (the model is not valid)")
    return dt.to_python(c.value.reshape(()).astype(dt.np_dtype)[()])


def onnx_spec(**fields: Any) -> OnnxSpec:
    """An OnnxSpec from what a model declares. A declaration the spec refuses (a shape with more elements than
    int64 counts) is the model's error, reported on its site: a ClipBridgeError, never a ValidationError."""
    try:
        return OnnxSpec(dialect="onnx", **fields)
    except ValidationError as exc:
        e = exc.errors()[0]
        loc = ".".join(str(p) for p in e.get("loc", ()) if not isinstance(p, int))
        raise ClipBridgeError(f"the clip cannot be read: {loc}: {str(e.get('msg', ''))[:200]}", "model") from None


def dynamic_finding(side: str, why: str) -> Finding:
    return Finding(Code.DYNAMIC_BOUNDS, Severity.ERROR, f"The {side} bound is not a constant of the model: {why}")


def minmax_resolved(mm: MinMax, dt: DType, shape: list | None,
                    notes: tuple[EngineNote, ...] = ()) -> tuple[Resolved | None, list[Finding]]:
    """Min(Max(x, a), b) computes Clip-13 with typed bounds a, b (so a > b gives b); Max(Min(x, b), a) gives a."""
    for side, c in (("lower", mm.lo), ("upper", mm.hi)):
        if c.value is None:
            raise ClipBridgeError(f"the {side} bound of {mm.pattern} is a constant whose value was not read: "
                                  f"{c.why}")
    lo = bound_value(mm.lo, dt, "lower")
    hi = bound_value(mm.hi, dt, "upper")
    spec = onnx_spec(opset=13, elem_type=dt.onnx, shape=shape, min=lo, max=hi)
    parsed = onnx_dialect.Parsed(spec)
    m = onnx_dialect.resolve(parsed)
    rule = (f"{mm.pattern} with constant scalars a = {format_number(lo)}, b = {format_number(hi)}: element-wise "
            f"Min/Max of one type T, so the bounds are exact values of T; NaN propagates")
    order = Order.MAX_WINS if mm.max_wins else Order.MIN_WINS
    order_rule = "a > b gives b (the outer Min wins)" if mm.max_wins else "a > b gives a (the outer Max wins)"
    m = replace(m, version=mm.pattern, order=order, rules=(rule, order_rule), engine_notes=notes)
    return Resolved("onnx", m, onnx_dialect.normalize(parsed), shape), []


# Observed with openvino 2026.4: the CPU plugin fuses the pair into one clamp, and NaN comes out as a.
NOTE_MINMAX_NAN_OPENVINO = EngineNote("openvino CPU plugin", "A NaN input of a Minimum/Maximum pair becomes the "
                                      "lower bound a (the pair is fused into a clamp), where the formula "
                                      "propagates NaN")


def attach_scale_bias(g: Graph, site: Site, mul_op: str, add_op: str) -> None:
    """Record a Mul/Add (Multiply/Add) ScaleBias candidate feeding the site's input, with its finding."""
    c = scale_bias_candidate(g, site.input, mul_op, add_op)
    if c is not None:
        site.scale_bias, f = scale_bias_info(c, site.dtype, g)
        if f is not None:
            site.findings.append(f)


def scale_bias_info(c: ScaleBiasCandidate, dt: DType | None, g: Graph) -> tuple[dict, Finding | None]:
    """What a DirectML target could fold into ScaleBias, and what that changes (one or two roundings)."""
    def one(v: np.ndarray | None, default: float) -> int | float:
        return default if v is None else (v.reshape(()).item())
    scale, bias = one(c.scale, 1.0), one(c.bias, 0.0)
    info = {"scale": scale, "bias": bias, "nodes": list(c.nodes)}
    if dt is None or not dt.is_float:
        return info, None
    two = c.scale is not None and c.bias is not None
    text = (f"{' and '.join(c.nodes)} compute{'s' if len(c.nodes) == 1 else ''} x*{format_number(scale)}"
            f"+{format_number(bias)} before this clip: a DirectML target can fold "
            f"{'them' if len(c.nodes) > 1 else 'it'} into ScaleBias {{Scale: {format_number(scale)}, "
            f"Bias: {format_number(bias)}}}")
    if two:
        text += ("; ONNX rounds after the Mul and after the Add, DirectML does not document whether ScaleBias "
                 "rounds once (fused) or twice")
    return info, Finding(Code.SCALE_BIAS, Severity.INFO if not two else Severity.WARNING, text)
