"""TOSA 1.0 `CLAMP` (arm/tosa-specification): the spec resolved to a Meaning, one named rule per check.

CLAMP.tosac: `ERROR_IF(max_val < min_val); ERROR_IF(is_a_NaN(min_val) || is_a_NaN(max_val));` then per element
`apply_clip_s(value, min_val, max_val, nan_mode)` = apply_min_s(apply_max_s(value, min_val), max_val). min_val and
max_val are required attributes of type in_out_t (typed like the input; no defaults); nan_mode is PROPAGATE
(default) or IGNORE, "ignored by non floating-point types". typesupport: i8_t, i16_t, fp16_t, bf16_t, fp32_t.
Implementation latitude the spec grants (modelled as rules, never as drift): "The sign of a zero is ignored", a
zero result "must be either +0.0 or -0.0 but either sign is permitted", and "bf16_t, fp16_t, and fp32_t subnormal
values may be flushed to zero before computation".
"""

from __future__ import annotations

import math

from clipbridge.core import exact
from clipbridge.core.dtypes import DType
from clipbridge.core.errors import SpecError
from clipbridge.core.meaning import Bound, Meaning, NanBound, NanInput, Order, State
from clipbridge.core.numbers import Number, format_number
from clipbridge.core.suggest import one_of
from clipbridge.dialects.kit.base import source_resolver
from clipbridge.dialects.kit.spec_base import spec_json
from clipbridge.dialects.tosa.catalogue import ERROR_NAN, ERROR_ORDER, LATITUDE, SPEC_SRC, TYPESUPPORT
from clipbridge.dialects.tosa.spec import (DTYPES, NAME, NAN_MODES, OP_VERSION, OUTSIDE_TYPESUPPORT, TOSA_SPELLING, UNMODELLED,
                                    VERSIONS, TosaSpec)

INT32_MAX = 2**31 - 1  # tosa.fbs TosaTensor.shape is [int32]


def version_tosa(text: str, loc: str = "version") -> str:
    """CLAMP with min_val/max_val/nan_mode is TOSA 1.0's ('1', '1.0', '1.0.0', 'v1.0' name it)."""
    key = text.strip().lower().lstrip("v")
    if key in ("1", "1.0", "1.0.0"):
        return "1.0"
    if key.startswith("0."):
        raise SpecError(f"TOSA {text.strip()} CLAMP had min_int/max_int (i64) and min_fp/max_fp (f32) attributes; "
                        "only TOSA 1.0's min_val/max_val (typed like the input) are modelled", loc)
    raise SpecError(one_of("Unknown TOSA version", text, VERSIONS), loc)


def dtype_tosa(name: str, loc: str = "dtype") -> tuple[str, DType, bool]:
    """The input's in_out_t by its TOSA name; the flag says whether CLAMP's typesupport has it (tosa.xml)."""
    key = name.strip().lower()
    if key in DTYPES:
        return key, DTYPES[key], True
    if key in OUTSIDE_TYPESUPPORT:
        return key, OUTSIDE_TYPESUPPORT[key], False
    if key in TOSA_SPELLING:
        raise SpecError(f"{one_of('Unknown TOSA dtype for CLAMP', name, DTYPES)}. Did you mean "
                        f"{TOSA_SPELLING[key]!r}?", loc)
    if key in UNMODELLED:
        raise SpecError(f"{key} is a TOSA type outside {TYPESUPPORT}, and clipbridge has no {key} dtype", loc)
    raise SpecError(one_of("Unknown TOSA dtype for CLAMP", name, DTYPES), loc)


def nan_mode_tosa(text: str, loc: str = "nan_mode") -> str:
    """nan_mode: 'PROPAGATE or IGNORE. Set to PROPAGATE by default.' (tosa.xml)."""
    key = text.strip().upper()
    if key not in NAN_MODES:
        raise SpecError(one_of("Unknown TOSA nan_mode", text, NAN_MODES), loc)
    return key


def nan_input_tosa(mode: str, dt: DType) -> NanInput:
    """compare_nan: PROPAGATE returns NaN; IGNORE returns the non-NaN operand, so a NaN input becomes min_val
    (apply_max_s(NaN, min_val) = min_val, then min(min_val, max_val) = min_val). Integers: nan_mode ignored."""
    if dt.is_float and mode == "IGNORE":
        return NanInput.TO_LOWER
    return NanInput.PROPAGATE


def typed_bound_tosa(value: Number, dt: DType, name: str, field: str) -> Bound:
    """min_val/max_val are attributes of type in_out_t: the number must be a value of the input's type. The spec
    gives no rounding rule for attributes, so a number the type cannot hold is an error, not a rounding."""
    if dt.is_float:
        if exact.is_nan(value) or exact.is_inf(value) or dt.contains(value):
            return Bound(value if isinstance(value, float) else dt.round(value), value)
        r = dt.round(value)
        below, above = (r, dt.next_up(r)) if r < value else (dt.next_down(r), r)
        near = [f"{word} {format_number(v)}" for word, v in (("below", below), ("above", above))
                if not math.isinf(v)]
        raise SpecError(f"{field} is an in_out_t attribute: it must be a {name} value, and TOSA gives no rounding "
                        f"rule for attributes. Got: {format_number(value)}. Nearest {name} values: "
                        + ", ".join(near), field)
    if not exact.is_integral(value):
        raise SpecError(f"{field} is an in_out_t attribute: it must be a {name} value (an integer). "
                        f"Got: {format_number(value)}", field)
    if not dt.contains(value):
        raise SpecError(f"{field} is an in_out_t attribute: it must be a {name} value in [{dt.lowest()}, "
                        f"{dt.highest()}]. Got: {format_number(value)}", field)
    return Bound(int(value), value)


def shape_tosa(shape: list | None, loc: str = "shape") -> None:
    """tosa.fbs `TosaTensor.shape: [int32]`: a TOSA graph cannot carry a dimension beyond 2^31-1."""
    for d in shape or ():
        if isinstance(d, int) and d > INT32_MAX:
            raise SpecError(f"a TOSA tensor's dimensions are int32 (tosa.fbs TosaTensor.shape). Got: {d}", loc)


def error_if_tosa(lo: Bound, hi: Bound, dt: DType) -> tuple[str | None, bool]:
    """CLAMP.tosac's two ERROR_IFs, in the spec's order: (the failing condition or None, whether it is the NaN one).

    For floats `max_val < min_val` is IEEE: -0.0 < +0.0 is false ('The sign of a zero is ignored')."""
    if dt.is_float and (lo.is_nan or hi.is_nan):
        return ERROR_NAN, True  # the first ERROR_IF is false for NaN operands; the second one fires
    if hi.value < lo.value:
        return ERROR_ORDER, False
    return None, False


def resolve(spec: TosaSpec) -> Meaning:
    """The function CLAMP computes, or a rejection quoting the ERROR_IF / typesupport rule it breaks."""
    version_tosa(spec.version)
    shape_tosa(spec.shape)
    name, dt, supported = dtype_tosa(spec.dtype)
    mode = nan_mode_tosa(spec.nan_mode)
    lo = typed_bound_tosa(spec.min_val, dt, name, "min_val")
    hi = typed_bound_tosa(spec.max_val, dt, name, "max_val")
    rules = (f"TOSA 1.0 CLAMP: apply_min_s(apply_max_s(x, min_val), max_val) ({SPEC_SRC})",
             f"{ERROR_ORDER}; {ERROR_NAN}: min > max and NaN bounds are invalid graphs",
             "min_val/max_val required, of type in_out_t (no defaults, no rounding)",
             f"nan_mode {mode}: " + ("a NaN input gives min_val (compare_nan returns the non-NaN operand)"
                                     if mode == "IGNORE" else "a NaN input gives NaN")
             + ("" if dt.is_float else " (ignored by integer types)"),
             *(f"latitude, {t}" for t in LATITUDE))
    state, reason = State.DEFINED, None
    if not supported:
        state, reason = State.REJECTED, f"{TYPESUPPORT}; {name} is not among them"
    else:
        failed, _ = error_if_tosa(lo, hi, dt)
        if failed is not None:
            state, reason = State.REJECTED, f"{failed} ({SPEC_SRC})"
    return Meaning(NAME, OP_VERSION, dt, lo, hi, order=Order.REJECTED, nan_input=nan_input_tosa(mode, dt),
                   nan_bound=NanBound.REJECTED, state=state, reason=reason, rules=rules)


def normalize(spec: TosaSpec) -> dict:
    out = spec_json(spec)
    out["version"] = version_tosa(spec.version)
    out["dtype"] = spec.dtype.strip().lower()
    out["nan_mode"] = nan_mode_tosa(spec.nan_mode)
    return out


resolve_source = source_resolver(NAME, resolve, normalize)


def nan_mode_of(m: Meaning) -> str:
    """The nan_mode that computes a meaning's NaN-input rule (IGNORE for to-lower)."""
    return "IGNORE" if m.nan_input is NanInput.TO_LOWER else "PROPAGATE"
