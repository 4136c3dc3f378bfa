"""Exact numbers, and every conversion of one to a target type: one correctly rounded step from the exact value.

A number reaches clipbridge as an exact integer (JSON integer, decimal integer string), a JSON double, a
decimal string or a hex float string. Strings are read exactly (never through a double first) and kept as
`Number`: `int` for integers, `float` when the value is exactly a double, else a `Fraction`. Each conversion
to float16, bfloat16, float32 or float64 rounds that exact value once: to nearest, ties to even, with IEEE
overflow (a value at or beyond the midpoint between the largest finite value and the next power of two becomes
inf; below it, the largest finite value) and gradual underflow (subnormals). Integer conversions (ceil, floor,
trunc) are exact too. A dialect that really rounds twice does so by calling two of these steps in a named rule
of its own module (ONNX Clip-1/6 FLOAT attributes, DirectML CLIP's FLOAT Min/Max, OpenVINO's double attributes).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import ml_dtypes
import numpy as np

Number = int | float | Fraction

# A string whose magnitude is beyond 10^+-400 reads as its double (+-inf, +-0): every float type rounds the
# exact value the same way (past 2^1024, below half of 2^-1074), and parsing stays cheap for hostile exponents.
_DECIMAL_EXP_LIMIT = 400
_HEX_EXP_LIMIT = 1400
_DECIMAL_RE = re.compile(r"([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?")
_HEX_RE = re.compile(r"([+-]?)0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?(?:[pP]([+-]?\d+))?")


@dataclass(frozen=True)
class FloatFormat:
    """An IEEE-754 binary format: `precision` significand bits (implicit bit included), exponents to `emax`."""

    name: str
    precision: int
    emax: int

    @property
    def emin(self) -> int:
        return 1 - self.emax

    @property
    def max_finite(self) -> float:
        return math.ldexp(2**self.precision - 1, self.emax - self.precision + 1)


FLOAT16 = FloatFormat("float16", 11, 15)
BFLOAT16 = FloatFormat("bfloat16", 8, 127)
FLOAT32 = FloatFormat("float32", 24, 127)
FLOAT64 = FloatFormat("float64", 53, 1023)
FORMATS = {f.name: f for f in (FLOAT16, BFLOAT16, FLOAT32, FLOAT64)}


def is_nan(value: Number) -> bool:
    return isinstance(value, float) and math.isnan(value)


def is_inf(value: Number) -> bool:
    return isinstance(value, float) and math.isinf(value)


def is_integral(value: Number) -> bool:
    """True when the exact value is a (finite) integer."""
    if isinstance(value, int):
        return True
    if isinstance(value, float):
        return math.isfinite(value) and value.is_integer()
    return value.denominator == 1


def round_to_format(value: Number, fmt: FloatFormat) -> float:
    """IEEE conversion of the exact `value` to `fmt`: nearest, ties to even, overflow to inf, subnormals kept."""
    if isinstance(value, float):
        if not math.isfinite(value) or value == 0.0 or fmt is FLOAT64:
            return value
        fast = _from_double(value, fmt)
        if fast is not None:
            return fast
    exact = Fraction(value)
    if exact == 0:
        return 0.0
    negative = exact < 0
    n, d = abs(exact.numerator), exact.denominator
    e = n.bit_length() - d.bit_length()  # floor(log2(n/d)) is e or e - 1
    if (n << max(0, -e)) < (d << max(0, e)):
        e -= 1
    q = max(e, fmt.emin) - (fmt.precision - 1)  # the quantum's exponent at this magnitude (fixed below emin)
    num, den = (n, d << q) if q >= 0 else (n << -q, d)
    m, r = divmod(num, den)
    if 2 * r > den or (2 * r == den and m & 1):
        m += 1
    if m.bit_length() + q > fmt.emax + 1:  # m * 2^q >= 2^(emax+1): beyond the overflow midpoint
        out = math.inf
    else:
        out = math.ldexp(m, q)  # exact: every value of these formats is a double
    return -out if negative else out


_NP_DIRECT = {"float32": np.float32, "float16": np.float16}  # NumPy converts a double to these in one rounding
_BF16 = np.dtype(ml_dtypes.bfloat16)


def _overflow_midpoint(fmt: FloatFormat) -> float:
    """Halfway between the largest finite value and 2^(emax+1): a double for the formats below float64."""
    return math.ldexp(2 ** (fmt.precision + 1) - 1, fmt.emax - fmt.precision)


_MIDPOINTS = {name: _overflow_midpoint(f) for name, f in FORMATS.items() if f is not FLOAT64}


def _from_double(value: float, fmt: FloatFormat) -> float | None:
    """The fast path for a finite double: NumPy's direct conversion; bfloat16 only from a double float32 holds
    exactly (float32 -> bfloat16 rounds once). None: take the exact path."""
    if abs(value) >= _MIDPOINTS[fmt.name]:
        return math.copysign(math.inf, value)
    if fmt.name in _NP_DIRECT:
        return float(_NP_DIRECT[fmt.name](value))
    f32 = np.float32(value)
    if float(f32) == value:
        return float(np.asarray(f32).astype(_BF16))
    return None


def to_double(value: Number) -> float:
    """The double nearest the exact value (a JSON double or a double attribute)."""
    return round_to_format(value, FLOAT64)


def to_float32(value: Number) -> float:
    """The float32 nearest the exact value (a C `float` field or a protobuf FLOAT attribute)."""
    return round_to_format(value, FLOAT32)


def ceil_exact(value: Number) -> int:
    return math.ceil(value)  # exact for int, float and Fraction alike


def floor_exact(value: Number) -> int:
    return math.floor(value)


def trunc_exact(value: Number) -> int:
    return math.trunc(value)


def round_half_even_exact(value: Number) -> int:
    """The integer nearest the exact value, the even one when it lies halfway (IEEE roundTiesToEven)."""
    return round(Fraction(value))  # Fraction.__round__ is exact and rounds halves to even


def compare_key(value: Number) -> Fraction | float:
    """A key that orders exact values exactly (ints, doubles, Fractions, +-inf); NaN stays NaN."""
    if isinstance(value, float) and not math.isfinite(value):
        return value
    return Fraction(value)


def distance(a: Number, b: Number) -> Fraction | float:
    """|a - b| computed exactly; inf when either is non-finite and they differ."""
    if isinstance(a, float) and not math.isfinite(a) or isinstance(b, float) and not math.isfinite(b):
        return 0 if a == b else math.inf
    return abs(Fraction(a) - Fraction(b))


def normalize(value: Fraction) -> Number:
    """The plainest exact form: a float if the value is exactly a double, else an int if integral, else itself."""
    d = to_double(value)
    if math.isfinite(d) and Fraction(d) == value:
        return d
    if value.denominator == 1:
        return int(value)
    return value


def parse_exact_text(text: str) -> Number | None:
    """A decimal or hex float literal read exactly (None when it is neither). `text` is stripped, <= 400 chars."""
    m = _DECIMAL_RE.fullmatch(text)
    if m and (m.group(2) or m.group(3)):
        sign, whole, frac, exp = m.group(1), m.group(2), m.group(3) or "", m.group(4)
        digits = int(whole + frac or "0")
        e10 = int(exp or "0") - len(frac)
        return _signed(sign == "-", digits, 10, e10, len(str(digits)), _DECIMAL_EXP_LIMIT)
    m = _HEX_RE.fullmatch(text)
    if m and (m.group(2) or m.group(3)):
        sign, whole, frac, exp = m.group(1), m.group(2), m.group(3) or "", m.group(4)
        digits = int(whole + frac or "0", 16)
        e2 = int(exp or "0") - 4 * len(frac)
        return _signed(sign == "-", digits, 2, e2, digits.bit_length(), _HEX_EXP_LIMIT)
    return None


def _signed(negative: bool, digits: int, base: int, exp: int, size: int, limit: int) -> Number:
    """digits * base^exp with a sign, exact within 10^+-400 (2^+-1400 for hex), else its double (+-inf, +-0)."""
    if digits == 0:
        return -0.0 if negative else 0.0
    if size + exp > limit:
        return -math.inf if negative else math.inf
    if size + exp < -limit:
        return -0.0 if negative else 0.0
    value = Fraction(digits * base**exp) if exp >= 0 else Fraction(digits, base**-exp)
    return normalize(-value if negative else value)


def exact_text(value: Fraction) -> str:
    """A string that parse_exact_text reads back as exactly `value`: plain decimal when short, else decimal with
    an exponent, else a hex float (every value a wire string can carry has one of them within 400 characters)."""
    n, d = value.numerator, value.denominator
    sign = "-" if n < 0 else ""
    twos, fives, rest = 0, 0, d
    while rest % 2 == 0:
        rest //= 2
        twos += 1
    while rest % 5 == 0:
        rest //= 5
        fives += 1
    if rest != 1:
        return f"{n}/{d}"  # not a wire value (no string yields it); readable in messages
    k = max(twos, fives)  # n/d = digits / 10^k
    digits = abs(n) * 2 ** (k - twos) * 5 ** (k - fives)
    text = str(digits).rjust(k + 1, "0")
    plain = sign + (text[:-k] + "." + text[-k:] if k else text)
    if len(plain) <= 40:
        return plain
    stripped = str(digits).rstrip("0")
    scientific = f"{sign}{stripped}e{len(str(digits)) - len(stripped) - k}"
    if len(scientific) <= 400 or fives:
        return scientific
    return f"{sign}0x{abs(n):x}p-{twos}"  # dyadic: n / 2^twos


def bits_of(value: float, np_dtype: np.dtype) -> int:
    """The bit pattern of a value that is exactly representable in `np_dtype`."""
    arr = np.asarray(value, dtype=np.float64).astype(np_dtype)
    return int(arr.view(f"uint{np_dtype.itemsize * 8}"))


def doubles_to(arr: np.ndarray, np_dtype: np.dtype) -> np.ndarray:
    """A float64 array converted to a float type, each element rounded once (nearest even).

    NumPy converts float64 to float32 and float16 directly; ml_dtypes converts to bfloat16 through float32,
    which would round twice. So for bfloat16 the float32 step rounds to odd (truncate, then set the last bit
    when inexact): float32 carries 16 more bits than bfloat16 at every exponent, and rounding to odd with two
    or more extra bits makes the second rounding the correct one (Boldo and Melquiond, 2008).
    """
    np_dtype = np.dtype(np_dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        if np_dtype != np.dtype(ml_dtypes.bfloat16):
            return arr.astype(np_dtype)
        f = arr.astype(np.float32)
        back = f.astype(np.float64)
        inexact = (back != arr) & np.isfinite(arr)
        bits = f.view(np.uint32).copy()
        bits[inexact & (np.abs(back) > np.abs(arr))] -= 1  # nearest went away from zero: step back (truncate)
        bits[inexact] |= 1
        return bits.view(np.float32).astype(np_dtype)


def exact_array(values: list[Number], fmt: FloatFormat, np_dtype: np.dtype) -> np.ndarray:
    """Values (ints, doubles, Fractions) as an array of a float type, each rounded once from its exact value."""
    plain = np.empty(len(values), dtype=np.float64)
    for i, v in enumerate(values):
        if type(v) is float or (type(v) is int and -(2**53) <= v <= 2**53):
            plain[i] = v
        else:  # beyond 2^53 or not a double: round exactly to the format, which a double then holds exactly
            plain[i] = round_to_format(v, fmt)
    return doubles_to(plain, np_dtype)


def trunc_saturate(xp: Any, y64: Any, np_dtype: Any, lo: int, hi: int) -> Any:
    """Float64 values to an integer type: truncate toward zero, saturate to [lo, hi], NaN -> 0 (any array API).

    float(hi) of a 64-bit type rounds up to 2^63 or 2^64, so a plain clip-then-cast overflows (2^63 wraps to
    the int64 minimum); values at or past float(hi) are replaced by the exact integer instead.
    """
    zero = xp.asarray(0.0, dtype=xp.float64)
    y = xp.where(xp.isnan(y64), zero, xp.trunc(y64))
    over, under = y >= float(hi), y <= float(lo)
    out = xp.astype(xp.where(over | under, zero, y), np_dtype)
    out = xp.where(over, xp.asarray(hi, dtype=np_dtype), out)
    return xp.where(under, xp.asarray(lo, dtype=np_dtype), out)
