"""DirectML ELEMENT_WISE_CLIP (FL 1.0+) and ELEMENT_WISE_CLIP1 (FL 5.0+): validate a desc, resolve it to its Meaning
(each semantic rule a named function citing the DirectML documentation), normalize it."""

from __future__ import annotations

import math
from dataclasses import dataclass

from clipbridge.core import exact
from clipbridge.core.dtypes import FLOAT32, DType
from clipbridge.core.errors import SpecError
from clipbridge.core.meaning import Bound, Meaning, NanBound, NanInput, Order, ScaleBias, State, evolve
from clipbridge.core.numbers import Number, format_number
from clipbridge.dialects.directml.dtypes import dml_name
from clipbridge.dialects.directml.spec import DirectMLSpec, DmlScaleBias
from clipbridge.dialects.directml.tensor import (CLIP, CLIP1, check_tensor_directml, data_type_directml,
                                          feature_level_directml, level_tuple, total_tensor_size_directml)
from clipbridge.dialects.kit.common import cached_cast
from clipbridge.dialects.kit.spec_base import spec_json

NAME = "directml"
# ELEMENT_WISE_CLIP's min > max, as the two versions of its documentation page give it (Dialect.readings; the
# first is the default, the resolved meaning; the other is kept in Meaning.alternates).
CURRENT_DOC, DOC_2022 = "current-doc", "2022-doc"
READING_LINES = (f"{CURRENT_DOC}: max(Min, min(x, Max))", f"{DOC_2022}: min(Max, max(Min, x))")


@cached_cast
def cast_bound_directml(value: Number, dt: DType, side: str) -> Bound:
    """CLIP Min/Max are FLOAT: 'cast to the tensor data type (integers: truncate toward zero; float: nearest even)'.

    Two roundings by the API itself: the number is held in a C `float` field (one rounding of its exact value),
    then that FLOAT is cast to T (float16: nearest even again)."""
    f32 = exact.to_float32(value)
    steps: list[str] = []
    loss = not math.isnan(f32) and f32 != value
    if loss:
        steps.append(f"{side} {format_number(value)} as FLOAT: {format_number(f32)}")
    if dt.is_float:
        out = dt.round(f32)
        if out != f32 and not math.isnan(out):
            steps.append(f"rounded to {dml_name(dt)} (nearest even): {format_number(out)}")
        return Bound(out, value, tuple(steps), precision_loss=loss,
                     overflow=math.isinf(out) and not math.isinf(f32))
    if math.isnan(f32):
        raise SpecError(f"{side} is NaN: a NaN FLOAT has no integer value to cast to ({dml_name(dt)})", side)
    if math.isinf(f32):
        out = dt.lowest() if f32 < 0 else dt.highest()
        steps.append(f"{format_number(f32)} cast to {dml_name(dt)}: undocumented; read as saturating to {out}")
        return Bound(out, value, tuple(steps), saturated=True, precision_loss=loss)
    t = int(f32)  # truncation toward zero
    s = dt.saturate(t)
    if t != f32:
        steps.append(f"truncated toward zero: {t}")
    if s != t:
        steps.append(f"outside {dml_name(dt)}: undocumented cast, read as saturating to {s}")
    return Bound(s, value, tuple(steps), rounded=t != f32, saturated=s != t, precision_loss=loss)


def typed_bound_directml(value: Number, dt: DType, side: str, loc: str) -> Bound:
    """CLIP1: 'MinMaxDataType determines how to interpret the field' (a DML_SCALAR_UNION of that type)."""
    if dt.is_float:
        out = dt.round(value)
        if out != value and not math.isnan(out):
            raise SpecError(f"{format_number(value)} is not a {dml_name(dt)} value (nearest: {format_number(out)})",
                            loc)
        return Bound(out, value)
    if not exact.is_integral(value):
        raise SpecError(f"{format_number(value)} is not a {dml_name(dt)} value", loc)
    if not dt.contains(value):
        raise SpecError(f"{format_number(value)} is outside {dml_name(dt)} [{dt.lowest()}, {dt.highest()}]", loc)
    return Bound(int(value), value)


def order_directml(operator: str, reading: str = CURRENT_DOC) -> Order:
    """CLIP: the current doc's 'max(Min, min(x, Max))' gives Min (min wins), the 2022 doc's 'min(Max, max(Min, x))'
    gives Max; CLIP1: the current formula (one document)."""
    if operator == CLIP and reading == DOC_2022:
        return Order.MAX_WINS
    return Order.MIN_WINS


def scale_bias_directml(sb: DmlScaleBias | None, dt: DType) -> ScaleBias | None:
    """'g(x) = x * scale + bias' before clipping; Scale/Bias are FLOAT; precision undocumented (read: float32)."""
    if sb is None:
        return None
    return ScaleBias(exact.to_float32(sb.Scale), exact.to_float32(sb.Bias), FLOAT32, fused=False)


@dataclass(frozen=True)
class Parsed:
    spec: DirectMLSpec
    dtype: DType
    level: str


def parse(spec: DirectMLSpec) -> Parsed:
    """Validate the desc against its feature level; everything DirectML would refuse is a SpecError."""
    level = feature_level_directml(spec.feature_level)
    d = spec.desc
    if spec.operator == CLIP1 and level_tuple(level) < (5, 0):
        raise SpecError(f"ELEMENT_WISE_CLIP1 needs DML_FEATURE_LEVEL_5_0; FL is {level.replace('_', '.')}",
                        "operator")
    dt_in = check_tensor_directml(d.InputTensor, level, "desc.InputTensor")
    dt_out = check_tensor_directml(d.OutputTensor, level, "desc.OutputTensor")
    if dt_in is not dt_out:
        raise SpecError(f"InputTensor and OutputTensor must have the same DataType ({dml_name(dt_in)} vs "
                        f"{dml_name(dt_out)})", "desc.OutputTensor.DataType")
    if d.InputTensor.Sizes != d.OutputTensor.Sizes:
        raise SpecError("InputTensor and OutputTensor must have the same DimensionCount and Sizes",
                        "desc.OutputTensor.Sizes")
    if spec.operator == CLIP1:
        if d.MinMaxDataType is None:
            raise SpecError("ELEMENT_WISE_CLIP1 needs MinMaxDataType", "desc.MinMaxDataType")
        mm = data_type_directml(d.MinMaxDataType, "desc.MinMaxDataType")
        if mm is not dt_out:
            raise SpecError(f"MinMaxDataType must match OutputTensor.DataType ({dml_name(dt_out)}). Got: "
                            f"{dml_name(mm)}", "desc.MinMaxDataType")
    elif d.MinMaxDataType is not None:
        raise SpecError("MinMaxDataType belongs to ELEMENT_WISE_CLIP1; ELEMENT_WISE_CLIP's Min/Max are FLOAT",
                        "desc.MinMaxDataType")
    return Parsed(spec, dt_out, level)


def resolve(spec: DirectMLSpec | Parsed) -> Meaning:
    """The exact function a DirectML clip desc computes under the current doc; a CLIP min > max keeps the 2022 doc's
    meaning in `alternates` (the documents disagree only there)."""
    p = spec if isinstance(spec, Parsed) else parse(spec)
    s, dt, d = p.spec, p.dtype, p.spec.desc
    if s.operator == CLIP1:
        lo = typed_bound_directml(d.Min, dt, "min", "desc.Min")
        hi = typed_bound_directml(d.Max, dt, "max", "desc.Max")
    else:
        lo = cast_bound_directml(d.Min, dt, "min")
        hi = cast_bound_directml(d.Max, dt, "max")
    sb = scale_bias_directml(d.ScaleBias, dt)
    state, reason = State.DEFINED, None
    rules = [f"{s.operator} at FL {p.level.replace('_', '.')}",
             "Min/Max FLOAT cast to T: integers truncate toward zero, floats round to nearest even"
             if s.operator == CLIP else "Min/Max typed by MinMaxDataType",
             "NaN: undocumented (executed as propagating)"]
    two_docs = s.operator == CLIP and lo.value > hi.value
    if two_docs:
        state, reason = State.AMBIGUOUS, ("min > max: the 2022 doc's min(Max, max(Min, x)) gives Max, the current "
                                          "doc's max(Min, min(x, Max)) gives Min")
    if sb is not None and not dt.is_float:
        state, reason = State.AMBIGUOUS, ("ScaleBias on an integer tensor: DirectML does not document its "
                                          "precision or rounding; read as float32 then truncate/saturate")
    m = Meaning(NAME, f"{s.operator}@{p.level}", dt, lo, hi, order=order_directml(s.operator),
                nan_input=NanInput.UNDOCUMENTED, nan_bound=NanBound.UNDOCUMENTED, scale_bias=sb, state=state,
                reason=reason, readings=READING_LINES if two_docs else (), rules=tuple(rules))
    if not two_docs:
        return m
    return evolve(m, alternates=((DOC_2022, evolve(m, order=order_directml(s.operator, DOC_2022))),))


def normalize(spec: DirectMLSpec | Parsed) -> dict:
    p = spec if isinstance(spec, Parsed) else parse(spec)
    out = spec_json(p.spec)
    out["feature_level"] = p.level
    for key in ("InputTensor", "OutputTensor"):
        t = getattr(p.spec.desc, key)
        out["desc"][key]["DataType"] = t.DataType.strip().upper()
        out["desc"][key]["DimensionCount"] = len(t.Sizes)
        if t.TotalTensorSizeInBytes is None:
            out["desc"][key]["TotalTensorSizeInBytes"] = total_tensor_size_directml(p.dtype, t.Sizes, t.Strides)
    return out
