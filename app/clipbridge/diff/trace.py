"""Precision trace: where does float16 first overflow, and what produced it?

`clipbridge trace MODEL --engine onnxruntime` (here and on the API the engines `onnxruntime` and `onnxruntime@f16`;
or `openvino@f16`, `onnx-reference@f16`) runs the model as it is on the first engine and a float16 copy of it
(every float32 initializer, input, output and Cast target made float16, as a float16 export is) on the engine
named before `@f16`, captures every node output of both,
and walks them in order:
- the first tensor where a value finite in float32 is +-inf in float16: `float16-overflow` at the op that
  produced it (a MatMul, Add, Conv, Pow: any op), with the float32 value against 65504;
- the first NaN that float32 does not have: `inf-minus-inf` (Add/Sub of opposite infinities),
  `inf-times-zero` (Mul/Div/MatMul of an infinity with 0, or inf / inf: the RMSNorm pattern x / sqrt(mean(x^2)));
- the first tensor where a nonzero float32 value becomes 0: `underflow-to-zero` (below 2^-24);
- the largest finite magnitude the float32 run holds, against float16's 65504.
The float16 copy is built in a child (it parses the model); the walk runs on captured numbers.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from clipbridge.core.errors import ClipBridgeError
from clipbridge.core.numbers import wire_number
from clipbridge.diff import child, compare, engines, run, sides

SUFFIX = "@f16"
F16_MAX = 65504.0
F16_TINY = 2.0 ** -24  # the smallest float16 subnormal
F32, F16 = onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16


def is_trace(engine_names: tuple[str, ...]) -> bool:
    return any(e.endswith(SUFFIX) for e in engine_names)


def split(engine_names: tuple[str, ...], prefix: str = "") -> tuple[str, str]:
    """(the float32 engine, the engine that runs the float16 copy), checked."""
    narrow = [e for e in engine_names if e.endswith(SUFFIX)]
    wide = [e for e in engine_names if not e.endswith(SUFFIX)]
    if len(narrow) != 1 or len(engine_names) != 2:
        raise ClipBridgeError("a precision trace takes two engines: one as it is and one with @f16, e.g. "
                              "--engine onnxruntime --engine onnxruntime@f16", f"{prefix}engine")
    base = narrow[0][: -len(SUFFIX)]
    ref = wide[0] if wide else base
    for e in (base, ref):
        if e not in run.ENGINE_NAMES:
            raise ClipBridgeError(f"unknown engine {e[:40]!r}; choose from {', '.join(run.ENGINE_NAMES)} (add @f16 "
                                  "to one of them)", f"{prefix}engine")
    return ref, base


def _retype(vi: onnx.ValueInfoProto) -> None:
    if vi.type.HasField("tensor_type") and vi.type.tensor_type.elem_type == F32:
        vi.type.tensor_type.elem_type = F16


@child.model_errors
def float16_copy(model_bytes: bytes, keep_f32: list[str] | None = None) -> bytes:
    """The model with float32 made float16 everywhere (initializers, Constant values, graph inputs/outputs,
    value_info, Cast targets); the nodes named in `keep_f32` run in float32 between Cast pairs (the fix)."""
    m = onnx.load_from_string(model_bytes)
    g = m.graph
    for t in g.initializer:
        if t.data_type == F32:
            t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float16), t.name))
    for vi in [*g.input, *g.output, *g.value_info]:
        _retype(vi)
    for n in g.node:
        for a in n.attribute:
            if n.op_type == "Constant" and a.name == "value" and a.t.data_type == F32:
                a.t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(a.t).astype(np.float16), a.t.name))
            if n.op_type in ("Cast", "CastLike") and a.name == "to" and a.i == F32:
                a.i = F16
    if keep_f32:
        _islands(g, set(keep_f32))
    return m.SerializeToString()


def _islands(g: onnx.GraphProto, keep: set[str]) -> None:
    """Run the `keep` nodes in float32: Cast each float16 input they read from outside to float32, and each
    output read outside (or a graph output) back to float16. Initializers they read are made float32 again."""
    inside = {o for n in g.node if (n.name or n.output[0]) in keep for o in n.output}
    inits = {t.name: t for t in g.initializer}
    outs = {o.name for o in g.output}
    readers = {i for n in g.node if (n.name or n.output[0]) not in keep for i in n.input} | outs
    nodes: list[onnx.NodeProto] = []
    for n in g.node:
        name = n.name or n.output[0]
        if name not in keep:
            nodes.append(n)
            continue
        for k, i in enumerate(n.input):
            if not i or i in inside:
                continue
            if i in inits and inits[i].data_type == F16:
                t32 = numpy_helper.from_array(numpy_helper.to_array(inits[i]).astype(np.float32), f"{i}_f32_clipbridge")
                g.initializer.append(t32)
                n.input[k] = t32.name
            else:
                cast = f"{i}_f32_clipbridge"
                if cast not in {o for c in nodes for o in c.output}:
                    nodes.append(helper.make_node("Cast", [i], [cast], name=f"{name}_in_f32_clipbridge_{k}", to=F32))
                n.input[k] = cast
        nodes.append(n)
        for k, o in enumerate(n.output):
            if o in readers:
                wide = f"{o}_f32_clipbridge"
                n.output[k] = wide
                inside.add(wide)
                nodes.append(helper.make_node("Cast", [wide], [o], name=f"{name}_out_f16_clipbridge_{k}", to=F16))
                for c in g.node:
                    if (c.name or c.output[0]) in keep:
                        c.input[:] = [wide if x == o else x for x in c.input]
    del g.node[:]
    g.node.extend(nodes)
    del g.value_info[:]  # the island's tensors are float32 now: inference types them again


def narrow_feeds(feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    with np.errstate(over="ignore"):
        return {k: v.astype(np.float16) if v.dtype == np.float32 else v for k, v in feeds.items()}


def _first(order: list[tuple[Any, str]], test) -> tuple[Any, str, int] | None:
    for node, t in order:
        hit = test(t)
        if hit is not None:
            return node, t, hit
    return None


def _nan_cause(op: str, ins: list[np.ndarray], flat: int, shape: tuple) -> str:
    """Why an op gave NaN from non-NaN float16 inputs: opposite infinities summed, or an infinity times 0 / over
    an infinity (element-wise at the witness where the shapes allow, else from what the inputs hold)."""
    vals = []
    for a in ins:
        b = np.broadcast_to(a, shape).reshape(-1)[flat] if a.size and np.broadcast_shapes(a.shape, shape) == shape \
            else None
        vals.append(b)
    if op in ("Add", "Sub", "Sum", "ReduceSum", "ReduceMean", "MatMul", "Gemm", "Conv"):
        if op in ("Add", "Sub") and all(v is not None for v in vals) and all(np.isinf(v) for v in vals):
            return "inf-minus-inf"
        if op in ("MatMul", "Gemm", "Conv") and any(np.isinf(a).any() for a in ins):
            return "inf-times-zero" if any((a == 0).any() for a in ins) else "inf-minus-inf"
        return "inf-minus-inf"
    if op in ("Mul", "Div", "Pow"):
        return "inf-times-zero"
    return "inf-minus-inf" if any(np.isinf(a).any() for a in ins) else "float16-overflow"


def capture(execute: Any, model: bytes, npz: bytes | None, ref: str, base: str, precision: str,
            written: bytes | None = None) -> tuple[child.Plan, dict[str, np.ndarray], dict, dict[str, np.ndarray], dict]:
    """Every node output of two sides (clipbridge.diff.sides): the model on `ref` as it is, and its float16 copy
    on `base` (or `written`, a float16 model the fix wrote, run as it is), each marked with the plan's tensors."""
    plan = execute("diff:prepare", child.prepare, model, npz, 20240, "edge")  # its generated values as before
    marks = run.marks(plan)
    wide = sides.run(execute, sides.Side(model, ref, precision), plan.feeds, marks)
    narrow_model = written if written is not None else execute("diff:prepare", float16_copy, model)
    narrow = sides.run(execute, sides.Side(narrow_model, base, precision), narrow_feeds(plan.feeds), marks)
    return plan, wide["values"], wide, narrow["values"], narrow


def _num(v: Any) -> Any:
    x = np.asarray(v).reshape(()).item()
    return wire_number(float(x)) if isinstance(x, float) else wire_number(x)


def _index(shape: tuple[int, ...], flat: int) -> list[int]:
    return [int(i) for i in np.unravel_index(flat, shape)] if shape else []


def _row(node: Any, t: str, flat: int, a: np.ndarray, b: np.ndarray, cause: str, names: tuple[str, str],
         detail: str, count: int) -> dict[str, Any]:
    return {"node": node.name, "op": node.op, "pattern": None, "differing": count, "total": int(a.size),
            "origin": "introduced", "cause": cause, "detail": detail,
            "witness": {"index": _index(a.shape, flat), "input": None,
                        "outputs": {names[0]: _num(a.reshape(-1)[flat]), names[1]: _num(b.reshape(-1)[flat])}}}


def walk(plan: child.Plan, a: dict[str, np.ndarray], b: dict[str, np.ndarray], names: tuple[str, str]) -> dict:
    """The first overflow, NaN and underflow, the largest finite float32 magnitude, and a row for each."""
    order = [(n, o) for n in plan.nodes for o in n.outputs if o in a and o in b and a[o].dtype.kind == "f"]
    f64 = {t: b[t].astype(np.float64) for _, t in order}
    with np.errstate(invalid="ignore", over="ignore"):
        over = _first(order, lambda t: _hit(np.isfinite(a[t]) & np.isinf(f64[t])))
        nan = _first(order, lambda t: _hit(~np.isnan(a[t]) & np.isnan(f64[t])))
        under = _first(order, lambda t: _hit((a[t] != 0) & (np.abs(a[t]) < F16_TINY) & (f64[t] == 0)))
    big = max(((float(np.abs(a[t][np.isfinite(a[t])]).max(initial=0.0)), n, t) for n, t in order),
              default=(0.0, None, None), key=lambda x: x[0])
    rows, found = [], {}
    if over:
        n, t, flat = over
        cnt = int((np.isfinite(a[t]) & np.isinf(f64[t])).sum())
        rows.append(_row(n, t, flat, a[t], b[t], "float16-overflow", names,
                         f"{n.op} gives {float(a[t].reshape(-1)[flat])!r} in float32, beyond float16's 65504", cnt))
        found["first_overflow"] = {"node": n.name, "op": n.op, "tensor": t, **rows[-1]["witness"]}
    if nan:
        n, t, flat = nan
        ins = [b[i] for i in n.inputs if i in b]
        cause = _nan_cause(n.op, ins, flat, b[t].shape)
        cnt = int((~np.isnan(a[t]) & np.isnan(f64[t])).sum())
        rows.append(_row(n, t, flat, a[t], b[t], cause, names, f"{n.op} makes NaN from inputs that hold "
                         f"{'an infinity' if any(np.isinf(x.astype(np.float64)).any() for x in ins) else 'no NaN'}",
                         cnt))
        found["first_nan"] = {"node": n.name, "op": n.op, "tensor": t, "cause": cause, **rows[-1]["witness"]}
    if under:
        n, t, flat = under
        rows.append(_row(n, t, flat, a[t], b[t], "underflow-to-zero", names,
                         f"{n.op} gives {float(a[t].reshape(-1)[flat])!r} in float32, below float16's smallest "
                         "subnormal (2^-24)", int(((a[t] != 0) & (np.abs(a[t]) < F16_TINY) & (f64[t] == 0)).sum())))
        found["first_underflow"] = {"node": n.name, "op": n.op, "tensor": t, **rows[-1]["witness"]}
    found["largest_finite"] = {"value": big[0], "node": big[1].name if big[1] else None, "tensor": big[2],
                               "limit": F16_MAX, "beyond": big[0] > F16_MAX}
    order_of = {n.name: k for k, n in enumerate(plan.nodes)}
    rows.sort(key=lambda r: order_of.get(r["node"], 0))
    return {"rows": rows, "trace": found}


def _hit(mask: np.ndarray) -> int | None:
    idx = np.flatnonzero(mask.reshape(-1))
    return int(idx[0]) if idx.size else None


def diff(execute: Any, model: bytes, npz: bytes | None, opts: Any, written: bytes | None = None) -> tuple[dict, Any]:
    """The diff body of a precision trace (method `precision-trace`), and its runs."""
    ref, base = split(tuple(opts.engines))
    run.Options(("onnxruntime", "onnx-reference"), opts.precision, opts.rtol, opts.atol).check()  # the rest
    narrow_name = f"{base}{SUFFIX}"
    plan, a, wide, b, narrow = capture(execute, model, npz, ref, base, opts.precision, written)
    w = walk(plan, a, b, (ref, narrow_name))
    rtol, atol = compare.tolerance("float16", opts.rtol, opts.atol)
    outputs = []
    for name in plan.outputs:
        m = compare.differing(a[name], b[name], rtol, atol)
        outputs.append({"name": name, "differing": int(m.sum()), "total": int(a[name].size)})
    rows = w["rows"]
    first = {"node": rows[0]["node"], "op": rows[0]["op"]} if rows else None
    verdict = "equal" if not rows and not any(o["differing"] for o in outputs) else \
        ("explained" if rows else "unexplained")
    body = {"verdict": verdict,
            "engines": [{"name": ref, "version": wide["version"], "precision": wide["precision"], "observer_effect": [],
                         "settings": wide.get("settings", {})},
                        {"name": narrow_name, "version": narrow["version"], "precision": "f16", "observer_effect": [],
                         "settings": {**narrow.get("settings", {}), "model": "the fix's float16 model" if written
                                      else "a float16 copy of the model (app/clipbridge/diff/trace.py)"}}],
            "inputs": {"source": "given" if plan.given else "generated", "seed": None if plan.given else 20240,
                       "tensors": [{"name": k, "dtype": v.dtype.name, "shape": list(v.shape)}
                                   for k, v in plan.feeds.items()]},
            "method": "precision-trace",
            "tolerance": {"rtol": opts.rtol, "atol": opts.atol, "defaults": "float16's (docs/diff.md)"},
            "outputs": outputs, "first_divergence": first, "nodes": rows, "subgraphs": [], "patterns": {},
            "trace": w["trace"]}
    return body, run.Runs(plan, {ref: a, narrow_name: b}, {ref: wide, narrow_name: narrow}, method="precision-trace")
