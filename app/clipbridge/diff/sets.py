"""A diff over an input set (issue 44, item 3): every sample's outputs on every engine (compiled once), the
statistics per output, and the whole diff on the first differing sample (clipbridge.diff.samples)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clipbridge.diff import report, run, samples


def diff(execute: run.Execute, model: bytes, npzs: list[tuple[str, bytes]], opts: run.Options,
         classes: int | None = None) -> tuple[dict[str, Any], run.Runs]:
    """The diff body of the first differing sample (or the first sample), with `samples`: how many, which was
    walked, and per output its statistics. The verdict is `equal` only when no sample's outputs differ."""
    opts.check()
    feeds = execute("diff:prepare", samples.read_all, model, npzs)
    outs = {e: execute(f"diff:{e}", samples.run_all, e, model, feeds, opts.precision) for e in opts.engines}
    first, stats = samples.compare_all(outs, opts, classes if classes is not None else opts.classes)
    walked = 0 if first is None else first
    body, runs = report.diff(execute, model, npzs[walked][1], opts)
    body["samples"] = {"count": len(npzs), "outputs_differing": _differing(stats),
                       "walked": Path(npzs[walked][0]).name, "first_differing": None if first is None else
                       Path(npzs[first][0]).name, "statistics": stats}
    if first is not None and body["verdict"] == "equal":  # the set's outputs differ: never green on a re-run
        body["verdict"] = "unexplained"
    body["fails"] = body["fails"] or first is not None
    return body, runs


def _differing(stats: list[dict]) -> list[str]:
    return [s["name"] for s in stats if any(e["samples_differing"] for e in s["engines"].values())]
