"""The proof of a fix: the whole-model diff (clipbridge.diff) of the written model on B against the original on A.

The diff runs one model on every engine; the proof hands it an executor that gives engine B the written model
wherever the diff would run the original on it. Node and tensor names survive the rewrite (a guarded node's
output name moves to its Where), so the diff's marks, walk and witnesses read the same tensors on both sides;
a replayed node is replayed on B as written (clipbridge.fix.replay).
The clean feeds (no NaN, no infinities) check that the rewrite leaves ordinary numbers bit-for-bit alone.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from clipbridge.diff import engines as diff_engines
from clipbridge.diff import child, report, run, subgraphs
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


def swapping(execute: run.Execute, original: bytes, written: bytes, target: str) -> run.Execute:
    """An executor that gives `target` the written model wherever the diff would run the original on it: the
    model itself, the model with the diff's marks added (marked alike), and a replay of a node, alone or folded
    into the marked run (the node as the written model computes it, with its guard, clipbridge.fix.replay)."""
    twins: dict[int, tuple[bytes, bytes]] = {id(original): (original, written)}  # id(bytes) -> (them, B's twin)

    def twin(b: Any) -> bytes | None:
        pair = twins.get(id(b))
        return pair[1] if pair is not None and pair[0] is b else None

    def call(stage: str, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        if fn in (diff_engines.with_outputs, subgraphs.expose) and twin(args[0]) is not None:
            made = execute(stage, fn, *args, **kwargs)
            twins[id(made)] = (made, execute(stage, fn, twin(args[0]), *args[1:], **kwargs))
            return made
        if fn is child.with_replays and twin(args[0]) is not None:
            made = execute(stage, fn, *args, **kwargs)
            twins[id(made)] = (made, execute(stage, replay.fixed_with_replays, twin(args[0]), *args[1:], **kwargs))
            return made
        if fn in (child.single_node, subgraphs.single_node) and twin(args[0]) is not None:
            made = execute(stage, fn, *args, **kwargs)
            twins[id(made)] = (made, execute(stage, replay.fixed_single, twin(args[0]), *args[1:], **kwargs))
            return made
        if fn is diff_engines.run and args[0] == target and twin(args[1]) is not None:
            args = (args[0], twin(args[1]), *args[2:])
        return execute(stage, fn, *args, **kwargs)
    call.concurrent = run.concurrent(execute)  # type: ignore[attr-defined]  # the plain runs (clipbridge.diff.plain)
    return call


def prove(execute: run.Execute, original: bytes, written: bytes, npz: bytes | None, reference: str, target: str,
          precision: str) -> dict[str, Any]:
    """The diff body of written-on-target against original-on-reference (given inputs, or generated ones)."""
    opts = run.Options((reference, target), precision, sample="edge")  # generated: NaN, +-inf and the bounds
    body, _ = report.diff(swapping(execute, original, written, target), original, npz, opts)
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
