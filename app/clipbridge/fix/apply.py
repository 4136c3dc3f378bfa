"""Write the fixed model: find the clip-like nodes of the main graph, apply clipbridge.fix.rules, check the result.

`write_fixed` parses, infers shapes and runs onnx.checker on uploaded bytes (native code), so callers run it
in a sandboxed child (clipbridge.fix.service). It keeps every node name, the opset and the IR version; the only
exception is a model below opset 9 that needs IsNaN/Where, which is converted to opset 9 and says so.
"""

from __future__ import annotations

import numpy as np
import onnx

from clipbridge.core.errors import ArtifactError
from clipbridge.core.ondisk import folder_of
from clipbridge.diff.child import stubs_as_inputs
from clipbridge.scan.constant_reader import Constants, graph_constants, numeric
from clipbridge.fix.facts import Node
from clipbridge.fix import scopes
from clipbridge.fix.rules import Site

GUARD_OPSET = 9  # IsNaN-9 and Where-9
ROW_OPSET = 13  # Softmax-13 reads one axis (older ones coerce to 2-D, whose rows need the rank); ReduceSum-13 axes
FLOATS = {onnx.TensorProto.FLOAT: np.dtype(np.float32), onnx.TensorProto.FLOAT16: np.dtype(np.float16)}
FLT_MAX = float(np.finfo(np.float32).max)


def opset_of(model: onnx.ModelProto) -> int:
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 1)


def _constants(g: onnx.GraphProto) -> Constants:
    """Every constant of the main graph, whatever its size, through the one checked reader (a tensor whose data
    lives in a file is never decoded; one that cannot be read is a 400 naming it, when a clip uses it)."""
    return graph_constants(g, limit=None)


def _types(model: onnx.ModelProto) -> dict[str, int]:
    inferred = onnx.shape_inference.infer_shapes(model)
    g = inferred.graph
    out = {t.name: t.data_type for t in g.initializer}
    for vi in [*g.input, *g.value_info, *g.output]:
        if vi.type.HasField("tensor_type"):
            out[vi.name] = vi.type.tensor_type.elem_type
    return out


def _scalar(consts: Constants, name: str) -> float | None | bool:
    """The value of a constant scalar bound; None when omitted; False when it is computed at run time."""
    if not name:
        return None
    v = numeric(consts, name, "bound of a Clip")
    if v is None or v.size != 1:
        return False
    return float(v.reshape(()))


def _clip(p: onnx.NodeProto, dt: np.dtype, consts: Constants, opset: int) -> Node:
    if opset < 11:  # Clip-6: float attributes, defaults +-FLT_MAX, read as values of T
        attrs = {a.name: a.f for a in p.attribute}
        lo, hi = (float(dt.type(attrs.get(k, d))) for k, d in (("min", -FLT_MAX), ("max", FLT_MAX)))
        return Node("clip6", dt, lo, hi)
    ins = list(p.input) + ["", ""]
    lo, hi = _scalar(consts, ins[1]), _scalar(consts, ins[2])
    dynamic = lo is False or hi is False
    return Node("clip", dt, None if lo is False else lo, None if hi is False else hi, dynamic=dynamic)


def _node(p: onnx.NodeProto, dt: np.dtype, consts: Constants, opset: int) -> tuple[str, Node] | None:
    """(data input, Node) for a clip-like node, a Softmax/LogSoftmax-13+ or a MaxPool; None for any other."""
    op = p.op_type
    if op == "Clip":
        return p.input[0], _clip(p, dt, consts, opset)
    if op == "Relu":
        return p.input[0], Node("relu", dt)
    if op == "HardSigmoid":
        alpha = next((a.f for a in p.attribute if a.name == "alpha"), 0.2)
        return p.input[0], Node("hardsigmoid", dt, alpha=alpha)
    if op == "MaxPool" and len(p.output) == 1:  # with Indices, the pool's second output is left alone
        return p.input[0], Node("maxpool", dt)
    if op in ("Softmax", "LogSoftmax") and opset >= ROW_OPSET:
        axis = next((a.i for a in p.attribute if a.name == "axis"), -1)
        return p.input[0], Node(op.lower(), dt, axis=axis)
    if op in ("Max", "Min") and len(p.input) == 2:
        known = [i in consts or i in consts.bad for i in p.input]
        if known.count(True) == 1:
            c = numeric(consts, p.input[known.index(True)], f"constant operand of {op}").astype(dt)
            x = p.input[known.index(False)]
            return x, Node(op.lower(), dt, const=c, x_first=not known[0])
    return None


def find_sites(model: onnx.ModelProto) -> tuple[list[Site], list[dict]]:
    """The clip-like nodes of the main graph, and the ones skipped with why (scopes.sites_in at its root)."""
    return scopes.sites_in(model.graph, _constants(model.graph), _types(model), opset_of(model), "", FLOATS, _node)


def _names(g: onnx.GraphProto) -> set[str]:
    names = {t.name for t in g.initializer} | {v.name for v in [*g.input, *g.output, *g.value_info]}
    for n in g.node:
        names.update(n.input)
        names.update(n.output)
        names.add(n.name)
    return names


def _rewrite(model: onnx.ModelProto, reference: str, target: str,
             allowed: dict[str, list[str]] | None = None) -> tuple[scopes.Rewritten, list[dict]]:
    """The rules over every graph, bodies included (clipbridge.fix.scopes), where their causes were found (`allowed`)."""
    return scopes.rewrite(model, reference, target, opset_of(model), FLOATS, _constants, _node, allowed)


def _check(model: onnx.ModelProto, on_disk: bool) -> None:
    """onnx.checker in full. An OnDisk model's weights stay in its folder, where the checker (which looks in the
    working directory) would not find them: its stubs are checked as graph inputs of their type and dims
    (clipbridge.diff.child.stubs_as_inputs); the engines read the weights themselves."""
    onnx.checker.check_model(stubs_as_inputs(model) if on_disk else model, full_check=True)


def write_fixed(model_bytes: bytes, reference: str, target: str, allowed: dict[str, list[str]] | None = None) -> dict:
    """The fixed model's bytes with rules_applied, skipped and what happened to the opset (run in a child)."""
    model = onnx.load_from_string(model_bytes)
    before = (opset_of(model), model.ir_version)
    trial = onnx.ModelProto()
    trial.CopyFrom(model)
    e, skipped = _rewrite(trial, reference, target, allowed)
    opset_note = None
    if e.after and before[0] < GUARD_OPSET:  # IsNaN/Where need opset 9: convert, then rewrite again
        model = onnx.version_converter.convert_version(model, GUARD_OPSET)
        opset_note = f"opset {before[0]} -> {GUARD_OPSET}: the NaN rules need IsNaN-9 and Where-9"
        e, skipped = _rewrite(model, reference, target, allowed)
    else:
        model = trial
    _check(model, folder_of(model_bytes) is not None)
    return {"model": model.SerializeToString(), "rules_applied": e.applied, "skipped": skipped,
            "opset": opset_of(model), "ir_version": model.ir_version, "opset_before": before[0],
            "ir_version_before": before[1], "opset_note": opset_note}


def _input_specs(model: onnx.ModelProto) -> list[dict]:
    inits = {t.name for t in model.graph.initializer}
    out = []
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        if not vi.type.HasField("tensor_type") or tt.elem_type == 0:
            raise ArtifactError(f"graph input {vi.name[:60]!r} has no tensor type", "model")
        dims = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type)
        out.append({"name": vi.name, "shape": dims, "dtype": np.dtype(dtype).name})
    return out


def write_checked(model_bytes: bytes, reference: str, target: str, allowed: dict[str, list[str]] | None = None) -> dict:
    """write_fixed plus what the caller needs without parsing the upload itself (run in a child): the graph
    inputs, whether the model is float32, and whether
    every original node name is still there."""
    try:
        original = onnx.load_from_string(model_bytes)
        _check(original, folder_of(model_bytes) is not None)
    except Exception as exc:  # protobuf, checker and shape-inference errors: the upload is what is wrong
        raise ArtifactError(f"the model fails onnx.checker: {' '.join(str(exc).split())[:300]}", "model") from None
    out = write_fixed(model_bytes, reference, target, allowed)
    written = onnx.load_from_string(out["model"])
    out["inputs"] = _input_specs(original)
    out["float32"] = any(s["dtype"] == "float32" for s in out["inputs"]) or any(
        t.data_type == onnx.TensorProto.FLOAT for t in original.graph.initializer)
    out["names_kept"] = {n.name for n in original.graph.node} <= {n.name for n in written.graph.node}
    return out
