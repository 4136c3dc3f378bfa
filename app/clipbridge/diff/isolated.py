"""The diff as the server runs it: one sandbox child runs every engine, compares their tensors and walks the
graph; what crosses back to the server is the response body only (per-node counts, witness elements, output
summaries), never an engine's tensors.

Why one child for the whole diff: the engines' marked tensors are the large part of a diff (at most the
server's diff memory budget, CLIPBRIDGE_DIFF_MEMORY_MB, at once: clipbridge.diff.passes). Compared where they were computed, they are freed with the child's call, and
the server's own memory does not grow with the model's tensors. The body is bounded in bytes
(MAX_BODY_BYTES) by the child before it is sent. The CLI runs the same functions in-process
(clipbridge.diff.run.direct), where it also keeps the tensors for --bundle and --node-data.
"""

from __future__ import annotations

import json
from typing import Any

from clipbridge.core.errors import ClipBridgeError
from clipbridge.diff import graph_view, report, run, samples, sets

MAX_BODY_BYTES = 8 * 2**20  # a diff body's JSON; every list in it is bounded (nodes, witnesses, inputs)


class BodyTooLarge(ClipBridgeError):
    """The answer itself would pass MAX_BODY_BYTES (a model with very many differing nodes)."""

    status = 422
    title = "The answer is too large"


def bounded(body: dict[str, Any]) -> dict[str, Any]:
    """`body` as is when its JSON stays within MAX_BODY_BYTES, else BodyTooLarge (checked in the child)."""
    size = len(json.dumps(body, allow_nan=False, separators=(",", ":")))
    if size > MAX_BODY_BYTES:
        raise BodyTooLarge(f"the diff's answer would be {size} bytes (limit {MAX_BODY_BYTES}): diff a smaller "
                           "model or fewer engines", "model")
    return body


def diff_body(model: bytes, npz: bytes | None, opts: run.Options, graph: bool = False) -> dict[str, Any]:
    """The diff's response body, computed in this process: the function a sandbox child runs for the server;
    `graph` adds the part of the graph the inspector draws (clipbridge.diff.graph_view, bounded; docs/inspector.md)."""
    npzs = samples.zipped(bytes(npz) if npz is not None else None)  # a zip of .npz files: an input set
    body, runs = sets.diff(run.direct, model, npzs, opts) if npzs else report.diff(run.direct, model, npz, opts)
    if graph:
        body["graph"] = graph_view.view(runs.plan, body)
        if body.get("edge") is not None:  # the edge pass's own plan: an If may take another branch there
            edge_plan = runs.edge_plan
            body["edge"]["graph"] = graph_view.view(edge_plan, body["edge"]) if edge_plan is not None else None
    return bounded(body)
