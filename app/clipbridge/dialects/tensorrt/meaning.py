"""TensorRT `IActivationLayer` with `ActivationType::kCLIP` (NVIDIA/TensorRT include/NvInfer.h): the meaning.

NvInfer.h: `kCLIP = 8, //!< Clip activation: max(alpha, min(beta, x))`. alpha and beta are the layer's `float`
attributes (setAlpha/setBeta), so min > max gives alpha (the lower bound wins, the opposite of ONNX Clip-13).
The header says nothing about NaN. NVIDIA/TensorRT#4773 reports TensorRT 10.16 replacing a NaN input with the
lower bound: a report, not a document. Two readings (Dialect.readings; the first is the default):
  header (default): only the documented formula; NaN input undocumented (executed as propagate), the report kept
      as an engine note. The default is the specification, as it is for every dialect (issue 37: one answer per
      question about NaN); what an engine was observed to do is a reading one asks for.
  observed: a NaN input gives alpha (NanInput.TO_LOWER), TensorRT's engine as reported; Dialect.engine_reading,
      so `basis: engine` on /v1/execute and /v1/compare runs it, and its outputs say `shows: observed-engine`.
The resolved Meaning is the header reading's; `Meaning.alternates` holds ("observed", its meaning), so
/v1/execute and /v1/compare take `"reading": "observed"` and translations report drift under the observed
reading with `reading: "observed"` on the finding and its witness.
The spec field `reading` (kept for specs written before the request-level one) pins which reading is that
meaning's own: `"reading": "observed"` resolves to the observed meaning (its `reading` says so, and translate's
`meaning.shows`), with the header one in `alternates`; a request's `reading` still chooses either.
No TensorRT engine runs here (it needs an NVIDIA GPU and the TensorRT wheel); nothing here was executed on it.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

from clipbridge.core import exact
from clipbridge.dialects.kit.base import source_resolver
from clipbridge.dialects.kit.common import cached_cast
from clipbridge.dialects.kit.spec_base import spec_json
from clipbridge.dialects.tensorrt.catalogue import READINGS
from clipbridge.dialects.tensorrt.spec import (ALIASES, DTYPES, HEADER_SRC, ISSUE_SRC, NAME, OP_VERSION, OTHER_SPELLING,
                                        VERSIONS, TensorRtSpec)
from clipbridge.core.dtypes import FLOAT32, DType
from clipbridge.core.errors import SpecError
from clipbridge.core.meaning import Bound, EngineNote, Meaning, NanBound, NanInput, Order, evolve
from clipbridge.core.numbers import Number, format_number
from clipbridge.core.suggest import one_of

NOTE_NAN = EngineNote("TensorRT 10.16", f"A NaN input is replaced by alpha, the lower bound ({ISSUE_SRC}; "
                                        "onnxruntime keeps the NaN). Not documented in NvInfer.h.")


# --- rules ------------------------------------------------------------------------------------------------------

@lru_cache(maxsize=64)  # a pure check of a short string, asked several times per translation
def version_tensorrt(text: str, loc: str = "version") -> str:
    """kCLIP is unchanged across TensorRT 8, 9 and 10: '10', '10.16' and 'v10' name TensorRT 10."""
    major = text.strip().lower().lstrip("v").split(".")[0]
    if major not in VERSIONS:
        raise SpecError(one_of("Unknown TensorRT version", text, VERSIONS), loc)
    return major


def dtype_tensorrt(name: str, loc: str = "dtype") -> DType:
    """The input tensor's DataType: kFLOAT, kHALF or kINT8 (float32, float16, int8)."""
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    if key not in DTYPES:
        msg = one_of("kCLIP is modelled for these TensorRT types (onnx-tensorrt clips INT32/INT64 with "
                     "elementwise kMAX/kMIN and rejects UINT8)", name, DTYPES)
        if key in OTHER_SPELLING and "Did you mean" not in msg:
            msg += f". Did you mean {OTHER_SPELLING[key]!r}?"
        raise SpecError(msg, loc)
    return DTYPES[key]


def reading_tensorrt(text: str, loc: str = "reading") -> str:
    """The spec's own reading of a NaN input: 'header' (default, NvInfer.h only) or 'observed' (#4773); a request's
    `reading` (/v1/execute, /v1/compare) chooses either one at run time."""
    key = text.strip().lower()
    if key not in READINGS:
        raise SpecError(one_of("Unknown TensorRT reading", text, READINGS), loc)
    return key


def float_attribute_tensorrt(value: Number) -> float:
    """setAlpha(float)/setBeta(float): the number becomes a C++ float (one correctly rounded step)."""
    return exact.to_float32(value)


@cached_cast
def bound_tensorrt(value: Number, dt: DType, side: str) -> Bound:
    """The effective bound on the tensor: the float attribute, then the clip's result written in the tensor type.

    max(alpha, min(beta, x)) is computed on float values and the result stored in the tensor's type; that store is
    monotone, so it equals clipping with the stored bound. float16: float -> half, nearest-even (a second rounding;
    overflow to inf). int8: nearest-even to an integer, saturated to [-128, 127] (TensorRT's float -> int8 rule,
    IQuantizeLayer: round to nearest, ties to even) [inferred: not stated for kCLIP]; scale 1 (stored integers)."""
    f = float_attribute_tensorrt(value)
    steps: list[str] = []
    loss = not exact.is_nan(value) and f != value
    if loss:
        steps.append(f"{side} {format_number(value)} as a float attribute: {format_number(f)}")
    if dt.is_float:
        out = dt.round(f) if dt is not FLOAT32 else f
        if dt is not FLOAT32 and not math.isnan(f) and out != f:
            steps.append(f"{side} float {format_number(f)} stored as {dt.name}: {format_number(out)}")
        return Bound(out, value, tuple(steps), precision_loss=bool(steps) and not math.isinf(out),
                     overflow=math.isinf(out) and not math.isinf(f))
    if math.isnan(f):
        raise SpecError(f"{side} is NaN on an int8 tensor: TensorRT does not document it and an int8 value cannot "
                        "hold it", side)
    if math.isinf(f):
        v = dt.lowest() if f < 0 else dt.highest()
        return Bound(v, value, tuple(steps) + (f"{side} {format_number(f)} saturated to {v}",), saturated=True)
    r = _round_half_even(f)
    sat = dt.saturate(r)
    if r != f:
        steps.append(f"{side} {format_number(f)} rounded to nearest-even: {r}")
    if sat != r:
        steps.append(f"{side} {r} saturated to int8: {sat}")
    # The float step matters only when it moves the integer: nearest-even of the exact number differs.
    direct = dt.saturate(round(Fraction(value))) if not exact.is_inf(value) else sat
    return Bound(sat, value, tuple(steps), rounded=r != f, saturated=sat != r, precision_loss=direct != sat)


def _round_half_even(f: float) -> int:
    return round(f)  # Python's round of a float is exact nearest, ties to even


def nan_input_tensorrt(reading: str) -> NanInput:
    """observed: NaN -> alpha (#4773); header: undocumented."""
    return NanInput.TO_LOWER if reading == "observed" else NanInput.UNDOCUMENTED


def meaning_tensorrt(version: str, dt: DType, lo: Bound, hi: Bound, reading: str) -> Meaning:
    """kCLIP under one reading: bounds and order as the header says; the NaN-input rule is the reading's."""
    rules = (f"TensorRT {version} kCLIP: max(alpha, min(beta, x)) ({HEADER_SRC}); alpha > beta gives alpha",
             "alpha and beta are float attributes: a bound rounds to float, then to the tensor type "
             "(float16: nearest-even; int8: nearest-even, saturated [inferred])",
             f"NaN input ({reading} reading): " + READINGS[reading],
             "NaN alpha/beta: undocumented")
    notes = (NOTE_NAN,) if reading == "header" and dt.is_float else ()
    return Meaning(NAME, OP_VERSION, dt, lo, hi, order=Order.MIN_WINS, nan_input=nan_input_tensorrt(reading),
                   nan_bound=NanBound.UNDOCUMENTED, rules=rules, engine_notes=notes,
                   readings=tuple(f"{k}: {v}" for k, v in READINGS.items()))


def resolve(spec: TensorRtSpec) -> Meaning:
    """max(alpha, min(beta, x)): alpha wins when alpha > beta. The meaning is the spec's reading's (header, the
    specification, unless the spec pins observed); the other reading's meaning is kept in `alternates`."""
    version = version_tensorrt(spec.version)
    dt = dtype_tensorrt(spec.dtype)
    own = reading_tensorrt(spec.reading)
    lo = bound_tensorrt(spec.alpha, dt, "alpha")
    hi = bound_tensorrt(spec.beta, dt, "beta")
    default = next(iter(READINGS))
    others = tuple((r, evolve(meaning_tensorrt(version, dt, lo, hi, r), reading=None if r == default else r))
                   for r in READINGS if r != own)
    own_meaning = meaning_tensorrt(version, dt, lo, hi, own)
    return evolve(own_meaning, alternates=others, reading=None if own == default else own)


def normalize(spec: TensorRtSpec) -> dict:
    out = spec_json(spec)
    out["version"] = version_tensorrt(spec.version)
    key = spec.dtype.strip().lower()
    out["dtype"] = ALIASES.get(key, key)
    out["reading"] = reading_tensorrt(spec.reading)
    return out


resolve_source = source_resolver(NAME, resolve, normalize)
