"""ONNX Clip-1, -6, -11, -12, -13: parse, resolve to a Meaning, emit nodes and whole models.

The Clip schema in force is the highest `since_version` at or below the requested opset.
"""

from __future__ import annotations

import base64
import binascii
import math
from dataclasses import dataclass, replace

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from pydantic import ValidationError

from app.dialects.onnx_tensor import check_strings, constant_attribute, tensor_values
from app.dialects.kit.common import (Emitted, LazyArtifacts, Mode, TypeWords, carrier_neighbours, literal_integer_cast,
                                 pick_carrier, typed_scalar_bound)
from app.dialects.kit.spec_base import OnnxSpec, OnnxTarget, spec_json
from app.core.dtypes import (BFLOAT16, BY_ONNX, FLOAT16, FLOAT32, FLOAT64, INT8, INT16, INT32, INT64, UINT8, UINT16,
                        UINT32, UINT64, DType, from_onnx_elem_type, onnx_elem_type)
from app.core.errors import ArtifactError, SpecError
from app.engines.native import infer_shapes
from app.core.suggest import one_of
from app.core.findings import Code, Finding, Notes, Severity
from app.core.meaning import Bound, EngineNote, Meaning, NanBound, NanInput, Order, ScaleBias
from app.core import exact
from app.dialects.kit import runtime_support
from app.core.numbers import Number, format_number

DIALECT = "onnx"
FLOATS = (FLOAT16, FLOAT32, FLOAT64)
INTS = (INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64)
NEWEST_OPSET = 13  # the opset a translation targets by default: the newest Clip schema


@dataclass(frozen=True)
class ClipSchema:
    """One ONNX Clip version: where the bounds live and which element types it takes."""

    since: int
    attributes: bool  # bounds are float attributes (Clip-1, -6) rather than typed inputs (Clip-11+)
    dtypes: tuple[DType, ...]
    summary: str

    @property
    def name(self) -> str:
        return f"Clip-{self.since}"


clip_1 = ClipSchema(1, True, FLOATS, "float attributes min/max with no stated default; legacy consumed_inputs")
clip_6 = ClipSchema(6, True, FLOATS, "float attributes, defaults -3.402823e+38 / 3.402823e+38")
clip_11 = ClipSchema(11, False, FLOATS, "optional scalar inputs of type T, defaults lowest()/max()")
clip_12 = ClipSchema(12, False, FLOATS + INTS, "all numeric types")
clip_13 = ClipSchema(13, False, FLOATS + INTS + (BFLOAT16,), "adds bfloat16; min > max gives max")
CLIP_VERSIONS: tuple[ClipSchema, ...] = (clip_1, clip_6, clip_11, clip_12, clip_13)

NOTE_NAN_BOUND_ORT = (
    EngineNote("onnxruntime", "A NaN min/max input is ignored (that side is left unbounded), where the ONNX "
                              "formula Min(max, Max(input, min)) and onnx.reference give NaN everywhere."),
)
NOTE_DEFAULT_REFERENCE = (
    EngineNote("onnx.reference", "An absent bound keeps -inf/+inf inputs (np.clip with None), where the spec's "
                                 "lowest()/max() default maps them to the finite extremes (onnxruntime follows "
                                 "the spec for float and double)."),
)
NOTE_F16_DEFAULT_ORT = (
    EngineNote("onnxruntime", "float16 Clip-11+ with an absent bound leaves -inf/+inf inputs as they are (its "
                              "default is not float16's lowest()/max()), where the spec maps them to -65504/65504 "
                              "(observed with onnxruntime 1.31)."),
)
NOTE_ATTR_REFUSED_ORT = (
    EngineNote("onnxruntime", "onnxruntime refuses to load a Clip-1/Clip-6 whose min > max or whose attribute is "
                              "NaN (check min_ <= max_ fails), where Clip-11+ inputs are accepted.", refuses=True),
)


def schema_for_opset(opset: int) -> ClipSchema:
    """The Clip schema in force at `opset`: the highest since_version at or below it."""
    if opset < 1:
        raise SpecError(f"ONNX opsets start at 1. Got: {opset}", "opset")
    return [s for s in CLIP_VERSIONS if s.since <= opset][-1]


def first_schema_for(dt: DType) -> ClipSchema | None:
    return next((s for s in CLIP_VERSIONS if dt in s.dtypes), None)


def check_dtype_onnx(schema: ClipSchema, dt: DType, loc: str = "elem_type") -> None:
    """Type constraints: Clip-1..11 'T in (float16, float, double)'; Clip-12 adds ints; Clip-13 adds bfloat16."""
    if dt not in schema.dtypes:
        first = first_schema_for(dt)
        hint = f"; Clip-{first.since} (opset {first.since}) and later take it" if first else ""
        raise SpecError(f"{schema.name} does not take {dt.onnx}{hint}", loc)


def default_bounds_clip_6(dt: DType) -> tuple[Bound, Bound]:
    """Clip-6: 'min - FLOAT (default is (-3.402823e+38))', 'max ... (3.402823e+38)': FLT_MAX literals cast to T."""
    flt_max = FLOAT32.highest()
    lo = cast_attribute_onnx(-flt_max, dt, "min")
    hi = cast_attribute_onnx(flt_max, dt, "max")
    step = "default attribute -FLT_MAX / FLT_MAX (Clip-6) cast to " + dt.onnx
    return (replace(lo, given=None, default=True, steps=(step,) + lo.steps[1:]),
            replace(hi, given=None, default=True, steps=(step,) + hi.steps[1:]))


def default_bounds_onnx(dt: DType, schema: ClipSchema) -> tuple[Bound, Bound]:
    """Clip-1 summary and Clip-11+: 'They default to numeric_limits::lowest() and numeric_limits::max()'."""
    step = f"default numeric_limits<{dt.onnx}>::lowest()/max() ({schema.name})"
    return (Bound(dt.lowest(), None, (step,), default=True), Bound(dt.highest(), None, (step,), default=True))


def cast_attribute_onnx(value: Number, dt: DType, side: str) -> Bound:
    """Clip-1/6: 'min - FLOAT': the number is stored as a FLOAT attribute (one rounding of its exact value), then
    cast to T (nearest even): two roundings by the spec itself when T is float16."""
    f32 = exact.to_float32(value)
    steps = []
    precision_loss = not math.isnan(f32) and f32 != value
    if precision_loss:
        steps.append(f"{side} {format_number(value)} stored as FLOAT attribute {format_number(f32)}")
    out = dt.round(f32)
    overflow = math.isinf(out) and not math.isinf(f32)
    if out != f32 and not math.isnan(out):
        steps.append(f"cast to {dt.onnx}: {format_number(out)}")
    return Bound(out, value, tuple(steps), precision_loss=precision_loss, overflow=overflow)


def typed_bound_onnx(value: Number, dt: DType, side: str, loc: str) -> Bound:
    """Clip-11+: 'min (optional) - T ... It must be a scalar': the bound is a value of T."""
    return typed_scalar_bound(value, dt, side, loc, f"written into a {dt.onnx} tensor", dt.onnx,
                              "Clip-11+ bounds are tensors of the input type")


def order_onnx(schema: ClipSchema) -> tuple[Order, str]:
    """Clip-13: 'When min is greater than max, the clip operator sets all the input values to the value of max'."""
    if schema.since >= 13:
        return Order.MAX_WINS, "min > max gives max (Clip-13 text: Min(max, Max(input, min)))"
    return Order.MAX_WINS, (f"min > max: {schema.name} is silent; read as Clip-13 states it and as onnxruntime "
                            "computes it (max)")


@dataclass(frozen=True)
class Parsed:
    """A compact ONNX spec, plus which bounds a model computes at run time."""

    spec: OnnxSpec
    dynamic: tuple[str, ...] = ()
    node_name: str = ""


def parse(spec: OnnxSpec) -> Parsed:
    """The compact form as is; the model form read into the compact form."""
    if spec.model is None:
        return Parsed(spec)
    return parse_model(spec.model, spec.node)


def resolve(spec: OnnxSpec | Parsed) -> Meaning:
    """The exact function an ONNX Clip computes, per the schema in force at its opset."""
    parsed = spec if isinstance(spec, Parsed) else parse(spec)
    s = parsed.spec
    assert s.opset is not None and s.elem_type is not None
    schema = schema_for_opset(s.opset)
    name = s.elem_type.upper()
    if name.startswith("TENSORPROTO."):
        name = name[len("TENSORPROTO."):]
    if name not in BY_ONNX:
        raise SpecError(one_of("Unknown elem_type", s.elem_type, BY_ONNX), "elem_type")
    dt = BY_ONNX[name]
    check_dtype_onnx(schema, dt)
    if schema.since == 6:
        lo_d, hi_d = default_bounds_clip_6(dt)
    else:
        lo_d, hi_d = default_bounds_onnx(dt, schema)
    rules = [f"{schema.name}: {schema.summary}"]
    bounds = []
    for side, given, default in (("min", s.min, lo_d), ("max", s.max, hi_d)):
        if given is None:
            bounds.append(default)
        elif schema.attributes:
            bounds.append(cast_attribute_onnx(given, dt, side))
        else:
            bounds.append(typed_bound_onnx(given, dt, side, side))
    order, order_rule = order_onnx(schema)
    rules.append(order_rule)
    rules.append("NaN input propagates; a NaN bound makes every output NaN (formula and onnx.reference)")
    notes: tuple[EngineNote, ...] = ()
    if schema.attributes and (any(b.is_nan for b in bounds) or bounds[0].value > bounds[1].value):
        notes += NOTE_ATTR_REFUSED_ORT
    elif any(b.is_nan for b in bounds):
        notes += NOTE_NAN_BOUND_ORT
    if dt.is_float and any(b.default for b in bounds) and schema.since >= 11:
        notes += NOTE_DEFAULT_REFERENCE + (NOTE_F16_DEFAULT_ORT if dt is FLOAT16 else ())
    notes += runtime_support.notes_onnx(schema.name, dt.name, s.min is not None, s.max is not None)
    return Meaning(DIALECT, schema.name, dt, bounds[0], bounds[1], order=order, nan_input=NanInput.PROPAGATE,
                   nan_bound=NanBound.PROPAGATE, dynamic=bool(parsed.dynamic), rules=tuple(rules),
                   engine_notes=notes)


def normalize(spec: OnnxSpec | Parsed) -> dict:
    parsed = spec if isinstance(spec, Parsed) else parse(spec)
    out = spec_json(parsed.spec)
    if parsed.spec.elem_type:
        out["elem_type"] = parsed.spec.elem_type.upper()
    return out


# --- emit -----------------------------------------------------------------------------------------------------

def _literal_value(given: Number, dt: DType, schema: ClipSchema, side: str, notes: Notes) -> Number:
    """Literal mode: the source's number as written (exact); a typed integer bound takes a C cast of it."""
    if schema.attributes or dt.is_float:
        return given  # resolve() and build_model() round it once to the FLOAT attribute or to T
    t = f"an {dt.onnx} tensor"
    return literal_integer_cast(given, dt, side, notes, TypeWords(t, t, f"an {dt.onnx}", dt.onnx))


def emit(src: Meaning, target: OnnxTarget, mode: Mode, shape: list | None) -> Emitted:
    """An ONNX Clip (compact spec and model) computing `src` where the chosen opset can."""
    opset = target.opset or NEWEST_OPSET
    schema = schema_for_opset(opset)
    dt = src.dtype
    if opset > newest_known_opset():
        return Emitted(None, None, [Finding(
            Code.VERSION_UNSUPPORTED, Severity.ERROR, f"opset {opset} is newer than this onnx package knows "
            f"({newest_known_opset()}); a model cannot be checked at it. Clip is Clip-{schema.since} there, so "
            f"opset {newest_known_opset()} computes the same")], unsupported=True)
    if dt not in schema.dtypes:
        first = first_schema_for(dt)
        msg = (f"{schema.name} (opset {opset}) does not take {dt.onnx}"
               + (f"; use opset {first.since} or later (newest Clip: Clip-{CLIP_VERSIONS[-1].since})"
                  if first else ""))
        return Emitted(None, None, [Finding(Code.DTYPE_UNSUPPORTED, Severity.ERROR, msg)], unsupported=True)
    notes = Notes()
    if src.scale_bias is not None and (not dt.is_float or opset < 7):
        why = ("on an integer tensor: DirectML leaves its rounding undocumented and ONNX's Cast of out-of-range "
               "floats to integers is undefined" if not dt.is_float else
               f"needs numpy-broadcasting Mul/Add (opset 7+); opset {opset} has none")
        return Emitted(None, None, [Finding(Code.SCALE_BIAS, Severity.ERROR, f"ScaleBias cannot be expressed {why}",
                                            "x*Scale+Bias before clipping", "not expressible")], unsupported=True)
    values: list[Number | None] = []
    for side, bound in (("min", src.lower), ("max", src.upper)):
        assert bound is not None
        if mode is Mode.LITERAL:
            values.append(None if bound.default or bound.given is None
                          else _literal_value(bound.given, dt, schema, side, notes))
            continue
        want = bound.value
        if schema.attributes:
            carrier, got, hit = pick_carrier(want, carrier_neighbours(want, FLOAT32),
                                               lambda c, s=side: cast_attribute_onnx(c, dt, s))
            if not hit:
                notes.add(Code.BOUND_PRECISION, Severity.ERROR,
                          f"{schema.name}'s FLOAT attribute cannot hold {side} {format_number(want)} of "
                          f"{dt.onnx}; nearest: {format_number(carrier)}")
            values.append(carrier)
        else:
            values.append(want)
    if mode is Mode.PRESERVE and src.crossed and src.order is Order.MAX_WINS:
        # Same function, and it loads everywhere: onnxruntime refuses Clip-1/6 with min > max.
        values = [values[1], values[1]]
        notes.add(Code.MIN_GREATER_THAN_MAX, Severity.INFO, "min > max emitted as min = max = max: the same "
                  "outputs, and a model every onnxruntime Clip kernel loads")
    elif mode is Mode.PRESERVE and src.crossed:
        # Clip gives max when min > max; a source that gives min (or is ambiguous) needs min = max = min.
        values = [values[0], values[0]]
        if src.order is Order.AMBIGUOUS:
            notes.add(Code.MIN_GREATER_THAN_MAX, Severity.WARNING, "The source's min > max is ambiguous; "
                      "emitted min = max under the default reading (current doc: Min)")
        else:
            notes.add(Code.MIN_GREATER_THAN_MAX, Severity.INFO, "The source gives min when min > max; emitted "
                      "min = max = min")
    spec = OnnxSpec(dialect="onnx", opset=opset, elem_type=dt.onnx, shape=shape,
                    min=values[0], max=values[1])
    meaning = resolve(spec)
    artifacts = LazyArtifacts(lambda: {"onnx_model": base64.b64encode(build_model(spec, src.scale_bias)
                                                                      .SerializeToString()).decode()})
    if src.scale_bias is not None:
        # The artifact computes x*Scale+Bias as Cast(float32) -> Mul -> Add -> Cast(T): DirectML's reading.
        meaning = replace(meaning, scale_bias=replace(src.scale_bias, precision=FLOAT32, fused=False))
        notes.add(Code.SCALE_BIAS, Severity.INFO, "ScaleBias emitted as Cast(float) -> Mul -> Add -> Cast before "
                  "the Clip node in onnx_model (float32, two roundings)")
    return Emitted(normalize(spec), meaning, notes.items, artifacts)


def ir_version_for(opset: int) -> int:
    """The lowest IR version that carries `opset` (onnx's own table; IR 3 for the opsets it skips, 2 to 4)."""
    try:
        return max(3, helper.find_min_ir_version_for([helper.make_opsetid("", opset)]))
    except ValueError:
        if opset < 7:
            return 3
        raise


def newest_known_opset() -> int:
    """The newest ai.onnx opset the installed onnx package can check (an emitted model must pass it)."""
    return int(onnx.defs.onnx_opset_version())


def build_model(spec: OnnxSpec, scale_bias: ScaleBias | None = None) -> onnx.ModelProto:
    """A one-node model (plus Cast/Mul/Add for ScaleBias) that passes onnx.checker's full check."""
    assert spec.opset is not None and spec.elem_type is not None
    schema = schema_for_opset(spec.opset)
    dt = BY_ONNX[spec.elem_type]
    elem = onnx_elem_type(dt)
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
    dt = from_onnx_elem_type(elem, "model")
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
        spec = OnnxSpec(dialect="onnx", opset=opset, elem_type=dt.onnx, shape=shape,
                        min=bounds["min"], max=bounds["max"])
    except ValidationError as exc:  # the model's own values break a rule of the compact form (a shape, say)
        e = exc.errors()[0]
        raise ArtifactError(f"the Clip cannot be read: {e['loc'][0]}: {e['msg']}", "model") from None
    return Parsed(spec, tuple(dynamic), clip.name or f"#{idx}")
