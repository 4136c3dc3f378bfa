"""DirectML ELEMENT_WISE_CLIP (FL 1.0+) and ELEMENT_WISE_CLIP1 (FL 5.0+): validate descs, resolve, emit C++."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from app.dialects.kit.common import Emitted, LazyArtifacts, Mode, carrier_neighbours, pick_carrier
from app.dialects.kit.spec_base import (DirectMLSpec, DirectMLTarget, DmlClipDesc, DmlScaleBias, DmlTensorDesc,
                                    spec_json)
from app.core.dtypes import BY_DIRECTML, FLOAT16, FLOAT32, INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64, DType
from app.core.errors import SpecError
from app.core.suggest import one_of
from app.core.findings import Code, Finding, Notes, Severity
from app.core.meaning import (DEFAULT_READING, READING_2022, READING_CURRENT, Bound, Meaning, NanBound, NanInput, Order,
                         ScaleBias, State)
from app.core import exact
from app.core.numbers import Number, format_number

DIALECT = "directml"
FEATURE_LEVELS = ("1_0", "2_0", "2_1", "3_0", "3_1", "4_0", "4_1", "5_0", "5_1", "5_2", "6_0", "6_1", "6_2",
                  "6_3", "6_4")
NEWEST_LEVEL = FEATURE_LEVELS[-1]
CLIP = "ELEMENT_WISE_CLIP"
CLIP1 = "ELEMENT_WISE_CLIP1"
ALL_DML_DTYPE_NAMES = ("FLOAT32", "FLOAT16", "UINT32", "UINT16", "UINT8", "INT32", "INT16", "INT8", "FLOAT64",
                       "UINT64", "INT64")


def feature_level_directml(text: str, loc: str = "feature_level") -> str:
    """A feature level as 'M_m' (accepts '5_0', '5.0', 'DML_FEATURE_LEVEL_5_0')."""
    key = text.strip().upper().replace(".", "_")
    if key.startswith("DML_FEATURE_LEVEL_"):
        key = key[len("DML_FEATURE_LEVEL_"):]
    if key not in FEATURE_LEVELS:
        raise SpecError(one_of("Unknown DirectML feature level", text, FEATURE_LEVELS), loc)
    return key


def _fl(level: str) -> tuple[int, int]:
    major, minor = level.split("_")
    return int(major), int(minor)


def tensor_support_directml(level: str) -> tuple[tuple[DType, ...], tuple[int, int]]:
    """'Tensor support' tables: FL1.0 FLOAT32/16, 4 dims; 2.1 adds 8-32-bit ints; 3.0 1-8 dims; 5.0 adds 64-bit."""
    fl = _fl(level)
    dtypes: tuple[DType, ...] = (FLOAT32, FLOAT16)
    if fl >= (2, 1):
        dtypes += (INT32, INT16, INT8, UINT32, UINT16, UINT8)
    if fl >= (5, 0):
        dtypes += (INT64, UINT64)
    ranks = (1, 8) if fl >= (3, 0) else (4, 4)
    return dtypes, ranks


def first_level_for(dt: DType) -> str | None:
    return next((lv for lv in FEATURE_LEVELS if dt in tensor_support_directml(lv)[0]), None)


def data_type_directml(name: str, loc: str) -> DType:
    key = name.strip().upper()
    if key not in ALL_DML_DTYPE_NAMES:
        raise SpecError(one_of("Unknown DML_TENSOR_DATA_TYPE", name, ALL_DML_DTYPE_NAMES), loc)
    return BY_DIRECTML[key]


def total_tensor_size_directml(dt: DType, sizes: list[int], strides: list[int] | None) -> int:
    """DMLCalcBufferTensorSize: (sum((Sizes[i]-1)*Strides[i]) + 1) * elementSize, rounded up to 4 bytes."""
    if strides is None:
        count = 1
        for s in sizes:
            count *= s
        index_span = count
    else:
        index_span = sum((s - 1) * st for s, st in zip(sizes, strides, strict=True)) + 1
    size = index_span * dt.itemsize
    return (size + 3) & ~3


def check_tensor_directml(t: DmlTensorDesc, level: str, loc: str) -> DType:
    """DML_BUFFER_TENSOR_DESC rules: sizes >= 1, counts agree, strides non-negative, size big enough."""
    dt = data_type_directml(t.DataType, f"{loc}.DataType")
    flags = t.Flags.strip().upper()
    if flags not in ("NONE", "OWNED_BY_DML"):
        raise SpecError(f"Unknown DML_TENSOR_FLAGS {t.Flags!r}: expected NONE or OWNED_BY_DML", f"{loc}.Flags")
    n = len(t.Sizes)
    if t.DimensionCount is not None and t.DimensionCount != n:
        raise SpecError(f"DimensionCount is {t.DimensionCount} but Sizes has {n} entries", f"{loc}.DimensionCount")
    dtypes, (rmin, rmax) = tensor_support_directml(level)
    if not rmin <= n <= rmax:
        need = "exactly 4 dimensions" if rmin == rmax else f"{rmin} to {rmax} dimensions"
        raise SpecError(f"DirectML FL {level.replace('_', '.')} needs {need}. Got: {n}", f"{loc}.Sizes")
    for i, s in enumerate(t.Sizes):
        if s < 1 or s > 2**32 - 1:
            raise SpecError(f"Sizes[{i}] = {s}: DirectML sizes are UINT from 1 to 2^32-1", f"{loc}.Sizes[{i}]")
    if t.Strides is not None:
        if len(t.Strides) != n:
            raise SpecError(f"Strides has {len(t.Strides)} entries, Sizes has {n}", f"{loc}.Strides")
        for i, s in enumerate(t.Strides):
            if s < 0 or s > 2**32 - 1:
                raise SpecError(f"Strides[{i}] = {s}: DirectML strides are UINT element counts",
                                f"{loc}.Strides[{i}]")
    need = total_tensor_size_directml(dt, t.Sizes, t.Strides)
    if need > 2**64 - 1:
        raise SpecError(f"the tensor needs {need} bytes, beyond UINT64", f"{loc}.Sizes")
    if t.TotalTensorSizeInBytes is not None and t.TotalTensorSizeInBytes < need:
        raise SpecError(f"TotalTensorSizeInBytes is {t.TotalTensorSizeInBytes}; these Sizes/Strides need at least "
                        f"{need}", f"{loc}.TotalTensorSizeInBytes")
    a = t.GuaranteedBaseOffsetAlignment
    if a != 0 and (a < 16 or a & (a - 1)):
        raise SpecError(f"GuaranteedBaseOffsetAlignment {a} must be 0 or a power of two >= 16",
                        f"{loc}.GuaranteedBaseOffsetAlignment")
    if dt not in dtypes:
        first = first_level_for(dt)
        hint = f"; FL {first.replace('_', '.')} and later take it" if first else "; no feature level takes it"
        raise SpecError(f"ELEMENT_WISE_CLIP at FL {level.replace('_', '.')} does not take {dt.directml}{hint}",
                        f"{loc}.DataType")
    return dt


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
            steps.append(f"rounded to {dt.directml} (nearest even): {format_number(out)}")
        return Bound(out, value, tuple(steps), precision_loss=loss,
                     overflow=math.isinf(out) and not math.isinf(f32))
    if math.isnan(f32):
        raise SpecError(f"{side} is NaN: a NaN FLOAT has no integer value to cast to ({dt.directml})", side)
    if math.isinf(f32):
        out = dt.lowest() if f32 < 0 else dt.highest()
        steps.append(f"{format_number(f32)} cast to {dt.directml}: undocumented; read as saturating to {out}")
        return Bound(out, value, tuple(steps), saturated=True, precision_loss=loss)
    t = int(f32)  # truncation toward zero
    s = dt.saturate(t)
    if t != f32:
        steps.append(f"truncated toward zero: {t}")
    if s != t:
        steps.append(f"outside {dt.directml}: undocumented cast, read as saturating to {s}")
    return Bound(s, value, tuple(steps), rounded=t != f32, saturated=s != t, precision_loss=loss)


def typed_bound_directml(value: Number, dt: DType, side: str, loc: str) -> Bound:
    """CLIP1: 'MinMaxDataType determines how to interpret the field' (a DML_SCALAR_UNION of that type)."""
    if dt.is_float:
        out = dt.round(value)
        if out != value and not math.isnan(out):
            raise SpecError(f"{format_number(value)} is not a {dt.directml} value (nearest: {format_number(out)})",
                            loc)
        return Bound(out, value)
    if not exact.is_integral(value):
        raise SpecError(f"{format_number(value)} is not a {dt.directml} value", loc)
    if not dt.contains(value):
        raise SpecError(f"{format_number(value)} is outside {dt.directml} [{dt.lowest()}, {dt.highest()}]", loc)
    return Bound(int(value), value)


def order_directml(operator: str) -> tuple[Order, tuple[str, ...]]:
    """CLIP: 2022 doc 'min(Max, max(Min, x))' vs current 'max(Min, min(x, Max))': ambiguous; CLIP1: the latter."""
    if operator == CLIP1:
        return Order.MIN_WINS, ()
    return Order.AMBIGUOUS, (READING_CURRENT, READING_2022)


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
    if spec.operator == CLIP1 and _fl(level) < (5, 0):
        raise SpecError(f"ELEMENT_WISE_CLIP1 needs DML_FEATURE_LEVEL_5_0; FL is {level.replace('_', '.')}",
                        "operator")
    dt_in = check_tensor_directml(d.InputTensor, level, "desc.InputTensor")
    dt_out = check_tensor_directml(d.OutputTensor, level, "desc.OutputTensor")
    if dt_in is not dt_out:
        raise SpecError(f"InputTensor and OutputTensor must have the same DataType ({dt_in.directml} vs "
                        f"{dt_out.directml})", "desc.OutputTensor.DataType")
    if d.InputTensor.Sizes != d.OutputTensor.Sizes:
        raise SpecError("InputTensor and OutputTensor must have the same DimensionCount and Sizes",
                        "desc.OutputTensor.Sizes")
    if spec.operator == CLIP1:
        if d.MinMaxDataType is None:
            raise SpecError("ELEMENT_WISE_CLIP1 needs MinMaxDataType", "desc.MinMaxDataType")
        mm = data_type_directml(d.MinMaxDataType, "desc.MinMaxDataType")
        if mm is not dt_out:
            raise SpecError(f"MinMaxDataType must match OutputTensor.DataType ({dt_out.directml}). Got: "
                            f"{mm.directml}", "desc.MinMaxDataType")
    elif d.MinMaxDataType is not None:
        raise SpecError("MinMaxDataType belongs to ELEMENT_WISE_CLIP1; ELEMENT_WISE_CLIP's Min/Max are FLOAT",
                        "desc.MinMaxDataType")
    return Parsed(spec, dt_out, level)


def resolve(spec: DirectMLSpec | Parsed) -> Meaning:
    """The exact function a DirectML clip desc computes, with its ambiguities named."""
    p = spec if isinstance(spec, Parsed) else parse(spec)
    s, dt, d = p.spec, p.dtype, p.spec.desc
    if s.operator == CLIP1:
        lo = typed_bound_directml(d.Min, dt, "min", "desc.Min")
        hi = typed_bound_directml(d.Max, dt, "max", "desc.Max")
    else:
        lo = cast_bound_directml(d.Min, dt, "min")
        hi = cast_bound_directml(d.Max, dt, "max")
    order, readings = order_directml(s.operator)
    sb = scale_bias_directml(d.ScaleBias, dt)
    state, reason = State.DEFINED, None
    rules = [f"{s.operator} at FL {p.level.replace('_', '.')}",
             "Min/Max FLOAT cast to T: integers truncate toward zero, floats round to nearest even"
             if s.operator == CLIP else "Min/Max typed by MinMaxDataType",
             "NaN: undocumented (executed as propagating)"]
    if lo.value > hi.value and order is Order.AMBIGUOUS:
        state, reason = State.AMBIGUOUS, ("min > max: the 2022 doc's min(Max, max(Min, x)) gives Max, the current "
                                          "doc's max(Min, min(x, Max)) gives Min")
    if sb is not None and not dt.is_float:
        state, reason = State.AMBIGUOUS, ("ScaleBias on an integer tensor: DirectML does not document its "
                                          "precision or rounding; read as float32 then truncate/saturate")
    return Meaning(DIALECT, f"{s.operator}@{p.level}", dt, lo, hi, order=order, nan_input=NanInput.UNDOCUMENTED,
                   nan_bound=NanBound.UNDOCUMENTED, scale_bias=sb, state=state, reason=reason,
                   readings=readings if state is State.AMBIGUOUS and lo.value > hi.value else (),
                   rules=tuple(rules))


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


# --- emit -----------------------------------------------------------------------------------------------------

def _sizes_for(shape: list | None, level: str, mode: Mode, notes: Notes) -> list[int] | None:
    """DirectML sizes for a dense tensor: pad or fold to the ranks the level takes (elementwise: exact)."""
    _, (rmin, rmax) = tensor_support_directml(level)
    if shape is None or any(not isinstance(d, int) for d in shape):
        placeholder = [1] * rmin
        notes.add(Code.SHAPE_UNKNOWN, Severity.INFO, f"The source gives no concrete shape; Sizes {placeholder} "
                  "are a placeholder to fill in before compiling (the clip is elementwise)")
        return placeholder
    sizes = [int(d) for d in shape]
    if any(d == 0 for d in sizes):
        return None
    if rmin <= len(sizes) <= rmax:
        return sizes
    if mode is Mode.LITERAL:
        return None
    count = 1
    for d in sizes:
        count *= d
    if len(sizes) < rmin:
        new = [1] * (rmin - len(sizes)) + sizes
    else:
        keep = rmax - 1
        head = 1
        for d in sizes[: len(sizes) - keep]:
            head *= d
        new = [head] + sizes[len(sizes) - keep:]
        if rmin == rmax == 4 and len(new) != 4:
            new = [1] * (4 - len(new)) + new
    notes.add(Code.RANK_UNSUPPORTED, Severity.INFO, f"FL {level.replace('_', '.')} takes {rmin}"
              f"{'' if rmin == rmax else f' to {rmax}'} dimensions: the elementwise clip runs on the dense view "
              f"{new} of shape {sizes} (same elements, same order)")
    return new


def emit(src: Meaning, target: DirectMLTarget, mode: Mode, shape: list | None) -> Emitted:
    """A DirectML clip desc computing `src` where the feature level can: CLIP, or CLIP1 for typed bounds."""
    level = feature_level_directml(target.feature_level or NEWEST_LEVEL)
    dt = src.dtype
    dtypes, ranks = tensor_support_directml(level)
    if dt not in dtypes:
        first = first_level_for(dt)
        msg = (f"DirectML FL {level.replace('_', '.')} has no {dt.name} tensors"
               + (f"; FL {first.replace('_', '.')} and later do" if first else "; no feature level has them"))
        return Emitted(None, None, [Finding(Code.DTYPE_UNSUPPORTED, Severity.ERROR, msg)], unsupported=True)
    notes = Notes()
    sizes = _sizes_for(shape, level, mode, notes)
    if sizes is None:
        n = len(shape or [])
        return Emitted(None, None, notes.items + [Finding(
            Code.RANK_UNSUPPORTED, Severity.ERROR, f"DirectML FL {level.replace('_', '.')} cannot take shape "
            f"{shape} ({n} dimensions{', a zero size' if shape and 0 in shape else ''})")], unsupported=True)
    assert src.lower is not None and src.upper is not None
    can_clip1 = _fl(level) >= (5, 0)
    operator = CLIP
    if mode is Mode.LITERAL:
        vals = [b.given if b.given is not None else b.value for b in (src.lower, src.upper)]
        if not dt.is_float:
            vals = [v if not (isinstance(v, float) and math.isnan(v)) else 0 for v in vals]
    else:
        lo_want, hi_want = src.lower.value, src.upper.value
        if src.crossed:
            pick = lo_want if src.order is Order.MIN_WINS else hi_want
            if src.order is Order.AMBIGUOUS:
                pick = lo_want if DEFAULT_READING == READING_CURRENT else hi_want
            lo_want = hi_want = pick
            notes.add(Code.MIN_GREATER_THAN_MAX, Severity.INFO, f"min > max emitted as Min = Max = "
                      f"{format_number(pick)}: DirectML's two documented formulas agree only there")
        if not dt.is_float and (src.lower.is_nan or src.upper.is_nan):
            return Emitted(None, None, [Finding(Code.NAN_BOUND, Severity.ERROR, "NaN bound on an integer tensor")],
                           unsupported=True)
        vals = []
        exact_all = True
        for side, want in (("min", lo_want), ("max", hi_want)):
            carrier, _, hit = pick_carrier(want, carrier_neighbours(want, FLOAT32),
                                             lambda c, s=side: cast_bound_directml(c, dt, s))
            exact_all &= hit
            vals.append(carrier)
        if not exact_all and can_clip1:
            operator, vals = CLIP1, [lo_want, hi_want]
            notes.add(Code.BOUND_PRECISION, Severity.INFO, f"A FLOAT Min/Max cannot hold the {dt.name} bounds "
                      f"exactly: emitted ELEMENT_WISE_CLIP1 with MinMaxDataType {dt.directml}")
        elif not exact_all:
            notes.add(Code.BOUND_PRECISION, Severity.ERROR, f"A FLOAT Min/Max cannot hold the {dt.name} bounds "
                      f"[{format_number(lo_want)}, {format_number(hi_want)}] exactly, and FL "
                      f"{level.replace('_', '.')} has no ELEMENT_WISE_CLIP1 (FL 5.0+)")
    tensor = DmlTensorDesc(DataType=dt.directml or "", Flags="NONE", DimensionCount=len(sizes), Sizes=sizes,
                           Strides=None, TotalTensorSizeInBytes=total_tensor_size_directml(dt, sizes, None))
    sb = None
    if src.scale_bias is not None:
        sb = DmlScaleBias(Scale=src.scale_bias.scale, Bias=src.scale_bias.bias)
    desc = DmlClipDesc(InputTensor=tensor, OutputTensor=tensor, ScaleBias=sb,
                       MinMaxDataType=dt.directml if operator == CLIP1 else None, Min=vals[0], Max=vals[1])
    spec = DirectMLSpec(dialect="directml", feature_level=level, operator=operator, desc=desc)
    try:
        meaning = resolve(spec)
    except SpecError as exc:
        return Emitted(None, None, notes.items + [Finding(Code.BOUND_SATURATION, Severity.ERROR,
                                                          f"DirectML cannot take the bounds: {exc}")],
                       unsupported=True)
    return Emitted(normalize(spec), meaning, notes.items, LazyArtifacts(lambda: {"cpp": cpp_snippet(spec, dt)}))


def _cpp_float(v: Number) -> str:
    f = exact.to_float32(v)  # the FLOAT the struct holds: one rounding of the exact value
    if math.isnan(f):
        return "std::numeric_limits<float>::quiet_NaN()"
    if math.isinf(f):
        return ("-" if f < 0 else "") + "std::numeric_limits<float>::infinity()"
    return f"{float(np.float32(f)).hex()}f /* {format_number(f)} */"


def _cpp_scalar(v: Number, dt: DType) -> str:
    field = {"FLOAT32": "Float32", "INT8": "Int8", "INT16": "Int16", "INT32": "Int32", "INT64": "Int64",
             "UINT8": "UInt8", "UINT16": "UInt16", "UINT32": "UInt32", "UINT64": "UInt64"}
    if dt is FLOAT16:
        bits = exact.bits_of(FLOAT16.round(v), np.dtype(np.float16))
        return f"UInt16 = 0x{bits:04x}; // FLOAT16 {format_number(v)} as its bits"
    name = field[dt.directml or ""]
    if dt.is_float:
        return f"{name} = {_cpp_float(v)};"
    suffix = "ULL" if dt.name == "uint64" else ("LL" if dt.name == "int64" else "")
    if not dt.is_float and dt.lowest() < 0 and int(v) == dt.lowest():
        return f"{name} = INT{dt.bits}_MIN;"  # a negated literal would be unsigned first
    return f"{name} = {int(v)}{suffix};"


def cpp_snippet(spec: DirectMLSpec, dt: DType) -> str:
    """C++ filling the DML structs for this desc (DirectML.h)."""
    d = spec.desc
    t = d.InputTensor
    sizes = ", ".join(str(s) for s in t.Sizes)
    total = t.TotalTensorSizeInBytes or total_tensor_size_directml(dt, t.Sizes, t.Strides)
    lines = [
        "// Generated by clipbridge. Requires DirectML.h.",
        f"UINT sizes[{len(t.Sizes)}] = {{{sizes}}};",
        "DML_BUFFER_TENSOR_DESC bufferDesc = {};",
        f"bufferDesc.DataType = DML_TENSOR_DATA_TYPE_{dt.directml};",
        "bufferDesc.Flags = DML_TENSOR_FLAG_NONE;",
        f"bufferDesc.DimensionCount = {len(t.Sizes)};",
        "bufferDesc.Sizes = sizes;",
        "bufferDesc.Strides = nullptr;  // packed",
        f"bufferDesc.TotalTensorSizeInBytes = {total};",
        "bufferDesc.GuaranteedBaseOffsetAlignment = 0;",
        "DML_TENSOR_DESC tensorDesc = { DML_TENSOR_TYPE_BUFFER, &bufferDesc };",
    ]
    sb_ptr = "nullptr"
    if d.ScaleBias is not None:
        lines.append(f"DML_SCALE_BIAS scaleBias = {{ {_cpp_float(d.ScaleBias.Scale)}, {_cpp_float(d.ScaleBias.Bias)} }};")
        sb_ptr = "&scaleBias"
    if spec.operator == CLIP1:
        lines += ["DML_ELEMENT_WISE_CLIP1_OPERATOR_DESC clipDesc = {};",
                  "clipDesc.InputTensor = &tensorDesc;", "clipDesc.OutputTensor = &tensorDesc;",
                  f"clipDesc.ScaleBias = {sb_ptr};", f"clipDesc.MinMaxDataType = DML_TENSOR_DATA_TYPE_{dt.directml};",
                  f"clipDesc.Min.{_cpp_scalar(d.Min, dt)}", f"clipDesc.Max.{_cpp_scalar(d.Max, dt)}",
                  "DML_OPERATOR_DESC opDesc = { DML_OPERATOR_ELEMENT_WISE_CLIP1, &clipDesc };"]
    else:
        lines += ["DML_ELEMENT_WISE_CLIP_OPERATOR_DESC clipDesc = {};",
                  "clipDesc.InputTensor = &tensorDesc;", "clipDesc.OutputTensor = &tensorDesc;",
                  f"clipDesc.ScaleBias = {sb_ptr};", f"clipDesc.Min = {_cpp_float(d.Min)};",
                  f"clipDesc.Max = {_cpp_float(d.Max)};",
                  "DML_OPERATOR_DESC opDesc = { DML_OPERATOR_ELEMENT_WISE_CLIP, &clipDesc };"]
    lines.append(f"// Feature level: DML_FEATURE_LEVEL_{spec.feature_level}")
    return "\n".join(lines) + "\n"
