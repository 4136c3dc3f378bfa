"""Error messages a newcomer can act on: "<rule>. Got: <value>", the accepted values, a "did you mean"."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

MAX_SHOWN = 60  # characters of a rejected value echoed back (a 10 MB string stays out of the message)


def shown(value: Any) -> str:
    """A rejected value as the user wrote it, quoted when it is a string, cut to MAX_SHOWN characters."""
    text = repr(value) if isinstance(value, str) else _json_like(value)
    return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + "..."


def _json_like(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return str(value)


def did_you_mean(value: Any, choices: Iterable[str]) -> str | None:
    """The nearest choice to a near miss (case-insensitive), or None."""
    if not isinstance(value, str):
        return None
    options = list(choices)
    folded = {c.lower(): c for c in options}
    if value.lower() in folded and folded[value.lower()] != value:
        return folded[value.lower()]
    near = difflib.get_close_matches(value.lower(), list(folded), n=1, cutoff=0.6)
    return folded[near[0]] if near else None


def one_of(rule: str, value: Any, choices: Iterable[str]) -> str:
    """'<rule>. Got: <value>. Expected one of: a, b. Did you mean 'b'?' (the last part for near misses only)."""
    options = list(choices)
    msg = f"{rule}. Got: {shown(value)}. Expected one of: {', '.join(options)}"
    hint = did_you_mean(value, options)
    return msg + (f". Did you mean {hint!r}?" if hint else "")
