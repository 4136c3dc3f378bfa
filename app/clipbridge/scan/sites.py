"""A clip found in a model (a site), and the meanings of the patterns that are not a Clip/Clamp op."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from pydantic import ValidationError

from clipbridge import behaviour
from clipbridge.dialects.onnx.dtypes import onnx_name
from clipbridge.dialects.onnx.meaning import normalize, resolve
from clipbridge.dialects.onnx.model import Parsed
from clipbridge.dialects.kit.tensor_bounds import open_bound
from clipbridge.core.dtypes import DType
from clipbridge.core.errors import ClipBridgeError
from clipbridge.core.findings import Code, Finding, Severity
from clipbridge.core.drift import MAX_TENSOR_BOUND
from clipbridge.core.meaning import Bound, EngineNote, Meaning, Order, TensorBound
from clipbridge.core.numbers import format_number, wire_number
from clipbridge.scan.graph import Const, Graph, MinMax, OneSided, ScaleBiasCandidate, scalar, scale_bias_candidate
from clipbridge.dialects.onnx.spec import OnnxSpec
from clipbridge.service.translate import Resolved


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
    if not all(scalar(c) or c.unread_scalar for c in (mm.lo, mm.hi)):
        # A tensor or run-time bound (exporters write clamp with tensor bounds this way): per-element or dynamic.
        return elementwise_resolved(mm.pattern, dt, shape, mm.lo, mm.hi, mm.max_wins, notes)
    for side, c in (("lower", mm.lo), ("upper", mm.hi)):
        if c.value is None:
            raise ClipBridgeError(f"the {side} bound of {mm.pattern} is a constant whose value was not read: "
                                  f"{c.why}")
    lo = bound_value(mm.lo, dt, "lower")
    hi = bound_value(mm.hi, dt, "upper")
    spec = onnx_spec(opset=13, elem_type=onnx_name(dt), shape=shape, min=lo, max=hi)
    parsed = Parsed(spec)
    m = resolve(parsed)
    rule = (f"{mm.pattern} with constant scalars a = {format_number(lo)}, b = {format_number(hi)}: element-wise "
            f"Min/Max of one type T, so the bounds are exact values of T; NaN propagates")
    order = Order.MAX_WINS if mm.max_wins else Order.MIN_WINS
    order_rule = "a > b gives b (the outer Min wins)" if mm.max_wins else "a > b gives a (the outer Max wins)"
    m = replace(m, version=mm.pattern, order=order, rules=(rule, order_rule), engine_notes=notes)
    return Resolved("onnx", m, normalize(parsed), shape), []


def one_sided_resolved(o: OneSided, dt: DType, shape: list | None,
                       notes: tuple[EngineNote, ...] = ()) -> tuple[Resolved | None, list[Finding]]:
    """Max(x, a) is clamp(min=a) with no upper bound (+inf stays +inf); Min(x, b) is clamp(max=b), no lower bound."""
    lo, hi = (o.bound, None) if o.is_max else (None, o.bound)
    return elementwise_resolved(o.pattern, dt, shape, lo, hi, True, notes)


def _tensor_bound(c: Const, dt: DType, side: str) -> TensorBound:
    """A constant tensor bound as exact values of the input's dtype (ONNX Min/Max: one type T for all inputs)."""
    assert c.value is not None
    if c.value.size > MAX_TENSOR_BOUND:
        raise ClipBridgeError(f"the {side} bound has {c.value.size} elements; per-element bounds are compared "
                              f"position by position, at most {MAX_TENSOR_BOUND}")
    if c.value.dtype != dt.np_dtype:
        raise ClipBridgeError(f"the {side} bound is {c.value.dtype} but the input is {dt.name}: ONNX Min/Max take "
                              "one type T for all inputs (the model is not valid)")
    return TensorBound(tuple(int(d) for d in c.value.shape), tuple(dt.to_python(v) for v in c.value.reshape(-1)))


def _fits(t: TensorBound, shape: list | None, side: str) -> None:
    if shape is None or not all(isinstance(d, int) for d in shape):
        return
    try:
        ok = tuple(np.broadcast_shapes(t.shape, tuple(shape))) == tuple(shape)
    except ValueError:
        ok = False
    if not ok:
        raise ClipBridgeError(f"the {side} bound has shape {list(t.shape)}, which does not broadcast to the input's "
                              f"shape {shape}")


def elementwise_resolved(pattern: str, dt: DType, shape: list | None, lo: Const | None, hi: Const | None,
                         max_wins: bool, notes: tuple[EngineNote, ...]) -> tuple[Resolved | None, list[Finding]]:
    """A clip written as element-wise Max/Min: each side open (None), computed at run time, a constant scalar
    or a constant tensor (a per-element bound, broadcast to the input by NumPy's rules)."""
    findings: list[Finding] = []
    dynamic: list[str] = []
    scalars: dict[str, Bound | None] = {}
    tensors: dict[str, TensorBound | None] = {}
    words = {"min": "lower", "max": "upper"}
    for side, c in (("min", lo), ("max", hi)):
        scalars[side], tensors[side] = None, None
        if c is None:
            scalars[side] = replace(open_bound(dt, side), steps=(f"{pattern} has no {words[side]} bound",))
        elif c.value is None:
            if c.unread_scalar or c.unread:
                raise ClipBridgeError(f"the {words[side]} bound of {pattern} is a constant whose value was not "
                                      f"read: {c.why}")
            dynamic.append(side)
            findings.append(dynamic_finding(side, c.why))
        elif scalar(c):
            v = bound_value(c, dt, words[side])
            scalars[side] = Bound(v, v)
        else:
            tensors[side] = _tensor_bound(c, dt, words[side])
            _fits(tensors[side], shape, words[side])  # type: ignore[arg-type]
    rules = [f"{pattern}: element-wise {'Max then Min' if max_wins else 'Min then Max'} with constants of T, so "
             "the bounds are exact values of T; NaN propagates"]
    if any(tensors.values()):
        rules.append("a tensor bound clips each position to its own element (broadcast to the input)")
    if lo is not None and hi is not None:
        rules.append("a > b gives b (the outer Min wins)" if max_wins else "a > b gives a (the outer Max wins)")
    m = Meaning("onnx", pattern, dt, scalars["min"], scalars["max"],
                order=Order.MAX_WINS if max_wins else Order.MIN_WINS, dynamic=bool(dynamic),
                rules=tuple(rules), engine_notes=notes, lower_tensor=tensors["min"], upper_tensor=tensors["max"])
    spec: dict = {"dialect": "onnx", "pattern": pattern, "elem_type": onnx_name(dt), "shape": shape}
    for side in ("min", "max"):
        t, b = tensors[side], scalars[side]
        spec[side] = (np.asarray([wire_number(v) for v in t.values], dtype=object).reshape(t.shape).tolist()
                      if t is not None else None if b is None or b.default else wire_number(b.value))
    return Resolved("onnx", m, spec, shape), findings


_FUSED, _ONE = behaviour.row("openvino-clamp-fusion"), behaviour.row("openvino-max-nan-to-constant")
NOTE_MINMAX_NAN_OPENVINO = EngineNote("openvino CPU plugin", f"A NaN input of a Minimum/Maximum pair: "
                                      f"{_FUSED.gives['openvino']}, where the formula propagates NaN "
                                      f"({_FUSED.source}; behaviour row {_FUSED.id})")


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

# tests/scan/test_ir_scan.py shows it as a strict xfail on the IR's own Maximum/Minimum.
NOTE_ONE_SIDED_NAN_OPENVINO = EngineNote("openvino CPU plugin", "A NaN input of a one-sided Maximum/Minimum against "
                                         f"a constant c gives {_ONE.gives['openvino']}, where the formula propagates "
                                         f"NaN ({_ONE.source}; behaviour rows {_ONE.id}, "
                                         "openvino-min-nan-to-constant)")
