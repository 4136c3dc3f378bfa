"""The edge probe (issue 44, item 2): a second pass on generated hostile values, reported apart.

The verdict a user reads is about their model on ordinary inputs (their .npz, or a seeded ordinary sample). How
the engines treat NaN, +-inf, float16's 65504 and each clip's bounds is a different question: `--probe edge`
(the CLI's and the API's default) answers it in a pass of its own, whose verdict, first divergence and nodes are
the body's `edge` section. It counts for the exit code only with `--fail-on edge`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from clipbridge.core.errors import ClipBridgeError

PROBES = ("off", "edge")
SAMPLES = ("ordinary", "edge")
KEPT = ("verdict", "inputs", "outputs", "first_divergence", "nodes", "masked", "layout", "method", "passes")


def edge(one: Callable[..., tuple[dict, Any]], execute: Any, model: bytes, opts: Any) -> tuple[dict[str, Any], Any]:
    """The edge section and the plan its pass read (None on an error): `one` (clipbridge.diff.report.sample) run
    on the edge sample with the same seed. The plan is returned because it is not always the ordinary pass's: an
    If whose condition is a graph input takes the branch the edge sample chooses, so the inspector's graph of the
    edge section is drawn from this plan. An error of the probe's own (an engine that cannot run a NaN through
    an integer Cast) is reported there, and never takes the ordinary verdict with it."""
    probe_opts = dataclasses.replace(opts, sample="edge", probe="off")
    try:
        body, runs = one(execute, model, None, probe_opts)
    except ClipBridgeError as exc:
        return {"verdict": "error", "error": {"message": exc.message, "loc": exc.loc}, "inputs": None,
                "outputs": [], "first_divergence": None, "nodes": [], "masked": {"nodes": [], "summary": None},
                "layout": [], "method": None, "passes": None}, None
    return {k: body[k] for k in KEPT}, runs.plan


def check(probe: str, sample: str, prefix: str = "") -> None:
    """Refuse a probe or sample name that is not one of PROBES / SAMPLES, naming the option."""
    if probe not in PROBES:
        raise ClipBridgeError(f"probe {probe[:40]!r} is not one of {', '.join(PROBES)}", f"{prefix}probe")
    if sample not in SAMPLES:
        raise ClipBridgeError(f"sample {sample[:40]!r} is not one of {', '.join(SAMPLES)}", f"{prefix}sample")
