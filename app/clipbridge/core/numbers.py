"""Numbers on the wire: JSON numbers or strings ("nan", "inf", big integers, hex floats), written back losslessly."""

from __future__ import annotations

import math
import re
from fractions import Fraction

from clipbridge.core.errors import SpecError
from clipbridge.core.exact import Number, exact_text, normalize, parse_exact_text, to_double

__all__ = ["Number", "JSON_SAFE_INT", "MAX_NUMBER_STRING", "parse_number", "to_double", "wire_number",
           "format_number"]
# Beyond 2**53 a JSON number read by JavaScript loses integer precision.
JSON_SAFE_INT = 2**53
MAX_NUMBER_STRING = 400
_INT_RE = re.compile(r"[+-]?\d+")
_SPECIAL = {"nan": math.nan, "+nan": math.nan, "-nan": math.nan, "inf": math.inf, "+inf": math.inf,
            "-inf": -math.inf, "infinity": math.inf, "+infinity": math.inf, "-infinity": -math.inf}


def parse_number(value: object, loc: str | None = None) -> Number:
    """A wire value, exactly: an int (integers), a float (exactly a double: JSON doubles, 'nan', 'inf', '1.5',
    '0x1.8p+1'), else a Fraction (a decimal or hex string no double holds, such as '0.1' or
    '1.0039062500000000001'). Integer-valued non-integer literals ('1e30') read as ints."""
    if isinstance(value, bool):
        raise SpecError(f"Expected a number, got a boolean: {value!r}", loc)
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, Fraction):
        return normalize(value)
    if isinstance(value, str):
        text = value.strip()
        if len(text) > MAX_NUMBER_STRING:
            raise SpecError(f"Number string is {len(text)} characters; at most {MAX_NUMBER_STRING} are accepted", loc)
        low = text.lower()
        if low in _SPECIAL:
            return _SPECIAL[low]
        if _INT_RE.fullmatch(text):
            return int(text)
        result = parse_exact_text(text)
        if result is None:
            raise SpecError(f"Not a number: {value[:40]!r}. Use a JSON number or a string such as "
                            "'nan', '-inf', '9223372036854775807', '0x1.8p+1'", loc)
        return result
    raise SpecError(f"Expected a number or a numeric string, got {type(value).__name__}", loc)


def wire_number(value: Number | None) -> int | float | str | None:
    """A value as JSON: a number where it round-trips exactly, else a string."""
    cls = value.__class__
    if cls is float:  # the common case first: one class test instead of three isinstance checks
        if value != value:
            return "nan"
        return value if -math.inf < value < math.inf else ("inf" if value > 0 else "-inf")
    if value is None:
        return None
    if isinstance(value, int):
        if abs(value) <= JSON_SAFE_INT:
            return value
        text = str(value)
        if len(text) > MAX_NUMBER_STRING:  # read from an exponent or hex literal: written back as one
            digits = text.rstrip("0")
            sign = "-" if value < 0 else ""
            text = min(f"{digits}e{len(text) - len(digits)}", f"{sign}0x{abs(value):x}", key=len)
        return text
    if isinstance(value, Fraction):
        return exact_text(value)  # no double holds it: the exact value as a string
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def format_number(value: Number | None) -> str:
    """A value for messages: integers exactly, floats by their shortest round-trip repr."""
    if value is None:
        return "none"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)  # the shortest string that reads back as the same double
    if isinstance(value, Fraction):
        return exact_text(value)
    return str(value)


def same_value(a: Number | None, b: Number | None) -> bool:
    """Exact equality of two bound values, NaN equal to NaN."""
    if a is None or b is None:
        return a is b
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b
