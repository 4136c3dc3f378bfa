"""A Meaning as OpenVINO: a Clamp-1 (compact spec and, lazily, IR v11 XML) wherever Clamp can compute it, with
the findings of what it cannot; per-element bounds go to minmax.py's Maximum/Minimum IR."""

from __future__ import annotations

import base64
import math

from clipbridge.core.dtypes import FLOAT32, FLOAT64
from clipbridge.core.findings import Code, Finding, Notes, Severity
from clipbridge.core.meaning import Meaning, ScaleBias, State, evolve
from clipbridge.core.numbers import format_number, to_double
from clipbridge.dialects.kit.common import Emitted, LazyArtifacts, Mode, carrier_neighbours, pick_carrier
from clipbridge.dialects.kit.crossed import collapse_crossed
from clipbridge.dialects.kit.tensor_bounds import with_tensor_bounds
from clipbridge.dialects.openvino.dtypes import element_type_name
from clipbridge.dialects.openvino.ir import build_ir
from clipbridge.dialects.openvino.meaning import (LATEST_OPSET, REJECT_MIN_MAX, cast_bound_openvino, normalize, resolve,
                                           version_openvino)
from clipbridge.dialects.openvino.minmax import emit_minmax_openvino
from clipbridge.dialects.openvino.notes import NOTE_FMA
from clipbridge.dialects.openvino.spec import NAME, OpenVinoSpec, OpenVinoTarget


def emit(src: Meaning, target: OpenVinoTarget, mode: Mode, shape: list | None) -> Emitted:
    """A Clamp-1 (compact spec and IR v11 XML) computing `src` wherever Clamp can."""
    version = version_openvino(target.version or f"opset{LATEST_OPSET}")
    dt = src.dtype
    notes = Notes()
    assert src.lower is not None and src.upper is not None
    if src.scale_bias is not None and not dt.is_float:
        return Emitted(None, None, [Finding(
            Code.SCALE_BIAS, Severity.ERROR, "ScaleBias on an integer tensor cannot be expressed: DirectML leaves "
            "its rounding undocumented and OpenVINO's Convert of out-of-range floats to integers wraps",
            "x*Scale+Bias before clipping", "not expressible")], unsupported=True)
    if mode is Mode.LITERAL:
        vals = [b.given if b.given is not None else b.value for b in (src.lower, src.upper)]
    else:
        if src.lower.is_nan or src.upper.is_nan:
            f = Finding(Code.NAN_BOUND, Severity.ERROR, "A NaN bound cannot be expressed: Clamp-1 rejects NaN "
                        "attributes (min <= max fails)", f"NaN bound: {src.nan_bound.value}", "rejected")
            return Emitted(None, None, [f], unsupported=True)
        lo_want, hi_want = src.lower.value, src.upper.value
        lo_want, hi_want = collapse_crossed(src, [lo_want, hi_want], notes, None, lambda v: (
            f"min > max emitted as min = max = {format_number(v)}, the only equivalent Clamp-1 accepts"))
        vals = []
        for side, want in (("min", lo_want), ("max", hi_want)):
            carrier, got, hit = pick_carrier(want, carrier_neighbours(want, FLOAT64),
                                               lambda c, s=side: cast_bound_openvino(c, dt, s))
            if not hit:
                notes.add(Code.BOUND_PRECISION, Severity.ERROR, f"No double attribute gives {side} = "
                          f"{format_number(want)} on {element_type_name(dt)}; nearest: {format_number(carrier)}")
            vals.append(carrier)
    spec = OpenVinoSpec(dialect=NAME, version=version, element_type=element_type_name(dt), shape=shape,
                        min=vals[0], max=vals[1])
    meaning = resolve(spec)
    if meaning.state is State.REJECTED:
        return Emitted(normalize(spec), meaning, notes.items + [Finding(
            Code.MIN_GREATER_THAN_MAX if not any(math.isnan(to_double(v)) for v in vals) else Code.NAN_BOUND,
            Severity.ERROR, f"OpenVINO refuses to build this Clamp: {REJECT_MIN_MAX}",
            src.describe(), "rejected")], unsupported=True)
    for side, v in (("min", vals[0]), ("max", vals[1])):
        if isinstance(v, float) and math.isinf(v):
            notes.add(Code.INFINITE_BOUND, Severity.INFO, f"IR attribute {side}={format_number(v)}: OpenVINO "
                      "2026 reads 'inf' back; releases before 2026 did not")
    artifacts = LazyArtifacts(lambda: _ir_artifacts(spec, src.scale_bias))
    if src.scale_bias is not None:  # build_ir writes the ScaleBias constants into ir_bin
        meaning = evolve(meaning, scale_bias=evolve(src.scale_bias, precision=FLOAT32, fused=False),
                          engine_notes=meaning.engine_notes + (NOTE_FMA,))
        notes.add(Code.SCALE_BIAS, Severity.INFO, "ScaleBias emitted as Convert(f32) -> Multiply -> Add -> "
                  "Convert before Clamp; the constants are in ir_bin")
    return Emitted(normalize(spec), meaning, notes.items, artifacts)


def _ir_artifacts(spec: OpenVinoSpec, scale_bias: ScaleBias | None) -> dict[str, str]:
    xml, weights = build_ir(spec, scale_bias)
    return {"ir_xml": xml, "ir_bin": base64.b64encode(weights).decode()} if weights else {"ir_xml": xml}


# Per-element bounds: Clamp-1 takes scalar attributes, so Maximum then Minimum with Const bounds.
EMIT = with_tensor_bounds(emit, emit_minmax_openvino, "OpenVINO Clamp-1")
