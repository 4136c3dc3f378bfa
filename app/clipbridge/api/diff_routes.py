"""POST /v1/models/diff: run an uploaded ONNX model on real engines and explain each difference by its clip.

The model may come with the external data files it names, as a zip or as 'data' parts named by their location:
they are embedded from the upload's own parts, in memory (clipbridge.api.model_upload, issue 46). Then the upload
is refused if any tensor still keeps
its data in a file (clipbridge.api.model_guard). Then the whole diff
(parsing, shape inference, each engine run, the comparison, each replay) runs in one sandbox child through
run_isolated (clipbridge.diff.isolated): an engine that crashes or hangs costs this answer, never the server, and only
the response body comes back, never the engines' tensors.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Literal

from fastapi import APIRouter, Query, Request, Response
from fastapi.concurrency import run_in_threadpool

from clipbridge.diff.models import DiffResponse
from clipbridge.api.execute_routes import PROBLEMS, slots
from clipbridge.api.model_form import read_model_upload, readable, release
from clipbridge.api.model_guard import embedded_only, logged_engine_text
from clipbridge.api.model_upload import DATA_FIELD, resolve
from clipbridge.diff import isolated as in_child
from clipbridge.diff import run
from clipbridge.diff import shapes as diff_shapes
from clipbridge.diff import tolerance as diff_tolerance
from clipbridge.diff.inputs import SEED
from clipbridge.engines.sandbox import run_isolated
from clipbridge.diff.engines import require as require_engines

router = APIRouter()
DIFF_BODY = {"requestBody": {"required": True, "content": {
    "multipart/form-data": {"schema": {"type": "object", "required": ["model"], "properties": {
        "model": {"type": "string", "format": "binary", "description": "the .onnx model, or a zip of it and the "
                  "external data files it names (torch's MODEL.onnx.data)"},
        "inputs": {"type": "string", "format": "binary",
                   "description": "optional .npz keyed by graph input name, or a zip of .npz files (an input set, "
                                  "each one sample; default: an ordinary generated sample, seeded)"},
        "data": DATA_FIELD}}}}}}
EngineQuery = Query(default=None, max_length=16, description="Repeatable or comma-separated: "
                    f"{', '.join(run.ENGINE_NAMES)}; at least two (default: {', '.join(run.DEFAULT_ENGINES)})")


MEMORY_OPTION = "CLIPBRIDGE_DIFF_MEMORY_MB (the server's setting)"


def server_budget(request: Request) -> run.Memory:
    """The server's diff budget (its settings, never the client's) for every route that diffs: diff and fix."""
    return request.app.state.settings.diff_budget_mb << 20, MEMORY_OPTION


def isolated(stage: str, fn: Callable[..., Any], /, *args: Any) -> Any:
    """The diff's executor on the server: the call on the uploaded bytes in a sandbox child."""
    return run_isolated(stage, fn, *args)


def _engines(items: list[str] | None) -> tuple[str, ...]:
    if not items:
        return run.DEFAULT_ENGINES
    return tuple(p.strip() for item in items for p in item.split(",") if p.strip())


@router.post("/v1/models/diff", response_model=DiffResponse, responses=PROBLEMS, tags=["models"], openapi_extra=DIFF_BODY)
async def diff_model(request: Request, engine: list[str] | None = EngineQuery,
                     precision: Literal["model", "deployed"] = Query(default="model", description=(
                         "model: every engine pinned to the model's own types; deployed: each engine's defaults")),
                     rtol: float | None = Query(default=None, ge=0, le=1e6, description="default: per dtype"),
                     atol: float | None = Query(default=None, ge=0, le=1e30, description="default: per dtype"),
                     seed: int = Query(default=SEED, ge=0, le=2**32 - 1, description="the input generator's seed"),
                     probe: Literal["off", "edge"] = Query(default="edge", description=(
                         "edge: a second pass on generated NaN, +-inf, float16's 65504 and the bounds, its own "
                         "`edge` section; off: the ordinary pass only")),
                     tolerance: list[str] | None = Query(default=None, max_length=64, description=(
                         "repeatable NAME=RTOL,ATOL: the tolerance of output NAME (* for every output) over the "
                         "per-dtype default")),
                     classes: int | None = Query(default=None, ge=-32, le=32, description=(
                         "with an input set (a zip of .npz files in `inputs`): the outputs' class axis, for top-1 "
                         "and top-5 agreement")),
                     shape: list[str] | None = Query(default=None, max_length=64, description=(
                         "repeatable INPUT=DIMS (e.g. image=8x3x224x224): generate INPUT at this shape")),
                     fail_on: list[Literal["masked", "edge"]] | None = Query(default=None, max_length=2, description=(
                         "repeatable: `fails` is also true when a difference is masked inside the model, or when "
                         "the edge probe differs (by default only the outputs decide)"))
                     ) -> Response:
    """Which clip, which rule, on which input: the engines' outputs compared node by node, each difference
    introduced or inherited, with its cause and a witness."""
    opts = run.Options(_engines(engine), precision, rtol, atol, seed, probe=probe, fail_on=tuple(fail_on or ()),
                       tolerances=diff_tolerance.parse(tolerance, "query.tolerance"),
                       shapes=diff_shapes.parse(shape, "query.shape"), classes=classes,
                       # the server's budget only: a client never raises it (docs/operations.md)
                       **run.Options.budget_fields(server_budget(request)))
    opts.check("query.")
    require_engines(opts.engines, "query.engine")  # the install command, before the upload is read (never `model`)
    # In memory files: the sandbox worker gets the model by descriptor, this process never copies it.
    upload = await read_model_upload(request, "the .onnx, or a zip of it and its external data", files=True)
    built: list[Any] = []  # the model with its data embedded, released below
    limit = request.app.state.settings.max_model_bytes

    def work() -> str:
        # issue 46: the external data it came with (a zip, 'data' parts), in memory only, in the slot
        built.append(resolve(upload, limit, files=True))
        embedded_only(readable(built[0]))
        body = isolated("diff", in_child.diff_body, built[0], upload.inputs, opts, True)  # with the inspector's graph
        return json.dumps(body, allow_nan=False, separators=(",", ":"))
    try:
        text = await run_in_threadpool(slots(request).run, logged_engine_text(request, work))
    finally:
        release(*built)
        upload.release()
    return Response(text, media_type="application/json")
