"""A Meaning emitted as an ONNX Clip: the compact spec, its findings and the model artifact (built when read).

Per-element bounds are written as Max/Min nodes (app/clipbridge/dialects/onnx/minmax.py): `EMIT` is the Dialect's emit."""

from __future__ import annotations

import base64

from clipbridge.core.dtypes import FLOAT32, DType
from clipbridge.core.findings import Code, Finding, Notes, Severity
from clipbridge.core.meaning import Meaning, Order, evolve
from clipbridge.core.numbers import Number, format_number
from clipbridge.dialects.kit.common import (Emitted, LazyArtifacts, Mode, TypeWords, carrier_neighbours,
                                     literal_integer_cast, pick_carrier)
from clipbridge.dialects.kit.crossed import collapse_crossed
from clipbridge.dialects.kit.tensor_bounds import with_tensor_bounds
from clipbridge.dialects.onnx.dtypes import onnx_name
from clipbridge.dialects.onnx.meaning import cast_attribute_onnx, normalize, resolve
from clipbridge.dialects.onnx.minmax import emit_minmax
from clipbridge.dialects.onnx.model import build_model
from clipbridge.dialects.onnx.spec import NAME, OnnxSpec, OnnxTarget
from clipbridge.dialects.onnx.versions import (CLIP_VERSIONS, NEWEST_OPSET, ClipSchema, first_schema_for,
                                        newest_known_opset, schema_for_opset)


CROSSED_MAX = ("min > max emitted as min = max = max: the same outputs, and a model every onnxruntime Clip kernel "
               "loads")
CROSSED_MIN = "The source gives min when min > max; emitted min = max = min"


def _literal_value(given: Number, dt: DType, schema: ClipSchema, side: str, notes: Notes) -> Number:
    """Literal mode: the source's number as written (exact); a typed integer bound takes a C cast of it."""
    if schema.attributes or dt.is_float:
        return given  # resolve() and build_model() round it once to the FLOAT attribute or to T
    name = onnx_name(dt)
    t = f"an {name} tensor"
    return literal_integer_cast(given, dt, side, notes, TypeWords(t, t, f"an {name}", name))


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
        msg = (f"{schema.name} (opset {opset}) does not take {onnx_name(dt)}"
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
                          f"{onnx_name(dt)}; nearest: {format_number(carrier)}")
            values.append(carrier)
        else:
            values.append(want)
    if mode is Mode.PRESERVE:
        # Written min = max even where Clip-11+ computes the same: onnxruntime refuses Clip-1/6 with min > max.
        values = collapse_crossed(src, values, notes, None, CROSSED_MAX if src.order is Order.MAX_WINS
                                  else CROSSED_MIN)
    spec = OnnxSpec(dialect=NAME, opset=opset, elem_type=onnx_name(dt), shape=shape,
                    min=values[0], max=values[1])
    meaning = resolve(spec)
    artifacts = LazyArtifacts(lambda: {"onnx_model": base64.b64encode(build_model(spec, src.scale_bias)
                                                                      .SerializeToString()).decode()})
    if src.scale_bias is not None:
        # The artifact computes x*Scale+Bias as Cast(float32) -> Mul -> Add -> Cast(T): DirectML's reading.
        meaning = evolve(meaning, scale_bias=evolve(src.scale_bias, precision=FLOAT32, fused=False))
        notes.add(Code.SCALE_BIAS, Severity.INFO, "ScaleBias emitted as Cast(float) -> Mul -> Add -> Cast before "
                  "the Clip node in onnx_model (float32, two roundings)")
    return Emitted(normalize(spec), meaning, notes.items, artifacts)


# Per-element bounds: Max then Min (Clip takes scalars).
EMIT = with_tensor_bounds(emit, emit_minmax, "ONNX Clip")
