"""WebNN `clamp` (W3C WebNN API, MLGraphBuilder.clamp): bound casts and meanings under two readings.

`builder.clamp(input, {minValue, maxValue})`: minValue/maxValue are MLNumber (`bigint or unrestricted double`),
each optional; "When it is not specified, the clamping is not performed on the lower limit of the range".
The bounds are cast to the input's dataType, then "If options.minValue is greater than options.maxValue, then
throw a TypeError". No WebNN engine runs on Linux, so execution is the numpy kernel on the meaning.

Two readings (Dialect.readings; the first is the default):
- `spec`: the W3C text (index.bs @c515210, 2026-06-26): ConvertToFloat (one rounding, ties to even; 16-bit:
  |x| >= 65520 -> inf), ConvertToInt (NaN -> +0, saturate, round half to even, -0 -> +0); the uint32 row of
  the casting table as written (ConvertToInt(x, 32, "signed"), most likely a typo); an omitted bound is no clamp
  (the EMULATED note: the method steps' defaults min = +Infinity, max = -Infinity are inverted and would throw
  for an options-less clamp, a spec erratum); a NaN bound passes step 5 (NaN > x is false) and its result is
  unspecified; a NaN input is unspecified.
- `chromium`: what Chromium ships (services/webnn/public/cpp/ml_number.cc, web-platform-tests): integer bounds
  through base::saturated_cast (truncation toward zero, saturation), float16 bounds double -> float -> half
  (two roundings), a NaN bound acts as if that option were not given (current WPT; older WPT read it as 0,
  webmachinelearning/webnn#874 is open); a NaN input is backend-dependent (#874).

The resolved Meaning is the spec reading's; `Meaning.alternates` holds ("chromium", its meaning).

Ranks: every implementation must take ranks 0 to 5 ("required"); the spec allows any rank N where a context's
opSupportLimits() says so. clipbridge accepts any rank; emit warns above 5.
Versions: WebNN has no op versions; the one version "1" names the Candidate Recommendation Draft text above.
"""

from __future__ import annotations

import math
from fractions import Fraction

from clipbridge.core import exact
from clipbridge.dialects.kit.base import source_resolver
from clipbridge.dialects.kit.common import cached_cast
from clipbridge.dialects.kit.spec_base import spec_json
from clipbridge.dialects.webnn.catalogue import CHROMIUM, READINGS
from clipbridge.dialects.webnn.spec import (CHROMIUM_SRC, DATA_TYPES, ISSUE_874, NAME, NAME_OF, NOT_IN_WEBNN, OP_VERSION,
                                     SPEC_SRC, VERSION_ALIASES, VERSIONS, BigInt, WebNNSpec)
from clipbridge.core.dtypes import FLOAT16, FLOAT32, UINT32, DType
from clipbridge.core.errors import SpecError
from clipbridge.core.meaning import Bound, EngineNote, Meaning, NanBound, NanInput, Order, State, evolve
from clipbridge.core.numbers import Number, format_number
from clipbridge.core.suggest import one_of

TYPE_ERROR = ("TypeError: options.minValue is greater than options.maxValue after casting to the input's "
              "dataType (clamp method step 5: \"If options.minValue is greater than options.maxValue, then "
              "throw a TypeError\")")
NOTE_NAN_INPUT = EngineNote("Chromium (webnn#874)", "A NaN input's output depends on the backend (DirectML, "
                            "TFLite, Core ML differ); the spec does not say. clipbridge executes NaN -> NaN.")
NOTE_OLD_NAN_BOUND = EngineNote("Chromium, older releases", "Older web-platform-tests (and the Chromium they "
                                "tested) read a NaN minValue/maxValue as 0 (NanBound.ZERO); current ones as "
                                "omitted. Before that, #874 reported backend-dependent outputs (input -Infinity, "
                                "minValue NaN: Linux and Windows CPU Infinity, macOS 14 CPU -Infinity, macOS 14 "
                                f"GPU/NPU NaN, Windows GPU -Infinity). {ISSUE_874}")


# --- rules shared by both readings -----------------------------------------------------------------------------

def version_webnn(text: str, loc: str = "version") -> str:
    """WebNN has no op versions: '1' (also 'v1', 'cr', 'latest', '2026-06-26') names the CR Draft text."""
    key = text.strip().lower()
    if key not in VERSION_ALIASES:
        raise SpecError(one_of("Unknown WebNN version (WebNN has no op versions; '1' is the Candidate "
                               "Recommendation Draft of 2026-06-26)", text, VERSIONS), loc)
    return VERSION_ALIASES[key]


def data_type_webnn(name: str, loc: str = "dataType") -> DType:
    """enum MLOperandDataType: float32, float16, int32, uint32, int64, uint64, int8, uint8 (no others)."""
    key = name.strip().lower()
    if key in NOT_IN_WEBNN:
        raise SpecError(f"{key} is not a WebNN MLOperandDataType (WebNN has float32, float16, int32, uint32, "
                        f"int64, uint64, int8, uint8). Got: {name!r}", loc)
    if key not in DATA_TYPES:
        raise SpecError(one_of("Unknown WebNN dataType", name, DATA_TYPES), loc)
    return DATA_TYPES[key]


def js_number_webnn(value: Number, side: str) -> tuple[Number, tuple[str, ...], bool]:
    """A bound not written as a BigInt is a JS Number: the exact value rounded once to a double (ECMAScript
    ToNumber); an integer above 2^53 can change. Returns (value, steps, precision lost)."""
    if isinstance(value, BigInt):
        return int(value), (), False
    d = exact.to_double(value)
    if not isinstance(value, int) or d == value:
        return d, (), False  # a decimal literal means its nearest double in JavaScript too: nothing changed
    return d, (f"{side} {format_number(value)} as a JS Number (double): {format_number(d)} (MLNumber note: "
               "a double loses accuracy over 2^53; write a BigInt such as '123n')",), True


# --- the spec reading -----------------------------------------------------------------------------------------

def convert_to_float_webnn(x: Number, dt: DType) -> float:
    """ConvertToFloat(x, bits): NaN -> NaN; nearest value, ties to even; 2^bits' upper/lower bound -> +-Infinity
    (16-bit: |x| >= 65520 -> inf). The IEEE conversion of the exact value, one rounding (clipbridge.core.exact)."""
    return dt.round(x)


def convert_to_int_webnn(x: Number, bits: int, signed: bool) -> int:
    """ConvertToInt(x, bits, signedness), step by step: NaN -> +0; x = min(max(x, lowerBound), upperBound);
    round to the nearest integer, the even one when halfway; -0 -> +0."""
    if exact.is_nan(x):
        return 0
    lower, upper = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2**bits - 1)
    if exact.compare_key(x) <= lower:
        return lower
    if exact.compare_key(x) >= upper:
        return upper
    q = Fraction(x)
    floor = math.floor(q)
    rest = q - floor
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and floor % 2 == 1):
        return floor + 1
    return floor  # an int has no -0


def cast_webnn(x: Number, dt: DType) -> tuple[Number, str | None]:
    """The Casting table: float32/float16 -> ConvertToFloat; the integer types -> ConvertToInt(x, bits, sign),
    with "uint32" -> ConvertToInt(x, 32, "signed") as written (a typo, read literally here). Returns the value
    and a step naming the typo when it changed the result."""
    if dt.is_float:
        return convert_to_float_webnn(x, dt), None
    if dt is not UINT32:
        return convert_to_int_webnn(x, dt.bits, dt.name.startswith("int")), None
    signed, unsigned = convert_to_int_webnn(x, 32, True), convert_to_int_webnn(x, 32, False)
    out = max(signed, 0)  # below 0 no uint32 value lies under the bound: it acts as 0
    if out == unsigned:
        return out, None
    return out, (f"the spec casts a uint32 bound through SIGNED 32-bit (Casting table: \"uint32\" -> "
                 f"ConvertToInt(x, 32, \"signed\"), likely a typo): {signed}")


@cached_cast
def bound_spec_webnn(given: Number | None, dt: DType, side: str) -> Bound:
    """Method steps 1-4 read with the EMULATED note: an omitted bound is no clamp (the steps' defaults, min =
    +Infinity and max = -Infinity, are inverted: a spec erratum); a given one is cast to the input's dataType."""
    if given is None:
        return _open_bound(dt, side)
    value, steps, lost = js_number_webnn(given, side)
    out, typo = cast_webnn(value, dt)
    if dt.is_float:
        if not exact.is_nan(out) and out != value:
            steps += (f"{side} {format_number(value)} cast to {NAME_OF[dt.name]} (ConvertToFloat, one rounding): "
                      f"{format_number(out)}",)
        return Bound(out, given, steps, precision_loss=lost or (bool(steps) and not math.isinf(out)),
                     overflow=math.isinf(out) and not exact.is_inf(value))
    if typo:
        steps += (typo,)
    elif exact.is_nan(value) or out != value:
        steps += (f"{side} {format_number(value)} cast to {NAME_OF[dt.name]} (ConvertToInt: NaN -> 0, saturate, "
                  f"round half to even): {out}",)
    return Bound(out, given, steps, rounded=_fraction_in_range(value, dt), precision_loss=lost,
                 saturated=not _within(value, dt) or typo is not None)


def _fraction_in_range(value: Number, dt: DType) -> bool:
    """A finite non-integer inside the type's range: an integer-rounding rule decides the bound."""
    return not exact.is_nan(value) and not exact.is_inf(value) and not exact.is_integral(value) \
        and _within(value, dt)


def _within(value: Number, dt: DType) -> bool:
    if exact.is_nan(value):
        return True
    return exact.compare_key(dt.lowest()) <= exact.compare_key(value) <= exact.compare_key(dt.highest())


def _open_bound(dt: DType, side: str) -> Bound:
    """No clamp on that side: +-inf for float types, the type's extreme for integer types."""
    return Bound(dt.unbounded(side == "minValue"), None, (f"{side} omitted: no clamp",), default=True)


def order_webnn(lo: Bound, hi: Bound) -> tuple[State, str | None]:
    """Step 5: "If options.minValue is greater than options.maxValue, then throw a TypeError" (after the casts;
    a NaN bound never compares greater, so it passes)."""
    a, b = lo.value, hi.value
    if a.__class__ is float and b.__class__ is float:  # two doubles compare exactly (compare_key's order)
        crossed = a > b
    else:
        crossed = not lo.is_nan and not hi.is_nan and exact.compare_key(a) > exact.compare_key(b)
    if crossed:
        return State.REJECTED, TYPE_ERROR
    return State.DEFINED, None


# --- the Chromium reading ------------------------------------------------------------------------------------

def saturated_cast_chromium(d: float, dt: DType) -> Number:
    """base::saturated_cast<T>(double): NaN -> 0 for integers, out of range -> the extreme, else the C++
    conversion (integers: truncation toward zero; float: nearest, and beyond FLT_MAX -> +-inf, the Overflow()
    limit [inferred from base/numerics/safe_conversions.h])."""
    if dt.is_float:
        if not math.isnan(d) and abs(d) > FLOAT32.highest():
            return math.copysign(math.inf, d)
        return exact.to_float32(d)
    if math.isnan(d):
        return 0
    if math.isinf(d):
        return dt.lowest() if d < 0 else dt.highest()
    return dt.saturate(exact.trunc_exact(d))


def float16_chromium(d: Number) -> float:
    """MLNumber::AsFloat16: fp16_ieee_from_fp32_value(d) with d a double: double -> float (nearest), then
    float -> half (nearest): two roundings, where the spec rounds once."""
    return FLOAT16.round(exact.to_float32(d))


@cached_cast
def bound_chromium(given: Number | None, dt: DType, side: str) -> Bound:
    """Blink's defaults are -Infinity/+Infinity (= no clamp); a NaN bound acts as if not given (current
    web-platform-tests, webnn#874); a double bound goes through saturated_cast (float16: double rounding); a
    BigInt (int64_t/uint64_t in MLNumber's variant) saturates exactly."""
    if given is None:
        return _open_bound(dt, side)
    value, steps, lost = js_number_webnn(given, side)
    if exact.is_nan(value):
        b = _open_bound(dt, side)
        return evolve(b, given=given, steps=(f"{side} NaN treated as not given (Chromium, web-platform-tests; "
                                              f"{ISSUE_874})",), default=False)
    out: Number
    if dt is FLOAT16:
        out = float16_chromium(value)
    elif isinstance(given, BigInt):  # int64_t/uint64_t arm: a C++ integer conversion, exact or one rounding
        out = dt.round(value) if dt.is_float else dt.saturate(int(value))
    else:
        out = saturated_cast_chromium(float(value), dt)
    if not (exact.is_nan(out) or out == value):
        how = "double -> float -> half, two roundings" if dt is FLOAT16 else "base::saturated_cast"
        steps += (f"{side} {format_number(value)} cast to {NAME_OF[dt.name]} ({how}): {format_number(out)}",)
    if dt.is_float:
        return Bound(out, given, steps, precision_loss=lost or (bool(steps) and not math.isinf(out)),
                     overflow=math.isinf(out) and not exact.is_inf(value))
    return Bound(out, given, steps, rounded=_fraction_in_range(value, dt), saturated=not _within(value, dt),
                 precision_loss=lost)


# --- resolve ---------------------------------------------------------------------------------------------------

RULES_SPEC = (f"WebNN clamp, spec reading ({SPEC_SRC}): min(max(x, minValue), maxValue)",
              "bounds cast to the dataType: ConvertToFloat (one rounding; float16 |x| >= 65520 -> inf) or "
              "ConvertToInt (NaN -> 0, saturate, round half to even); uint32 through signed 32-bit as written",
              "omitted bound = no clamp (EMULATED note; the steps' inverted defaults are a spec erratum)",
              "minValue > maxValue after the casts: TypeError (step 5); a NaN bound passes it, result unspecified",
              "NaN input: not specified")
RULES_CHROMIUM = (f"WebNN clamp, Chromium reading ({CHROMIUM_SRC})",
                  "integer bounds: base::saturated_cast (truncate toward zero, saturate); uint32 as unsigned",
                  "float16 bounds: double -> float -> half (two roundings)",
                  f"NaN bound: as if not given (current web-platform-tests; older ones: 0; {ISSUE_874})",
                  "minValue > maxValue after the casts: TypeError; NaN input: backend-dependent (webnn#874)")


def meaning_spec_webnn(spec: WebNNSpec) -> Meaning:
    """The spec reading's meaning (the default)."""
    dt = data_type_webnn(spec.dataType)
    lo = bound_spec_webnn(spec.minValue, dt, "minValue")
    hi = bound_spec_webnn(spec.maxValue, dt, "maxValue")
    state, reason = order_webnn(lo, hi)
    return Meaning(NAME, OP_VERSION, dt, lo, hi, order=Order.REJECTED, nan_input=NanInput.UNDOCUMENTED,
                   nan_bound=NanBound.UNDOCUMENTED, state=state, reason=reason, rules=RULES_SPEC,
                   readings=tuple(f"{k}: {v}" for k, v in READINGS.items()), engine_notes=engine_notes_webnn(spec, dt))


def engine_notes_webnn(spec: WebNNSpec, dt: DType) -> tuple[EngineNote, ...]:
    """Chromium's reported behaviours (webnn#874) that apply to this clamp, on the meaning of either reading."""
    nan_given = any(v is not None and exact.is_nan(exact.to_double(v)) for v in (spec.minValue, spec.maxValue))
    return ((NOTE_NAN_INPUT,) if dt.is_float else ()) + ((NOTE_OLD_NAN_BOUND,) if nan_given else ())


def meaning_chromium_webnn(spec: WebNNSpec) -> Meaning:
    """The Chromium reading's meaning."""
    dt = data_type_webnn(spec.dataType)
    lo = bound_chromium(spec.minValue, dt, "minValue")
    hi = bound_chromium(spec.maxValue, dt, "maxValue")
    state, reason = order_webnn(lo, hi)
    notes = engine_notes_webnn(spec, dt)
    return Meaning(NAME, OP_VERSION, dt, lo, hi, order=Order.REJECTED, nan_input=NanInput.UNDOCUMENTED,
                   nan_bound=NanBound.IGNORE, state=state, reason=reason, rules=RULES_CHROMIUM,
                   readings=tuple(f"{k}: {v}" for k, v in READINGS.items()), engine_notes=notes)


def resolve(spec: WebNNSpec) -> Meaning:
    """The spec reading's meaning, with the Chromium reading's kept in `alternates`."""
    return evolve(meaning_spec_webnn(spec), alternates=((CHROMIUM, meaning_chromium_webnn(spec)),))


def normalize(spec: WebNNSpec) -> dict:
    out = spec_json(spec)
    out["dataType"] = spec.dataType.strip().lower()
    return out


resolve_source = source_resolver(NAME, resolve, normalize)
