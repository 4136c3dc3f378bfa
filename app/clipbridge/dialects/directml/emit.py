"""A Meaning as a DirectML clip desc: ELEMENT_WISE_CLIP where a FLOAT Min/Max holds the bounds, CLIP1 (FL 5.0+) where
it cannot, with the findings of what the feature level cannot express and the C++ snippet as a lazy artifact."""

from __future__ import annotations

import math

from clipbridge.core.dtypes import FLOAT32, DType
from clipbridge.core.errors import SpecError
from clipbridge.core.findings import Code, Finding, Notes, Severity
from clipbridge.core.meaning import Meaning
from clipbridge.core.numbers import Number, format_number
from clipbridge.dialects.directml.cpp import cpp_snippet
from clipbridge.dialects.directml.dtypes import dml_name
from clipbridge.dialects.directml.meaning import cast_bound_directml, normalize, parse, resolve
from clipbridge.dialects.directml.spec import DirectMLSpec, DirectMLTarget, DmlClipDesc, DmlScaleBias, DmlTensorDesc
from clipbridge.dialects.directml.tensor import (CLIP, CLIP1, NEWEST_LEVEL, feature_level_directml, first_level_for,
                                          level_tuple, tensor_support_directml, total_tensor_size_directml)
from clipbridge.dialects.kit.common import Emitted, LazyArtifacts, Mode, carrier_neighbours, pick_carrier
from clipbridge.dialects.kit.crossed import collapse_crossed


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


def _carriers(lo_want: Number, hi_want: Number, dt: DType, level: str, notes: Notes) -> tuple[str, list[Number]]:
    """The operator and Min/Max computing [lo_want, hi_want]: CLIP with FLOAT carriers that cast to them, else CLIP1
    with the typed values where the level has it (FL 5.0+), else CLIP with the nearest carriers and an error."""
    vals: list[Number] = []
    exact_all = True
    for side, want in (("min", lo_want), ("max", hi_want)):
        carrier, _, hit = pick_carrier(want, carrier_neighbours(want, FLOAT32),
                                       lambda c, s=side: cast_bound_directml(c, dt, s))
        exact_all &= hit
        vals.append(carrier)
    if not exact_all and level_tuple(level) >= (5, 0):
        notes.add(Code.BOUND_PRECISION, Severity.INFO, f"A FLOAT Min/Max cannot hold the {dt.name} bounds "
                  f"exactly: emitted ELEMENT_WISE_CLIP1 with MinMaxDataType {dml_name(dt)}")
        return CLIP1, [lo_want, hi_want]
    if not exact_all:
        notes.add(Code.BOUND_PRECISION, Severity.ERROR, f"A FLOAT Min/Max cannot hold the {dt.name} bounds "
                  f"[{format_number(lo_want)}, {format_number(hi_want)}] exactly, and FL "
                  f"{level.replace('_', '.')} has no ELEMENT_WISE_CLIP1 (FL 5.0+)")
    return CLIP, vals


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
    operator = CLIP
    if mode is Mode.LITERAL:
        vals = [b.given if b.given is not None else b.value for b in (src.lower, src.upper)]
        if not dt.is_float:
            vals = [v if not (isinstance(v, float) and math.isnan(v)) else 0 for v in vals]
    else:
        lo_want, hi_want = src.lower.value, src.upper.value
        # Whichever formula the source has, DirectML's two documented ones agree only at Min = Max.
        lo_want, hi_want = collapse_crossed(src, [lo_want, hi_want], notes, None, lambda v: (
            f"min > max emitted as Min = Max = {format_number(v)}: DirectML's two documented formulas agree only "
            "there"))
        if not dt.is_float and (src.lower.is_nan or src.upper.is_nan):
            return Emitted(None, None, [Finding(Code.NAN_BOUND, Severity.ERROR, "NaN bound on an integer tensor")],
                           unsupported=True)
        operator, vals = _carriers(lo_want, hi_want, src.dtype, level, notes)
    tensor = DmlTensorDesc(DataType=dml_name(dt) or "", Flags="NONE", DimensionCount=len(sizes), Sizes=sizes,
                           Strides=None, TotalTensorSizeInBytes=total_tensor_size_directml(dt, sizes, None))
    sb = None
    if src.scale_bias is not None:
        sb = DmlScaleBias(Scale=src.scale_bias.scale, Bias=src.scale_bias.bias)
    desc = DmlClipDesc(InputTensor=tensor, OutputTensor=tensor, ScaleBias=sb,
                       MinMaxDataType=dml_name(dt) if operator == CLIP1 else None, Min=vals[0], Max=vals[1])
    spec = DirectMLSpec(dialect="directml", feature_level=level, operator=operator, desc=desc)
    try:
        parsed = parse(spec)  # once: resolve and normalize both take it
        meaning = resolve(parsed)
    except SpecError as exc:
        return Emitted(None, None, notes.items + [Finding(Code.BOUND_SATURATION, Severity.ERROR,
                                                          f"DirectML cannot take the bounds: {exc}")],
                       unsupported=True)
    return Emitted(normalize(parsed), meaning, notes.items, LazyArtifacts(lambda: {"cpp": cpp_snippet(spec, dt)}))
