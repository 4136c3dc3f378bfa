"""Each converted stage read as a graph (its clip-like ops, statically) and run on its engine with those ops'
outputs captured, in a sandbox worker. Functions are module-level; they take and return plain data."""

from __future__ import annotations

import ast
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper

from clipbridge.chain import litert_graph
from clipbridge.diff import engines as diff_engines
from clipbridge.engines import config as engine_config

ONNX_CLIPS = ("Clip", "Max", "Min", "Relu", "HardSwish", "HardSigmoid", "LeakyRelu")
OV_CLIPS = ("Clamp", "Maximum", "Minimum", "Relu", "HSwish", "HSigmoid", "HardSigmoid", "Swish")


def _scalar(a: np.ndarray | None) -> float | None:
    return float(a.reshape(-1)[0]) if a is not None and a.size == 1 and a.dtype.kind in "fiu" else None


def onnx_graph(model: bytes) -> dict[str, Any]:
    """Every clip-like ONNX node: op, constant operands by position, its data input, and the torch node the
    dynamo exporter names in `pkg.torch.onnx.name_scopes` metadata (the pairing key)."""
    m = onnx.load_from_string(model)
    consts = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    for n in m.graph.node:
        if n.op_type == "Constant" and n.attribute and n.attribute[0].name == "value":
            consts[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
    ops = []
    for n in m.graph.node:
        if n.op_type not in ONNX_CLIPS:
            continue
        meta = {p.key: p.value for p in n.metadata_props}
        try:
            scopes = ast.literal_eval(meta.get("pkg.torch.onnx.name_scopes", "[]"))
        except (ValueError, SyntaxError):
            scopes = []
        data = [i for i in n.input if i and i not in consts]
        ops.append({"name": n.name, "type": n.op_type, "tensor": n.output[0], "input": data[0] if data else "",
                    "operands": [("const", _scalar(consts[i])) if i in consts else ("omitted", None) if not i
                                 else ("tensor", None) for i in n.input],
                    "attrs": {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute
                              if a.type == onnx.AttributeProto.FLOAT},
                    "key": scopes[-1] if scopes else None, "how": "onnx metadata pkg.torch.onnx.name_scopes",
                    "names": [n.output[0]]})
    inputs = [i.name for i in m.graph.input if i.name not in consts]
    return {"ops": ops, "inputs": inputs, "outputs": [o.name for o in m.graph.output]}


def run_onnx(model: bytes, feeds: list[np.ndarray], capture: list[str]) -> dict[str, Any]:
    """onnxruntime through diff's engine run, pinned to the model's precision, `capture` marked as outputs."""
    g = onnx.load_from_string(model).graph
    inits = {t.name for t in g.initializer}
    names = [i.name for i in g.input if i.name not in inits]
    r = diff_engines.run("onnxruntime", model, dict(zip(names, feeds)), capture, "model")
    return {"outputs": [r["values"][o.name] for o in g.output], "values": r["values"], "version": r["version"],
            "precision": r["precision"]}


def _ov_model(xml: bytes, weights: bytes) -> Any:
    import openvino as ov
    return ov.Core().read_model(xml, ov.Tensor(np.frombuffer(weights, np.uint8).copy()) if weights else None)


def _ov_operand(src: Any) -> tuple[str, float | None]:
    node = src.get_node()
    if node.get_type_name() == "Constant":
        return "const", _scalar(node.get_data())
    return "tensor", None


def _ov_consumer_key(op: Any, seen: int = 0) -> Any:
    """An op the frontend added with no tensor name of its own (the Maximum of a lowered Clip) is paired with
    the named clip-like op it feeds."""
    for target in op.output(0).get_target_inputs():
        nxt = target.get_node()
        if nxt.get_type_name() in OV_CLIPS and seen < 3:
            return nxt if nxt.output(0).get_names() else _ov_consumer_key(nxt, seen + 1)
    return None


def ov_graph(xml: bytes, weights: bytes) -> dict[str, Any]:
    """Every clip-like OpenVINO op: type, operands in the order the frontend wrote them (which decides NaN on
    x86: MAXPS returns the second operand), Clamp's bounds, and its tensor names (the pairing key)."""
    model = _ov_model(xml, weights)
    ops = []
    for op in model.get_ordered_ops():
        t = op.get_type_name()
        if t not in OV_CLIPS:
            continue
        names = sorted(op.output(0).get_names())
        owner = op if names else _ov_consumer_key(op)
        owner_names = sorted(owner.output(0).get_names()) if owner is not None else []
        attrs = {k: float(v) for k, v in op.get_attributes().items() if isinstance(v, (int, float))}
        data = [i.get_source_output() for i in op.inputs() if _ov_operand(i.get_source_output())[0] == "tensor"]
        src = data[0].get_node() if data else None
        ops.append({"name": op.get_friendly_name(), "type": t, "tensor": op.get_friendly_name(),
                    "input": src.get_friendly_name() if src is not None else "",
                    "input_names": sorted(data[0].get_names()) if data else [],
                    "parameter": src is not None and src.get_type_name() == "Parameter",
                    "operands": [_ov_operand(i.get_source_output()) for i in op.inputs()], "attrs": attrs,
                    "names": owner_names or names, "group": owner.get_friendly_name() if owner is not None else "",
                    "how": "OpenVINO tensor names" if names else "OpenVINO tensor names of the op it feeds"})
    return {"ops": ops, "inputs": [p.get_any_name() for p in model.inputs], "outputs": len(model.outputs)}


def run_openvino(xml: bytes, weights: bytes, feeds: list[np.ndarray], capture: list[str]) -> dict[str, Any]:
    """The IR compiled pinned to the model's precision (app/clipbridge/engines/config.py, as diff does), with the outputs
    of the ops named `capture` (friendly names) added as outputs."""
    import openvino as ov
    model = _ov_model(xml, weights)
    n_out = len(model.outputs)
    by_name = {op.get_friendly_name(): op for op in model.get_ordered_ops()}
    params = {p.get_friendly_name(): k for k, p in enumerate(model.get_parameters())}
    extra = [c for c in dict.fromkeys(capture) if c in by_name and c not in params]
    added = model.add_outputs([by_name[c].output(0) for c in extra]) if extra else []
    compiled, effective = engine_config.openvino_compile(model, "model")
    result = compiled(list(feeds))
    outs = [np.asarray(result[compiled.outputs[k]]) for k in range(n_out)]
    values = {c: np.asarray(result[compiled.output(next(iter(port.get_names())))]) for c, port in zip(extra, added)}
    values.update({name: feeds[k] for name, k in params.items() if k < len(feeds)})  # a graph input is the feed
    return {"outputs": outs, "values": values, "version": ov.get_version(), "precision": effective}


def _interpreter(data: bytes, builtin: bool) -> Any:
    from ai_edge_litert import interpreter as lite
    resolver = lite.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES if builtin else lite.OpResolverType.AUTO
    it = lite.Interpreter(model_content=data, experimental_op_resolver_type=resolver,
                          experimental_preserve_all_tensors=True)
    it.allocate_tensors()
    return it


def tflite_graph(data: bytes) -> dict[str, Any]:
    """Every LiteRT op (builtin op name), its constant operands, its fused activation and its tensor names (the
    key), and the graph's output tensors in order (litert_graph.py)."""
    return litert_graph.read(_interpreter(data, builtin=True), data)


def run_tflite(data: bytes, feeds: list[np.ndarray], builtin: bool, capture: list[int]) -> dict[str, Any]:
    """The .tflite on ai-edge-litert: the default interpreter (XNNPACK delegate) or the builtin kernels only."""
    import ai_edge_litert
    it = _interpreter(data, builtin)
    for d, f in zip(it.get_input_details(), feeds):
        it.set_tensor(d["index"], f)
    it.invoke()
    outs = [it.get_tensor(d["index"]).copy() for d in it.get_output_details()]
    return {"outputs": outs, "values": {c: it.get_tensor(c).copy() for c in capture},
            "version": getattr(ai_edge_litert, "__version__", ""), "precision": "f32"}


def onnx_inputs(model: bytes) -> list[dict[str, Any]]:
    """An ONNX source's graph inputs as (name, shape, dtype); a symbolic dimension is 1, as diff generates."""
    m = onnx.load_from_string(model)
    inits = {t.name for t in m.graph.initializer}
    out = []
    for vi in m.graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else 1 for d in tt.shape.dim]
        out.append({"name": vi.name, "shape": dims,
                    "dtype": np.dtype(onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type)).name})
    return out
