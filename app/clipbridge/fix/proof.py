"""The proof of a fix: the whole-model diff (clipbridge.diff) of the written model on B against the original on A.

The diff is given two sides (clipbridge.diff.sides): the original on the reference, the written model on the
target, and `execute` as the caller gave it (nothing wraps or intercepts the diff's calls, issue 45). Node and
tensor names survive the rewrite (a guarded node's output name moves to its Where), so the diff's marks, walk
and witnesses read the same tensors on both sides; the written side replays a node as written, its guard
included (its replay policy, clipbridge.fix.replay.AS_WRITTEN).
The clean feeds (no NaN, no infinities) check that the rewrite leaves ordinary numbers bit-for-bit alone.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from clipbridge.diff import report, run, sides
from clipbridge.fix import replay

SEED = 25  # the clean feeds' fixed seed
DYNAMIC_DIM = 1
MAX_ELEMENTS = 1 << 22

Feeds = dict[str, np.ndarray]


def verdict(proven: dict[str, Any]) -> str:
    """The fix's verdict in the diff's words (equal, explained, unexplained; docs/cli.md): the proof's own, so that
    `clipbridge fix` exits 0 exactly when the proof is `equal` (issue 44). Whether the clean outputs stay
    bit-identical on the target is reported beside it (cost.clean_identical): when the proof is equal, a changed
    clean output moved toward the reference, which is the fix's purpose, not a failure of it."""
    return str(proven["verdict"])


def prove(execute: run.Execute, original: bytes, written: bytes, npz: bytes | None, reference: str, target: str,
          precision: str, memory: run.Memory | None = None) -> dict[str, Any]:
    """The diff body of written-on-target against original-on-reference (given inputs, or generated ones)."""
    opts = run.Options((reference, target), precision, sample="edge",  # generated: NaN, +-inf and the bounds
                       **run.Options.budget_fields(memory))
    two = [sides.Side(original, reference, precision),
           sides.Side(written, target, precision, replays=replay.AS_WRITTEN)]
    body, _ = report.diff_sides(execute, two, npz, opts)
    return body


def clean_feeds(specs: list[dict], seed: int = SEED) -> Feeds:
    """Seeded normal values for each graph input ({name, shape, dtype}): no NaN, no infinity, in float16 range."""
    rng = np.random.default_rng(seed)
    out: Feeds = {}
    for s in specs:
        dims = [d if isinstance(d, int) and d > 0 else DYNAMIC_DIM for d in s["shape"]]
        dt = np.dtype(s["dtype"])
        n = int(np.prod(dims, dtype=np.int64))
        if n > MAX_ELEMENTS:
            raise ValueError(f"graph input {s['name']!r} has {n} elements; give its values in an .npz")
        if dt.kind == "f":
            a = (rng.standard_normal(n) * 4).astype(dt)
        elif dt.kind == "b":
            a = rng.integers(0, 2, n).astype(dt)
        else:
            a = rng.integers(-8, 9, n).astype(dt)
        out[s["name"]] = a.reshape(dims)
    return out
