"""ONNX Clip-1, -6, -11, -12, -13 resolved to a Meaning: each semantic rule of the schema in force a named function.

The compact spec is read as it is; the model form is read into the compact form first (app/clipbridge/dialects/onnx/model.py).
"""

from __future__ import annotations

import math

from clipbridge import behaviour
from clipbridge.core import exact
from clipbridge.core.dtypes import FLOAT16, FLOAT32, DType
from clipbridge.core.errors import SpecError
from clipbridge.core.meaning import Bound, EngineNote, Meaning, NanBound, NanInput, Order, evolve
from clipbridge.core.numbers import Number, format_number
from clipbridge.core.suggest import one_of
from clipbridge.dialects.kit import runtime_support
from clipbridge.dialects.kit.base import Resolved
from clipbridge.dialects.kit.common import cached_cast, typed_scalar_bound
from clipbridge.dialects.kit.spec_base import spec_json
from clipbridge.dialects.onnx.dtypes import BY_ONNX_NAME, by_onnx_name, onnx_name
from clipbridge.dialects.onnx.model import Parsed, parse_model
from clipbridge.dialects.onnx.spec import NAME, OnnxSpec
from clipbridge.dialects.onnx.versions import ClipSchema, first_schema_for, schema_for_opset

NOTE_NAN_BOUND_ORT = (
    EngineNote("onnxruntime", "A NaN min/max input is ignored (that side is left unbounded), where the ONNX "
                              "formula Min(max, Max(input, min)) and onnx.reference give NaN everywhere."),
)
_DEFAULT = behaviour.row("omitted-bound-default")
NOTE_DEFAULT_REFERENCE = (
    EngineNote("onnx.reference", f"An absent bound: {_DEFAULT.gives['onnx-reference']}, where the spec "
                                 f"gives {_DEFAULT.gives['spec']} (behaviour row {_DEFAULT.id})."),
)
_F16 = behaviour.row("onnxruntime-float16-clip11-open-bound")
NOTE_F16_DEFAULT_ORT = (
    EngineNote("onnxruntime", f"{_F16.condition[0].upper()}{_F16.condition[1:]}: {_F16.gives['onnxruntime']}, "
                              f"where the spec gives {_F16.gives['spec']} ({_F16.source}; behaviour row {_F16.id})."),
)
NOTE_ATTR_REFUSED_ORT = (
    EngineNote("onnxruntime", "onnxruntime refuses to load a Clip-1/Clip-6 whose min > max or whose attribute is "
                              "NaN (check min_ <= max_ fails), where Clip-11+ inputs are accepted.", refuses=True),
)


def check_dtype_onnx(schema: ClipSchema, dt: DType, loc: str = "elem_type") -> None:
    """Type constraints: Clip-1..11 'T in (float16, float, double)'; Clip-12 adds ints; Clip-13 adds bfloat16."""
    if dt not in schema.dtypes:
        first = first_schema_for(dt)
        hint = f"; Clip-{first.since} (opset {first.since}) and later take it" if first else ""
        raise SpecError(f"{schema.name} does not take {onnx_name(dt)}{hint}", loc)


def default_bounds_clip_6(dt: DType) -> tuple[Bound, Bound]:
    """Clip-6: 'min - FLOAT (default is (-3.402823e+38))', 'max ... (3.402823e+38)': FLT_MAX literals cast to T."""
    flt_max = FLOAT32.highest()
    lo = cast_attribute_onnx(-flt_max, dt, "min")
    hi = cast_attribute_onnx(flt_max, dt, "max")
    step = "default attribute -FLT_MAX / FLT_MAX (Clip-6) cast to " + onnx_name(dt)
    return (evolve(lo, given=None, default=True, steps=(step,) + lo.steps[1:]),
            evolve(hi, given=None, default=True, steps=(step,) + hi.steps[1:]))


def default_bounds_onnx(dt: DType, schema: ClipSchema) -> tuple[Bound, Bound]:
    """Clip-1 summary and Clip-11+: 'They default to numeric_limits::lowest() and numeric_limits::max()'."""
    step = f"default numeric_limits<{onnx_name(dt)}>::lowest()/max() ({schema.name})"
    return (Bound(dt.lowest(), None, (step,), default=True), Bound(dt.highest(), None, (step,), default=True))


@cached_cast
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
        steps.append(f"cast to {onnx_name(dt)}: {format_number(out)}")
    return Bound(out, value, tuple(steps), precision_loss=precision_loss, overflow=overflow)


@cached_cast
def typed_bound_onnx(value: Number, dt: DType, side: str, loc: str) -> Bound:
    """Clip-11+: 'min (optional) - T ... It must be a scalar': the bound is a value of T."""
    return typed_scalar_bound(value, dt, side, loc, f"written into a {onnx_name(dt)} tensor", onnx_name(dt),
                              "Clip-11+ bounds are tensors of the input type")


def order_onnx(schema: ClipSchema) -> tuple[Order, str]:
    """Clip-13: 'When min is greater than max, the clip operator sets all the input values to the value of max'."""
    if schema.since >= 13:
        return Order.MAX_WINS, "min > max gives max (Clip-13 text: Min(max, Max(input, min)))"
    return Order.MAX_WINS, (f"min > max: {schema.name} is silent; read as Clip-13 states it and as onnxruntime "
                            "computes it (max)")


def attributes_refused_onnx(given_min: Number | None, given_max: Number | None) -> bool:
    """onnxruntime Clip_6Base (providers/cpu/math/clip.h) checks `min_ <= max_` on the FLOAT attributes as read
    (absent: -FLT_MAX / FLT_MAX), before any cast to T: a float16 min = inf with no max is refused (inf > FLT_MAX)
    although both read inf in float16 (app/clipbridge/data/runtime_support.json, refuses_non_finite, Clip-6 min+inf)."""
    flt_max = FLOAT32.highest()
    lo = exact.to_float32(given_min) if given_min is not None else -flt_max
    hi = exact.to_float32(given_max) if given_max is not None else flt_max
    return math.isnan(lo) or math.isnan(hi) or lo > hi


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
    dt = by_onnx_name(name)
    if dt is None:
        raise SpecError(one_of("Unknown elem_type", s.elem_type, BY_ONNX_NAME), "elem_type")
    check_dtype_onnx(schema, dt)
    defaults = None  # built only for an absent side
    rules = [f"{schema.name}: {schema.summary}"]
    bounds = []
    for i, (side, given) in enumerate((("min", s.min), ("max", s.max))):
        if given is None:
            if defaults is None:
                defaults = default_bounds_clip_6(dt) if schema.since == 6 else default_bounds_onnx(dt, schema)
            bounds.append(defaults[i])
        elif schema.attributes:
            bounds.append(cast_attribute_onnx(given, dt, side))
        else:
            bounds.append(typed_bound_onnx(given, dt, side, side))
    order, order_rule = order_onnx(schema)
    rules.append(order_rule)
    rules.append("NaN input propagates; a NaN bound makes every output NaN (formula and onnx.reference)")
    notes: tuple[EngineNote, ...] = ()
    if schema.attributes and (any(b.is_nan for b in bounds) or bounds[0].value > bounds[1].value
                              or attributes_refused_onnx(s.min, s.max)):
        notes += NOTE_ATTR_REFUSED_ORT
    elif any(b.is_nan for b in bounds):
        notes += NOTE_NAN_BOUND_ORT
    if dt.is_float and any(b.default for b in bounds) and schema.since >= 11:
        notes += NOTE_DEFAULT_REFERENCE + (NOTE_F16_DEFAULT_ORT if dt is FLOAT16 and schema.since == 11 else ())
    notes += runtime_support.notes_onnx(schema.name, dt.name, s.min is not None, s.max is not None)
    return Meaning(NAME, schema.name, dt, bounds[0], bounds[1], order=order, nan_input=NanInput.PROPAGATE,
                   nan_bound=NanBound.PROPAGATE, dynamic=bool(parsed.dynamic), rules=tuple(rules),
                   engine_notes=notes)


def normalize(spec: OnnxSpec | Parsed) -> dict:
    parsed = spec if isinstance(spec, Parsed) else parse(spec)
    out = spec_json(parsed.spec)
    if parsed.spec.elem_type:
        out["elem_type"] = parsed.spec.elem_type.upper()
    return out


def resolve_source(spec: OnnxSpec) -> Resolved:
    """The Dialect's `resolve`: the spec read (the model form too), resolved and normalized."""
    p = parse(spec)
    return Resolved(NAME, resolve(p), normalize(p), p.spec.shape)

