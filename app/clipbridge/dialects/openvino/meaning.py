"""OpenVINO Clamp-1 (reused by every opsetN): a spec (compact, or an IR's Clamp layer) resolved to the exact
function it computes, each rule of the specification a named function below."""

from __future__ import annotations

import math
from functools import lru_cache

from clipbridge import behaviour
from clipbridge.core.dtypes import DType
from clipbridge.core.errors import SpecError
from clipbridge.core.meaning import Bound, Meaning, NanBound, NanInput, Order, State
from clipbridge.core.numbers import Number, format_number, to_double
from clipbridge.core.suggest import one_of, shown
from clipbridge.dialects.kit import runtime_support
from clipbridge.dialects.kit.base import Resolved
from clipbridge.dialects.kit.common import cached_cast
from clipbridge.dialects.kit.spec_base import spec_json
from clipbridge.dialects.openvino.dtypes import BY_ELEMENT_TYPE, element_type_name
from clipbridge.dialects.openvino.ir import Parsed, parse
from clipbridge.dialects.openvino.notes import ENGINE_NOTES_ALL, ENGINE_NOTES_CROSSED, ENGINE_NOTES_INT64, cpu_notes_openvino
from clipbridge.dialects.openvino.spec import NAME, OpenVinoSpec

LATEST_OPSET = 16  # the newest opsetN a translation names by default; Clamp is Clamp-1 in all of them
CLAMP_VERSION = "Clamp-1"
REJECT_MIN_MAX = behaviour.row("clip6-crossed-refused").gives["openvino"].partition(": ")[2]  # Clamp's own words


@lru_cache(maxsize=64)  # a pure check of a short string, asked several times per translation
def version_openvino(version: str, loc: str = "version") -> str:
    """Every opsetN (1..LATEST_OPSET) maps Clamp to Clamp-1, the only Clamp version."""
    v = version.strip().lower()
    if not v.startswith("opset") or not v[5:].isdigit() or not 1 <= int(v[5:]) <= LATEST_OPSET:
        digits = "".join(c for c in v if c.isdigit())[:4]
        hint = f". Did you mean 'opset{int(digits)}'?" if digits and 1 <= int(digits) <= LATEST_OPSET else ""
        raise SpecError(f"Unknown OpenVINO version. Got: {shown(version)}. Expected opset1 .. opset{LATEST_OPSET}"
                        + hint, loc)
    return v


def element_type_openvino(name: str, loc: str = "element_type") -> DType:
    """Element type names (f32, f16, bf16, f64, i8..i64, u8..u64); Clamp's T is 'any numeric type'."""
    key = name.strip().lower()
    if key not in BY_ELEMENT_TYPE:
        raise SpecError(one_of("Unknown element_type", name, BY_ELEMENT_TYPE), loc)
    return BY_ELEMENT_TYPE[key]


def attribute_double_openvino(value: Number, side: str) -> tuple[float, tuple[str, ...], bool]:
    """Clamp-1 attributes 'min'/'max' are doubles: the given number's exact value rounded once to a double."""
    d = to_double(value)
    loss = not isinstance(value, float) and d != value  # an int beyond 2^53, or a decimal no double holds
    steps = (f"{side} {format_number(value)} stored as double {format_number(d)}",) if loss else ()
    return d, steps, loss


def round_min_openvino(value: float, dt: DType) -> tuple[Number, bool, bool]:
    """'In case of integral numeric type, ceil is used to convert min from float to T' (saturated to T)."""
    return _integral(math.ceil, value, dt)


def round_max_openvino(value: float, dt: DType) -> tuple[Number, bool, bool]:
    """'... and floor is used to convert max from float to T' (saturated to T)."""
    return _integral(math.floor, value, dt)


def _integral(fn, value: float, dt: DType) -> tuple[int, bool, bool]:
    if math.isinf(value):
        return (dt.lowest() if value < 0 else dt.highest()), False, True  # type: ignore[return-value]
    r = int(fn(value))
    s = dt.saturate(r)
    return s, r != value, s != r


@cached_cast
def cast_bound_openvino(value: Number, dt: DType, side: str) -> Bound:
    """One Clamp attribute as the effective bound of a `dt` tensor: the double attribute, then cast to T (a second
    rounding the dialect itself makes: the reference converts the double attribute to T)."""
    d, steps, loss = attribute_double_openvino(value, side)
    if math.isnan(d):
        return Bound(d, value, steps)
    if dt.is_float:
        out = dt.round(d)
        more = (f"cast to {element_type_name(dt)}: {format_number(out)}",) if out != d else ()
        return Bound(out, value, steps + more, precision_loss=loss or (bool(more) and not math.isinf(out)),
                     overflow=math.isinf(out) and not math.isinf(d))
    rule = round_min_openvino if side == "min" else round_max_openvino
    out, rounded, saturated = rule(d, dt)
    more = ()
    if rounded or saturated:
        op = "ceil" if side == "min" else "floor"
        more = (f"{op}({format_number(d)}){' saturated' if saturated else ''} to {element_type_name(dt)}: {out}",)
    return Bound(out, value, steps + more, rounded=rounded, saturated=saturated, precision_loss=loss)


def resolve(spec: OpenVinoSpec | Parsed) -> Meaning:
    """The exact function a Clamp-1 computes; min > max (or a NaN attribute) is rejected as OpenVINO does."""
    parsed = spec if isinstance(spec, Parsed) else parse(spec)
    s = parsed.spec
    version = version_openvino(s.version)
    assert s.element_type is not None and s.min is not None and s.max is not None
    dt = element_type_openvino(s.element_type)
    lo = cast_bound_openvino(s.min, dt, "min")
    hi = cast_bound_openvino(s.max, dt, "max")
    notes = ENGINE_NOTES_ALL if dt.is_float else ()
    if dt.name in ("int64", "uint64"):
        notes = notes + ENGINE_NOTES_INT64
    rules = (f"{CLAMP_VERSION} ({version}): min(max(x, min), max) with double attributes",
             "integral T: ceil(min), floor(max), saturated" if not dt.is_float else "floating T: plain cast",
             "min <= max required; NaN input propagates (reference implementation)")
    dmin, dmax = to_double(s.min), to_double(s.max)
    state, reason = State.DEFINED, None
    if math.isnan(dmin) or math.isnan(dmax) or not dmin <= dmax:
        state, reason = State.REJECTED, REJECT_MIN_MAX
    if state is State.DEFINED and not dt.is_float and lo.value > hi.value:
        notes = notes + ENGINE_NOTES_CROSSED
    notes = notes + cpu_notes_openvino(dt, dmin, dmax, lo.saturated or hi.saturated)
    notes = notes + runtime_support.notes_openvino(dt.name, CLAMP_VERSION)
    return Meaning(NAME, CLAMP_VERSION, dt, lo, hi, order=Order.MAX_WINS, nan_input=NanInput.PROPAGATE,
                   nan_bound=NanBound.REJECTED, state=state, reason=reason, rules=rules, engine_notes=notes)


def normalize(spec: OpenVinoSpec | Parsed) -> dict:
    """The spec as wire JSON in the compact form, version and element_type written as OpenVINO does (lower case)."""
    parsed = spec if isinstance(spec, Parsed) else parse(spec)
    out = spec_json(parsed.spec)
    out["version"] = version_openvino(parsed.spec.version)
    if parsed.spec.element_type:
        out["element_type"] = parsed.spec.element_type.strip().lower()
    return out


def resolve_source(spec: OpenVinoSpec) -> Resolved:
    """The Dialect's resolve: the meaning, the normalized compact spec and the shape (an IR's, when read)."""
    q = parse(spec)
    return Resolved(NAME, resolve(q), normalize(q), q.spec.shape)
