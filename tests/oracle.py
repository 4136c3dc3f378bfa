"""An independent oracle for the clip, written from the spec texts in /work/shared/reference/, not from clipbridge code.

It shares no code with `clipbridge.core.evaluate.evaluate()` or the kernels: rounding is exact `Fraction` arithmetic (ties to
even, overflow to infinity as IEEE 754 defines it), values are compared in float64 (every float16, bfloat16 and
float32 value is exact there) or as the integers themselves, and the clip is written as the spec's comparisons
(`np.where(x < lo, lo, ...)`), not as `np.maximum/np.minimum`.

Two entry points:
- `outputs(spec, x, reading)`: what a wire spec of ONNX Clip-6/11/12/13, OpenVINO Clamp-1 or DirectML
  ELEMENT_WISE_CLIP / CLIP1 computes on `x`, derived from the spec text alone (bound types, defaults, casts,
  min > max, NaN). `Refused` when the text makes the spec invalid.
- `tests.oracle_meaning.expected(m, x)`: what a `Meaning`'s declared fields (bounds, order, NaN rules,
  ScaleBias, promotion, per-element bounds) compute, for the kernel tests; the fields are read, never evaluated by
  the app.

Where a text is silent the oracle takes the project's documented decision, each named in its function's docstring.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import ml_dtypes
import numpy as np

NP = {"float16": np.dtype(np.float16), "bfloat16": np.dtype(ml_dtypes.bfloat16), "float32": np.dtype(np.float32),
      "float64": np.dtype(np.float64), "int8": np.dtype(np.int8), "uint8": np.dtype(np.uint8),
      "int16": np.dtype(np.int16), "uint16": np.dtype(np.uint16), "int32": np.dtype(np.int32),
      "uint32": np.dtype(np.uint32), "int64": np.dtype(np.int64), "uint64": np.dtype(np.uint64)}
# (explicit mantissa bits, smallest normal exponent, largest exponent) of each IEEE-style float format.
FORMAT = {"float16": (10, -14, 15), "bfloat16": (7, -126, 127), "float32": (23, -126, 127),
          "float64": (52, -1022, 1023)}
ONNX_TYPES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64", 10: "float16",
              11: "float64", 12: "uint32", 13: "uint64", 16: "bfloat16"}
ONNX_NAMES = {"FLOAT": "float32", "UINT8": "uint8", "INT8": "int8", "UINT16": "uint16", "INT16": "int16",
              "INT32": "int32", "INT64": "int64", "FLOAT16": "float16", "DOUBLE": "float64", "UINT32": "uint32",
              "UINT64": "uint64", "BFLOAT16": "bfloat16"}
OV_TYPES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64", "i8": "int8", "u8": "uint8",
            "i16": "int16", "u16": "uint16", "i32": "int32", "u32": "uint32", "i64": "int64", "u64": "uint64"}
DML_TYPES = {"FLOAT16": "float16", "FLOAT32": "float32", "INT8": "int8", "UINT8": "uint8", "INT16": "int16",
             "UINT16": "uint16", "INT32": "int32", "UINT32": "uint32", "INT64": "int64", "UINT64": "uint64"}
CURRENT, OLD_2022 = "current", "2022"  # DirectML CLIP's two documented formulas (see `outputs`)


class Refused(Exception):
    """The spec text makes this clip invalid (a type it does not take, min > max where that is an error, ...)."""


def number(v: Any) -> Any:
    """A wire number: JSON numbers as they are; "inf", "-inf", "nan" and decimal-integer strings read."""
    if not isinstance(v, str):
        return v
    low = v.strip().lower()
    if low in ("inf", "+inf", "infinity", "+infinity", "-inf", "-infinity", "nan"):
        return float(low)
    try:
        return int(low)
    except ValueError:
        return float(low)


def is_float(t: str) -> bool:
    return t in FORMAT


def int_range(t: str) -> tuple[int, int]:
    bits = NP[t].itemsize * 8
    return (0, 2**bits - 1) if t.startswith("u") else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)


def largest(t: str) -> float:
    """The largest finite value of float format t: (2 - 2^-m) * 2^emax."""
    m, _, emax = FORMAT[t]
    return float((2 - Fraction(1, 2**m)) * Fraction(2) ** emax)


def round_float(v: float | int | Fraction, t: str) -> float:
    """v rounded to float format t: nearest, ties to even, beyond the largest finite (by half an ulp) to inf."""
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return v
    q = Fraction(v)
    if q == 0:
        return math.copysign(0.0, v) if isinstance(v, float) else 0.0
    m, emin, emax = FORMAT[t]
    a = abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    ulp = Fraction(2) ** (max(e, emin) - m)
    r = round(a / ulp) * ulp  # Fraction.__round__ rounds half to even
    out = math.inf if r >= Fraction(2) ** (emax + 1) else float(r)
    return out if q > 0 else -out


def all_values(t: str) -> np.ndarray:
    """Every bit pattern of an 8- or 16-bit type, as that type."""
    bits = NP[t].itemsize * 8
    return np.arange(2**bits, dtype=np.uint32).astype(f"u{bits // 8}").view(NP[t])


# --- the clip as the specs write it -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Clip:
    """A clip reduced to what every text here states: bounds as values of the output type, and its rules."""

    out: str
    lo: Any  # a value of `out` (Python int or float), or an array of them (per-element)
    hi: Any
    max_wins: bool = True  # min > max gives max (ONNX-13 text, OpenVINO's formula); else min
    nan_bound: str = "propagate"  # "propagate" | "ignore" | "zero"
    nan_input: str = "propagate"  # "propagate" | "to-lower" | "to-zero" | "to-upper"


def clip_values(c: Clip, v: np.ndarray) -> np.ndarray:
    """The clip of `v` (float64 for float types, the integers themselves otherwise), returned in c.out."""
    lo, hi = np.asarray(c.lo, dtype=v.dtype), np.asarray(c.hi, dtype=v.dtype)
    if is_float(c.out):
        lo_nan, hi_nan = np.isnan(lo), np.isnan(hi)
        if c.nan_bound == "ignore":
            lo, hi = np.where(lo_nan, -np.inf, lo), np.where(hi_nan, np.inf, hi)
        elif c.nan_bound == "zero":
            lo, hi = np.where(lo_nan, 0.0, lo), np.where(hi_nan, 0.0, hi)
        fill = {"to-lower": lo, "to-upper": hi, "to-zero": np.zeros_like(v)}.get(c.nan_input)
        if fill is not None:
            v = np.where(np.isnan(v), fill, v)
    crossed = lo > hi
    win = hi if c.max_wins else lo
    y = np.where(v < lo, lo, np.where(v > hi, hi, v))
    y = np.where(crossed & ~_isnan(v), win, y)
    if is_float(c.out):  # a NaN bound that is still NaN: every output NaN (propagate)
        y = np.where(np.isnan(lo) | np.isnan(hi), np.nan, y)
    return np.asarray(y).astype(NP[c.out])


def _isnan(v: np.ndarray) -> np.ndarray:
    return np.isnan(v) if v.dtype.kind == "f" else np.zeros(v.shape, bool)


def widen(x: np.ndarray, t: str) -> np.ndarray:
    """x as exact comparable values: float64 for floats, int64/uint64 for integers."""
    if is_float(t):
        return np.asarray(x).astype(np.float64)
    return np.asarray(x).astype(np.uint64 if t.startswith("u") else np.int64)


# --- ONNX Clip (onnx-clip.txt) -----------------------------------------------------------------------------------

def onnx_clip(spec: dict) -> Clip:
    """Clip-6: FLOAT attributes (default -/+3.402823e+38) cast to T; Clip-11+: scalar inputs of type T, default
    numeric_limits<T>::lowest()/max(); Clip-13 adds bfloat16 and 'min > max sets all values to max'.

    Silent points and the project's decisions: a number written into a T tensor rounds once to T (floats) or
    must be one of T's values (integers); min > max before Clip-13 is read as Clip-13 states it; a NaN bound
    propagates (the formula Min(max, Max(input, min)), as onnx.reference computes it)."""
    opset, elem = spec["opset"], spec["elem_type"]
    spec = {**spec, "min": number(spec.get("min")), "max": number(spec.get("max"))}
    t = ONNX_NAMES.get(elem, elem) if isinstance(elem, str) else ONNX_TYPES[elem]
    since = 13 if opset >= 13 else 12 if opset >= 12 else 11 if opset >= 11 else 6 if opset >= 6 else 1
    takes = {6: FORMAT.keys() - {"bfloat16"}, 11: FORMAT.keys() - {"bfloat16"},
             12: NP.keys() - {"bfloat16"}, 13: NP.keys()}.get(since, ())
    if t not in takes:
        raise Refused(f"Clip-{since} does not take {t}")
    if since == 6:
        flt_max = largest("float32")  # '(3.402823e+38)' is FLT_MAX printed with 7 digits
        lo = round_float(round_float(-flt_max if spec.get("min") is None else spec["min"], "float32"), t)
        hi = round_float(round_float(flt_max if spec.get("max") is None else spec["max"], "float32"), t)
        return Clip(t, lo, hi)
    lo = lowest_of(t) if spec.get("min") is None else value_of(spec["min"], t)
    hi = highest_of(t) if spec.get("max") is None else value_of(spec["max"], t)
    return Clip(t, lo, hi)


def lowest_of(t: str) -> float | int:
    return -largest(t) if is_float(t) else int_range(t)[0]


def highest_of(t: str) -> float | int:
    return largest(t) if is_float(t) else int_range(t)[1]


def value_of(v: float | int, t: str) -> float | int:
    """A number written into a tensor of type t: floats round once; integers must be exactly one of t's values."""
    if is_float(t):
        return round_float(v, t)
    if isinstance(v, float) and not v.is_integer():
        raise Refused(f"{v!r} is not an {t} value")
    lo, hi = int_range(t)
    if not lo <= int(v) <= hi:
        raise Refused(f"{v!r} is outside {t}")
    return int(v)


# --- OpenVINO Clamp-1 (openvino-clamp-1.rst) ---------------------------------------------------------------------

def openvino_clip(spec: dict) -> Clip:
    """Clamp-1: min(max(x, min), max) with float attributes; integral T: ceil(min), floor(max).

    Silent points and the project's decisions (design notes: OpenVINO's validation): min > max or a NaN
    attribute is refused; the integral ceil/floor saturate to T's range; a floating T takes one rounding of
    the attribute (a double) to T."""
    t = OV_TYPES[spec["element_type"]]
    a, b = (round_float(number(spec[k]), "float64") for k in ("min", "max"))  # double attributes
    if math.isnan(a) or math.isnan(b) or a > b:
        raise Refused("Clamp-1 requires min <= max")
    if is_float(t):
        return Clip(t, round_float(a, t), round_float(b, t))
    lo_t, hi_t = int_range(t)
    sat = lambda n: min(max(n, lo_t), hi_t)  # noqa: E731
    lo = lo_t if a == -math.inf else hi_t if a == math.inf else sat(math.ceil(Fraction(a)))
    hi = lo_t if b == -math.inf else hi_t if b == math.inf else sat(math.floor(Fraction(b)))
    return Clip(t, lo, hi)  # ceil/floor may cross them: the formula then gives max


# --- DirectML (directml-clip-operator-desc*.md/txt) --------------------------------------------------------------

def directml_clip(spec: dict, reading: str = CURRENT) -> Clip:
    """CLIP: FLOAT Min/Max 'cast to the tensor data type (integers: truncating toward zero; floats: nearest even)';
    CLIP1: Min/Max are values of MinMaxDataType. The current page writes max(Min, min(x, Max)) (min > max gives
    Min), the 2022 page min(Max, max(Min, x)) (gives Max): `reading` picks one; CLIP1 is read as the current page.

    Silent points and the project's decisions: out-of-range casts saturate; NaN input and NaN bounds are not
    documented and are executed as propagating a NaN input and ignoring a NaN bound."""
    d = {**spec["desc"], "Min": number(spec["desc"]["Min"]), "Max": number(spec["desc"]["Max"])}
    t = DML_TYPES[d["InputTensor"]["DataType"]]
    if spec["operator"].endswith("CLIP1"):
        lo, hi = value_of(d["Min"], t), value_of(d["Max"], t)
        if is_float(t) and ((lo != d["Min"] and not math.isnan(lo)) or (hi != d["Max"] and not math.isnan(hi))):
            raise Refused("CLIP1 Min/Max must be values of MinMaxDataType")
        max_wins = False
    else:
        lo, hi = (_dml_cast(round_float(v, "float32"), t) for v in (d["Min"], d["Max"]))
        max_wins = reading == OLD_2022
    return Clip(t, lo, hi, max_wins=max_wins, nan_bound="ignore")


def _dml_cast(f: float, t: str) -> float | int:
    if is_float(t):
        return round_float(f, t)
    lo, hi = int_range(t)
    if math.isnan(f):
        return 0
    if math.isinf(f):
        return lo if f < 0 else hi
    return min(max(math.trunc(f), lo), hi)


def clip_of(spec: dict, reading: str = CURRENT) -> Clip:
    """The Clip a wire spec states."""
    dialect = spec["dialect"]
    if dialect == "onnx":
        return onnx_clip(spec)
    if dialect == "openvino":
        return openvino_clip(spec)
    if dialect == "directml":
        return directml_clip(spec, reading)
    raise NotImplementedError(dialect)


def nan_input_undocumented(spec: dict) -> bool:
    """DirectML documents no NaN behaviour; ONNX's and OpenVINO's formulas propagate a NaN input."""
    return spec["dialect"] == "directml"


def outputs(spec: dict, x: np.ndarray, reading: str = CURRENT) -> np.ndarray:
    """What `spec` computes on every element of x (an array of its type)."""
    c = clip_of(spec, reading)
    return clip_values(c, widen(x, c.out))


def same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise equal values, NaN equal to NaN, -0 equal to +0 (the sign of a zero is no clip semantic)."""
    af, bf = np.asarray(a), np.asarray(b)
    if af.dtype.kind in "iu" and bf.dtype.kind in "iu":
        return af == bf
    af, bf = af.astype(np.float64), bf.astype(np.float64)
    return (af == bf) | (np.isnan(af) & np.isnan(bf))
