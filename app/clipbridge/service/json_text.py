"""The translate response's JSON text: json.dumps(obj, allow_nan=False, separators=(",", ":")) byte for byte,
written by pydantic_core's encoder (about 4x faster) wherever the two agree, else by json.dumps itself.

For dicts with string keys, lists, tuples, strings, ints, bools, None and floats the two write the same bytes
(tests/test_json_text.py), except in three cases, each detected here on the encoder's output:
- a non-ASCII character or DEL: json.dumps escapes it (\\u00e9), pydantic_core writes it raw;
- a float below 1e-4 in magnitude: json.dumps writes 1e-05 and 1e-07, pydantic_core 0.00001 and 1e-7;
- NaN and the infinities: json.dumps refuses them (allow_nan=False); pydantic_core is told to write them as
  the strings "NaN", "Infinity", "-Infinity", so any such string sends the text to json.dumps.
A number token starts right after a `:`, a `,` or a `[` (or its `-` sign), so a small float is found by the
few places its text (`e-<digit>`, `0.0000`) occurs at all. Where one of them might be a token, or in the other
cases, the text is json.dumps' own: a string that merely looks like one (a message "x:1e-7") costs the fast
path, never a byte.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic_core import PydanticSerializationError, to_json

_EXPONENT = re.compile(rb"e-\d")  # a literal prefix: found by a fast search, not tried at every byte
_TOKEN_START = b":,["
_MANTISSA = frozenset(b"0123456789.")


def reference(obj: Any) -> str:
    """The text every response has always been: compact, ASCII, no NaN."""
    return json.dumps(obj, allow_nan=False, separators=(",", ":"))


def dumps(obj: Any) -> str:
    """reference(obj), byte for byte (and its ValueError for a NaN), computed faster where it can be."""
    try:
        raw = to_json(obj, inf_nan_mode="strings")
    except (PydanticSerializationError, TypeError, ValueError, OverflowError):
        return reference(obj)  # a type pydantic_core refuses (json.dumps may refuse it too, with its own error)
    if not raw.isascii() or b"\x7f" in raw or _may_differ(raw):
        return reference(obj)
    return raw.decode("ascii")


def _starts_token(raw: bytes, i: int) -> bool:
    """Whether the text at `i` may begin a number token: at the start, after `:`, `,` or `[`, or after a `-`
    there."""
    if i > 0 and raw[i - 1] == 0x2D:  # "-"
        i -= 1
    return i == 0 or raw[i - 1] in _TOKEN_START


def _may_differ(raw: bytes) -> bool:
    """Whether `raw` may hold a small float (1e-7, 0.00001) or a non-finite one, which the encoder wrote as the
    string "NaN", "Infinity" or "-Infinity" (inf_nan_mode="strings"; see the module docstring)."""
    if b'"NaN"' in raw or b'Infinity"' in raw:  # or a string that is just that: json.dumps then, harmlessly
        return True
    for m in _EXPONENT.finditer(raw):
        i = m.start()
        while i > 0 and raw[i - 1] in _MANTISSA:
            i -= 1
        if i < m.start() and _starts_token(raw, i):
            return True
    i = raw.find(b"0.0000")
    while i >= 0:
        if _starts_token(raw, i):
            return True
        i = raw.find(b"0.0000", i + 1)
    return False
