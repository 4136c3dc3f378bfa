"""Numbers on the wire: JSON numbers or strings ("nan", "inf", big integers, hex floats), written back losslessly."""

from __future__ import annotations

import math
import re

from app.errors import SpecError

Number = int | float
# Beyond 2**53 a JSON number read by JavaScript loses integer precision.
JSON_SAFE_INT = 2**53
MAX_NUMBER_STRING = 400
_INT_RE = re.compile(r"[+-]?\d+")
_SPECIAL = {"nan": math.nan, "+nan": math.nan, "-nan": math.nan, "inf": math.inf, "+inf": math.inf,
            "-inf": -math.inf, "infinity": math.inf, "+infinity": math.inf, "-infinity": -math.inf}


def parse_number(value: object, loc: str | None = None) -> Number:
    """A wire value as an exact Python int (integers) or float (everything else)."""
    if isinstance(value, bool):
        raise SpecError(f"Expected a number, got a boolean: {value!r}", loc)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value
    if isinstance(value, str):
        text = value.strip()
        if len(text) > MAX_NUMBER_STRING:
            raise SpecError(f"Number string is {len(text)} characters; at most {MAX_NUMBER_STRING} are accepted", loc)
        low = text.lower()
        if low in _SPECIAL:
            return _SPECIAL[low]
        if _INT_RE.fullmatch(text):
            return int(text)
        try:
            if "0x" in low:
                return float.fromhex(text)
            result = float(text)
        except OverflowError:  # a hex literal beyond double range: +-inf, as float("1e999") and C's strtod give
            return -math.inf if text.startswith("-") else math.inf
        except ValueError:
            raise SpecError(f"Not a number: {value[:40]!r}. Use a JSON number or a string such as "
                            "'nan', '-inf', '9223372036854775807', '0x1.8p+1'", loc) from None
        return result
    raise SpecError(f"Expected a number or a numeric string, got {type(value).__name__}", loc)


def to_double(value: Number) -> float:
    """The double nearest `value` (Python rounds ints correctly), overflowing to +-inf like a C conversion."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def wire_number(value: Number | None) -> int | float | str | None:
    """A value as JSON: a number where it round-trips exactly, else a string."""
    if value is None:
        return None
    if isinstance(value, int):
        return value if abs(value) <= JSON_SAFE_INT else str(value)
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
    return str(value)
