"""Tolerance per output (issue 44, item 4): `--tolerance NAME=RTOL,ATOL` (repeatable; `*` for every output) over
the per-dtype defaults (clipbridge.diff.compare.TOLERANCES), and the tolerance each output was compared with.

Precedence, per final output: its own `--tolerance NAME=...`, else `--tolerance *=...`, else `--rtol`/`--atol`,
else its dtype's default. Internal tensors (the walk) use `--rtol`/`--atol` or the defaults: a tolerance names
what a user accepts of the outputs. The comparison itself is symmetric and NaN-aware (compare.differing).
"""

from __future__ import annotations

import math
from typing import Any

from clipbridge.core.errors import ClipBridgeError
from clipbridge.diff import compare

ALL = "*"


def parse(items: list[str] | tuple[str, ...] | None, loc: str = "--tolerance") -> tuple[tuple[str, float, float], ...]:
    """'NAME=RTOL,ATOL' items -> ((name, rtol, atol), ...), each a finite number >= 0; a name given twice is
    refused (which would win is a guess)."""
    out: dict[str, tuple[float, float]] = {}
    for item in items or ():
        name, eq, pair = item.rpartition("=")
        parts = pair.split(",")
        if not eq or not name or len(parts) != 2:
            raise ClipBridgeError(f"{item[:80]!r} is not NAME=RTOL,ATOL (e.g. logits=1e-3,1e-5, or *=1e-3,1e-5)",
                                  loc)
        try:
            rtol, atol = (float(p) for p in parts)
        except ValueError:
            raise ClipBridgeError(f"{item[:80]!r}: RTOL and ATOL must be numbers", loc) from None
        if not all(math.isfinite(v) and v >= 0 for v in (rtol, atol)):
            raise ClipBridgeError(f"{item[:80]!r}: RTOL and ATOL must be finite numbers >= 0", loc)
        if name in out:
            raise ClipBridgeError(f"a tolerance for {name[:60]!r} is given twice", loc)
        out[name] = (rtol, atol)
    return tuple((k, *v) for k, v in out.items())


def check_names(given: tuple[tuple[str, float, float], ...], outputs: list[str], loc: str = "tolerance") -> None:
    """Refuse a tolerance for a name that is not a final output (a typo would silently change nothing)."""
    unknown = [n for n, _, _ in given if n != ALL and n not in outputs]
    if unknown:
        raise ClipBridgeError(f"tolerance for {unknown[0][:60]!r}, which is not an output (outputs: "
                              f"{', '.join(outputs)[:200]})", loc)


def for_tensor(opts: Any, tensor: str, outputs: list[str]) -> tuple[float | None, float | None]:
    """(rtol, atol) to compare `tensor` with: an output's own, else '*', else --rtol/--atol (None: per dtype)."""
    if tensor in outputs:
        own = {n: (r, a) for n, r, a in getattr(opts, "tolerances", ())}
        if tensor in own:
            return own[tensor]
        if ALL in own:
            return own[ALL]
    return opts.rtol, opts.atol


def used(opts: Any, tensor: str, outputs: list[str], dtype: str) -> dict[str, Any]:
    """The tolerance an output was compared with, and where it came from (the report names it per output)."""
    own = {n for n, _, _ in getattr(opts, "tolerances", ())}
    rtol, atol = compare.tolerance(dtype, *for_tensor(opts, tensor, outputs))
    source = (f"--tolerance {tensor}" if tensor in own else f"--tolerance {ALL}" if ALL in own
              else "--rtol/--atol" if (opts.rtol, opts.atol) != (None, None) else f"default ({dtype})")
    return {"rtol": rtol, "atol": atol, "source": source}
