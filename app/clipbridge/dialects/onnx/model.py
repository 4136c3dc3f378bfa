"""ONNX models: the one-node model a Clip spec builds, and a model read back into the compact spec (bounds from
constants only; a bound computed at run time is recorded as dynamic)."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from pydantic import ValidationError

from clipbridge.core import exact
from clipbridge.core.errors import ArtifactError, SpecError
from clipbridge.core.meaning import ScaleBias
from clipbridge.core.numbers import Number
from clipbridge.dialects.onnx.dtypes import BY_ONNX_NAME, elem_type, from_elem_type, onnx_name
from clipbridge.dialects.onnx.spec import NAME, OnnxSpec
from clipbridge.dialects.onnx.tensor import check_strings, constant_attribute, tensor_values
from clipbridge.dialects.onnx.versions import schema_for_opset
from clipbridge.engines.native import infer_shapes


@dataclass(frozen=True)
class Parsed:
    """A compact ONNX spec, plus which bounds a model computes at run time."""

    spec: OnnxSpec
    dynamic: tuple[str, ...] = ()
    node_name: str = ""


def ir_version_for(opset: int) -> int:
    """The lowest IR version that carries `opset` (onnx's own table; IR 3 for the opsets it skips, 2 to 4)."""
    try:
        return max(3, helper.find_min_ir_version_for([helper.make_opsetid("", opset)]))
    except ValueError:
        if opset < 7:
            return 3
        raise


def build_model(spec: OnnxSpec, scale_bias: ScaleBias | None = None) -> onnx.ModelProto:
    """A one-node model (plus Cast/Mul/Add for ScaleBias) that passes onnx.checker's full check."""
    assert spec.opset is not None and spec.elem_type is not None
    schema = schema_for_opset(spec.opset)
    dt = BY_ONNX_NAME[spec.elem_type]
    elem = elem_type(dt)
    dims = [d if d is not None else None for d in (spec.shape if spec.shape is not None else ["N"])]
    x = helper.make_tensor_value_info("input", elem, dims)
    y = helper.make_tensor_value_info("output", elem, dims)
    nodes, inits = [], []
    clip_in = "input"
    if scale_bias is not None and spec.opset >= 7:
        f = TensorProto.FLOAT
        # Constant nodes, not initializers: IR 3 (opsets 7-8) would need initializers listed as inputs.
        nodes += [helper.make_node("Constant", [], ["scale"], name="scale_const",
                                   value=numpy_helper.from_array(np.array(scale_bias.scale, np.float32))),
                  helper.make_node("Constant", [], ["bias"], name="bias_const",
                                   value=numpy_helper.from_array(np.array(scale_bias.bias, np.float32))),
                  helper.make_node("Cast", ["input"], ["x_f32"], to=f, name="scale_bias_cast_in"),
                  helper.make_node("Mul", ["x_f32", "scale"], ["x_scaled"], name="scale_bias_mul"),
                  helper.make_node("Add", ["x_scaled", "bias"], ["x_biased"], name="scale_bias_add"),
                  helper.make_node("Cast", ["x_biased"], ["clip_input"], to=elem, name="scale_bias_cast_out")]
        clip_in = "clip_input"
    attrs = {}
    inputs = [clip_in]
    if schema.attributes:
        if spec.min is not None:
            attrs["min"] = exact.to_float32(spec.min)  # a FLOAT attribute: one rounding of the exact value
        if spec.max is not None:
            attrs["max"] = exact.to_float32(spec.max)
    else:
        for side, value in (("min", spec.min), ("max", spec.max)):
            if value is None:
                inputs.append("")
                continue
            arr = dt.array([value])[0]
            inits.append(numpy_helper.from_array(np.asarray(arr, dtype=dt.np_dtype).reshape(()), side))
            inputs.append(side)
        while inputs[-1] == "":
            inputs.pop()
    nodes.append(helper.make_node("Clip", inputs, ["output"], name="clip", **attrs))
    graph = helper.make_graph(nodes, "clipbridge", [x], [y], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", spec.opset)],
                              ir_version=ir_version_for(spec.opset), producer_name="clipbridge")
    return model


# --- the model form ------------------------------------------------------------------------------------------

def decode_model(b64: str) -> onnx.ModelProto:
    """ModelProto from base64 bytes, never loading external data."""
    try:
        raw = base64.b64decode(b64, validate=True)
    except (binascii.Error, ValueError):
        raise ArtifactError("'model' is not valid base64", "model") from None
    try:
        model = onnx.ModelProto()
        model.ParseFromString(raw)
    except Exception:  # protobuf raises DecodeError and friends
        raise ArtifactError("'model' is not an ONNX ModelProto (protobuf decoding failed)", "model") from None
    if not model.HasField("graph"):
        raise ArtifactError("'model' has no graph", "model")
    check_strings(model)
    return model


def default_opset(model: onnx.ModelProto) -> int:
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx"):
            return int(imp.version)
    raise ArtifactError("the model imports no default-domain (ai.onnx) opset", "model")


def _constant_value(model: onnx.ModelProto, name: str) -> np.ndarray | None:
    """The value of `name` when it is an initializer or a Constant node's output; None when computed."""
    g = model.graph
    if model.ir_version >= 4 and any(i.name == name for i in g.input):
        return None  # an initializer listed as a graph input is only a default: the caller can override it
    for init in g.initializer:
        if init.name == name:
            if init.data_location == TensorProto.EXTERNAL:
                _refuse_external(init)
            return tensor_values(init, f"the initializer {init.name[:64]!r}")
    for node in g.node:
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx") and name in node.output:
            a = constant_attribute(node)  # a wrongly typed value attribute: 400, never a silently absent bound
            if a is None:
                return None
            if a.name == "value":
                if a.t.data_location == TensorProto.EXTERNAL:
                    _refuse_external(a.t)
                return tensor_values(a.t, f"the Constant {node.name[:64] or name[:64]!r} (value)")
            return np.array(helper.get_attribute_value(a), dtype=np.float32 if "float" in a.name else np.int64)
    return None


def _refuse_external(t: onnx.TensorProto) -> None:
    """A bound kept in an external file: never opened (its location is whatever the sender wrote, '../..' too)."""
    where = next((e.value for e in t.external_data if e.key == "location"), "")
    raise ArtifactError(f"the bound {t.name[:64]!r} keeps its data in an external file ({where[:80]!r}); external "
                        "data is never read: embed the bound in the model", "model")


def _elem_type_of(model: onnx.ModelProto, name: str) -> tuple[int | None, list | None]:
    g = model.graph
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        if vi.name == name and vi.type.HasField("tensor_type"):
            tt = vi.type.tensor_type
            shape = None
            if tt.HasField("shape"):
                # a negative dim_value (some exporters write -1 for "unknown") is read as unknown, as IR -1 is
                shape = [(d.dim_value if d.dim_value >= 0 else None) if d.HasField("dim_value") else
                         (d.dim_param or None) for d in tt.shape.dim]
            return tt.elem_type, shape
    for init in g.initializer:
        if init.name == name:
            return init.data_type, list(init.dims)
    return None, None


def parse_model(b64: str, node: str | int | None) -> Parsed:
    """Find the Clip node of a model and read it into the compact form (bounds from constants only)."""
    model = decode_model(b64)
    clips = [(i, n) for i, n in enumerate(model.graph.node) if n.op_type == "Clip" and n.domain in ("", "ai.onnx")]
    if not clips:
        raise ArtifactError("the model's main graph has no Clip node", "model")
    if node is None:
        if len(clips) > 1:
            raise SpecError(f"the model has {len(clips)} Clip nodes; name one with 'node' (name or index)", "node")
        idx, clip = clips[0]
    elif isinstance(node, int):
        if node >= len(model.graph.node) or model.graph.node[node].op_type != "Clip":
            raise SpecError(f"node index {node} is not a Clip node", "node")
        idx, clip = node, model.graph.node[node]
    else:
        found = [c for c in clips if c[1].name == node]
        if not found:
            raise SpecError(f"no Clip node named {node!r}", "node")
        idx, clip = found[0]
    opset = default_opset(model)
    if not clip.input or not clip.input[0]:
        raise ArtifactError("the Clip node has no input", "model")
    elem, shape = _elem_type_of(model, clip.input[0])
    if elem is None:
        inferred = infer_shapes(model) or model  # in a sandbox worker: C++ on an uploaded model
        elem, shape = _elem_type_of(inferred, clip.input[0])
    if not elem:
        raise ArtifactError(f"cannot infer the element type of {clip.input[0]!r}", "model")
    dt = from_elem_type(elem, "model")
    schema = schema_for_opset(opset)
    bounds: dict[str, Number | None] = {"min": None, "max": None}
    dynamic: list[str] = []
    if schema.attributes:
        for a in clip.attribute:
            if a.name in bounds:
                bounds[a.name] = float(a.f)
    else:
        for pos, side in ((1, "min"), (2, "max")):
            if len(clip.input) > pos and clip.input[pos]:
                value = _constant_value(model, clip.input[pos])
                if value is None or value.size != 1:
                    dynamic.append(side)
                else:
                    bounds[side] = dt.to_python(value.reshape(()).astype(dt.np_dtype)[()])
    try:
        spec = OnnxSpec(dialect=NAME, opset=opset, elem_type=onnx_name(dt), shape=shape,
                        min=bounds["min"], max=bounds["max"])
    except ValidationError as exc:  # the model's own values break a rule of the compact form (a shape, say)
        e = exc.errors()[0]
        raise ArtifactError(f"the Clip cannot be read: {e['loc'][0]}: {e['msg']}", "model") from None
    return Parsed(spec, tuple(dynamic), clip.name or f"#{idx}")
