"""One bound on how deeply any JSON (or .npy header) the service parses may nest, checked before parsing.

Python's json decoder recurses per level: thousands of '[' raise RecursionError (a 500 where it escaped), and
whatever reads the result next (pydantic, NumPy, our own walks) pays per level too. No request needs more
than a tensor's rank plus a few wrapping objects, so MAX_JSON_DEPTH is far above that and far below any
recursion limit. The check runs in C-speed passes: strings are cut out, everything but brackets is dropped,
then each pass removes the innermost bracket pairs; text still holding pairs after MAX_JSON_DEPTH passes
nests deeper than that.
"""

from __future__ import annotations

import re

MAX_JSON_DEPTH = 64  # NumPy arrays have at most 64 dimensions; a spec wraps a tensor in a few objects
_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_PY_STRINGS = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"", re.S)  # a Python literal's strings
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")
_PY_NOT_BRACKETS = re.compile(r"[^\[\](){}]+")
_PAIRS = re.compile(r"\[\]|\{\}")  # one pass removes one level: pairs it uncovers wait for the next pass
_PY_PAIRS = re.compile(r"\(\)|\[\]|\{\}")


def too_deep(text: str | bytes, limit: int = MAX_JSON_DEPTH, python: bool = False) -> bool:
    """True when `text` nests more than `limit` levels of brackets outside strings. `python`: a Python
    literal (a .npy header: single-quoted strings, tuples). Malformed bracketing counts as deep as it looks."""
    if isinstance(text, bytes):
        text = text.decode("latin-1")  # brackets and quotes are ASCII: any byte maps to one character
    openers = "([{" if python else "[{"
    if sum(text.count(c) for c in openers) <= limit:
        return False
    text = (_PY_STRINGS if python else _STRINGS).sub("", text)
    text = (_PY_NOT_BRACKETS if python else _NOT_BRACKETS).sub("", text)
    pairs = _PY_PAIRS if python else _PAIRS
    for _ in range(limit):
        before = len(text)
        text = pairs.sub("", text)
        if not text:
            return False
        if len(text) == before:  # mismatched brackets: no pair left to remove; judge by the openers in a row
            return max((len(run) for run in re.findall(r"[(\[{]+", text)), default=0) > limit
    return bool(re.search(r"[(\[{]", text))  # an opener left after `limit` levels were removed
