"""The torch side, run in a sandbox worker (a .pt2 is untrusted bytes: `torch.export.load` unpickles parts of it):
load the ExportedProgram, run it eagerly capturing every node, list its clip-like ops, and convert it to ONNX,
OpenVINO, LiteRT and Core ML. Each function is module-level and takes and returns plain data (picklable)."""

from __future__ import annotations

import io
import os
import tempfile
from typing import Any

import numpy as np

from clipbridge.chain import converter_env, stages
from clipbridge.core.errors import ClipBridgeError

# aten targets that clamp: source ops the chain follows (docs/chain.md, "Clip-like source ops").
CLIP_TARGETS = {"hardtanh": ("lo", "hi"), "clamp": ("lo", "hi"), "clamp_min": ("lo",), "clamp_max": ("hi",),
                "relu6": (), "relu": (), "hardswish": (), "hardsigmoid": ()}
BATCH_NORMS = ("batch_norm", "_native_batch_norm_legit_no_training")  # eval mode: folded into a conv before it
FIXED = {"relu6": (0.0, 6.0), "relu": (0.0, None), "hardswish": (None, None), "hardsigmoid": (0.0, 1.0)}


class ConversionFailed(ClipBridgeError):
    """A converter raised: the hop is reported failed with this reduced message (never the raw traceback)."""

    status = 422
    title = "A converter failed"


def reduce_error(exc: BaseException) -> str:
    """The exception's type and first line, shortened: what a report may quote of a converter's failure."""
    text = " ".join(str(exc).split())[:240]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def load(pt2: bytes) -> Any:
    import torch
    try:
        return torch.export.load(io.BytesIO(pt2))
    except Exception as exc:  # not a torch.export.save archive, or one this torch cannot read
        raise ClipBridgeError(f"model is not a readable torch.export.save archive ({reduce_error(exc)})",
                              "model") from None


def _short(target: Any) -> str:
    return str(getattr(target, "__name__", target)).split(".")[0]


def _clip_row(node: Any) -> dict[str, Any] | None:
    op = _short(node.target)
    if node.op != "call_function" or op not in CLIP_TARGETS:
        return None
    args = list(node.args) + [None, None, None]
    lo, hi = FIXED.get(op, (None, None))
    if op == "hardtanh":
        lo, hi = args[1] if args[1] is not None else -1.0, args[2] if args[2] is not None else 1.0
    elif op in ("clamp", "clamp_min", "clamp_max"):
        lo = node.kwargs.get("min", args[1]) if op != "clamp_max" else None
        hi = node.kwargs.get("max", args[2] if op == "clamp" else args[1]) if op != "clamp_min" else None
    stack = list((node.meta.get("nn_module_stack") or {}).values())
    trace = (node.meta.get("stack_trace") or "").strip().splitlines()
    bounds = {k: (v if isinstance(v, (int, float)) or v is None else "tensor") for k, v in (("lo", lo), ("hi", hi))}
    return {"node": node.name, "op": op, **bounds,
            "int_literal": [k for k, v in bounds.items() if isinstance(v, int) and not isinstance(v, bool)],
            "input": getattr(args[0], "name", None), "module": stack[-1][0] if stack else "", "scope": _scope(stack),
            "stack_trace": trace[-1].strip()[:160] if trace else "", "producer": producer(args[0])}


def producer(node: Any) -> dict[str, Any] | None:
    """The op that feeds a clamp, as LiteRT's fusion needs it (chain/litert_static.py): its aten name, its users
    (a fused activation needs the only one), its scalar operand, and whether a convolution is depthwise; through a
    getitem and an eval-mode batch norm, which litert-torch folds into the convolution before it."""
    if getattr(node, "op", None) != "call_function":
        return None
    users, op = len(node.users), _short(node.target)
    if op == "getitem" and node.args and getattr(node.args[0], "op", None) == "call_function":
        node, op = node.args[0], _short(node.args[0].target)
    if op in BATCH_NORMS and getattr(node.args[0], "op", None) == "call_function":
        bn_in = node.args[0]
        node, op = (bn_in, "conv2d") if _short(bn_in.target) == "conv2d" and len(bn_in.users) == 1 else (node, op)
    scalars = [a for a in node.args[1:2] if isinstance(a, (int, float)) and not isinstance(a, bool)]
    depthwise = False
    if op == "conv2d":
        groups = node.args[6] if len(node.args) > 6 else node.kwargs.get("groups", 1)
        shape = getattr(getattr(node.args[0], "meta", {}).get("val"), "shape", None)
        depthwise = bool(shape is not None and len(shape) > 1 and groups > 1 and int(shape[1]) == groups)
    return {"op": op, "users": users, "scalar": float(scalars[0]) if scalars else None, "depthwise": depthwise}


def _scope(stack: list[Any]) -> str:
    """The module path as litert-torch names tensors: the root's type, then each module's `Type_attribute`
    (`__main__.Block/torch.nn.modules.container.Sequential_dw/torch.nn.modules.activation.Hardswish_1`); empty
    for an op of the root's own forward (a functional clamp), which no name tells apart."""
    parts = [str(t) if not p else f"{t}_{str(p).rsplit('.', 1)[-1]}" for p, t in stack]
    return "/".join(parts) if len(parts) > 1 else ""


def describe(pt2: bytes) -> dict[str, Any]:
    """The user inputs (name, shape, dtype) and the clip-like ops of the ExportedProgram, in graph order."""
    ep = load(pt2)
    user = set(ep.graph_signature.user_inputs)
    inputs = []
    for n in ep.graph.nodes:
        if n.op == "placeholder" and n.name in user:
            val = n.meta.get("val")
            if val is None or not hasattr(val, "shape"):
                raise ClipBridgeError(f"input {n.name!r} is not a tensor: the chain feeds tensors only", "model")
            inputs.append({"name": n.name, "shape": [int(d) if str(d).isdigit() else 1 for d in val.shape],
                           "dtype": str(val.dtype).replace("torch.", "")})
    clips = [r for r in map(_clip_row, ep.graph.nodes) if r is not None]
    returned = list(ep.graph_signature.user_outputs)
    for r in clips:  # the graph output positions the op's value is returned at (a converter keeps those)
        r["outputs"] = [k for k, name in enumerate(returned) if name == r["node"]]
    return {"inputs": inputs, "clips": clips}


def run_eager(pt2: bytes, feeds: list[np.ndarray], capture: list[str]) -> dict[str, Any]:
    """`ep.module()` run eagerly on the feeds (in order), capturing the outputs of the nodes named `capture`."""
    import torch
    ep = load(pt2)
    gm = ep.module()
    seen: dict[str, np.ndarray] = {}
    wanted = set(capture)

    class Capture(torch.fx.Interpreter):
        def run_node(self, n: Any) -> Any:
            out = super().run_node(n)
            if n.name in wanted and isinstance(out, torch.Tensor):
                seen[n.name] = out.detach().numpy().copy()
            return out

    with torch.no_grad():
        outs = Capture(gm).run(*[torch.from_numpy(np.ascontiguousarray(f)) for f in feeds])
    flat = outs if isinstance(outs, (list, tuple)) else [outs]
    return {"outputs": [o.detach().numpy() for o in flat], "values": seen, "version": torch.__version__.split("+")[0]}


def to_onnx(pt2: bytes) -> bytes:
    """torch.onnx.export(ep, dynamo=True): the ONNX model the exporter writes (its optimizer on, as shipped)."""
    import torch
    ep = load(pt2)
    try:
        prog = torch.onnx.export(ep, dynamo=True, verbose=False)
        return bytes(prog.model_proto.SerializeToString())
    except Exception as exc:  # the exporter's own failure: a failed hop, not a crash
        raise ConversionFailed(reduce_error(exc), "model") from None


def _saved(model: Any) -> tuple[bytes, bytes]:
    import openvino as ov
    with tempfile.TemporaryDirectory() as d:
        xml = os.path.join(d, "m.xml")
        ov.save_model(model, xml, compress_to_fp16=False)  # pinned to the model's precision, as diff is
        with open(xml, "rb") as f, open(xml[:-3] + "bin", "rb") as g:
            return f.read(), g.read()


def to_openvino(kind: str, data: bytes) -> tuple[bytes, bytes]:
    """openvino.convert_model from the ONNX bytes (`kind` "onnx") or from the ExportedProgram itself
    (`ep.module()` cannot be traced again: converter-chain-notes.md); the IR as (xml, bin)."""
    import openvino as ov
    try:
        if kind == "onnx":
            with tempfile.TemporaryDirectory() as d:
                path = os.path.join(d, "m.onnx")
                with open(path, "wb") as f:
                    f.write(data)
                return _saved(ov.convert_model(path))
        return _saved(ov.convert_model(load(data)))
    except ClipBridgeError:
        raise
    except Exception as exc:  # the frontend's failure
        raise ConversionFailed(reduce_error(exc), "model") from None


def to_tflite(pt2: bytes, shapes: list[dict[str, Any]]) -> bytes:
    """litert_torch.convert(ep.module(), zero sample inputs): the .tflite flatbuffer (float, no quantization),
    converted in the LiteRT converter's environment of its own (converter_env.py), never in this process."""
    # (describe() has read the archive already: an unreadable one never gets here)
    try:
        return converter_env.convert(pt2, [{"shape": s["shape"], "dtype": s["dtype"]} for s in shapes])
    except converter_env.ConverterError as exc:
        raise ConversionFailed(str(exc), "model") from None


def to_coreml(pt2: bytes) -> list[dict[str, Any]]:
    """coremltools.convert(ep) to an ML program, read back as its MIL ops (static: no prediction off Apple)."""
    try:
        import coremltools as ct
    except ImportError:
        raise ConversionFailed(f"coremltools is not installed: {stages.INSTALL_CHAIN}", "model") from None
    ep = load(pt2).run_decompositions({})
    try:
        mlmodel = ct.convert(ep, convert_to="mlprogram", skip_model_load=True,
                             compute_precision=ct.precision.FLOAT32)  # pinned to the model's precision
    except Exception as exc:  # e.g. AssertionError on an int clamp_min literal
        raise ConversionFailed(reduce_error(exc), "model") from None
    ops: list[dict[str, Any]] = []
    for fn in mlmodel._mil_program.functions.values():
        for op in fn.operations:
            consts = {k: _const(v) for k, v in op.inputs.items() if getattr(v, "val", None) is not None}
            ops.append({"name": op.name, "type": op.op_type, "consts": consts,
                        "inputs": [getattr(v, "name", "") for v in op.inputs.values()],
                        "outputs": [o.name for o in op.outputs]})
    return ops


def _const(v: Any) -> Any:
    val = np.asarray(v.val)
    return float(val.reshape(-1)[0]) if val.size == 1 and val.dtype.kind in "fiu" else None
