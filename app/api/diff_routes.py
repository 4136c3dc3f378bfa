"""POST /v1/models/diff: run an uploaded ONNX model on real engines and explain each difference by its clip.

The upload is first refused if any tensor keeps its data in a file (app.api.model_guard). Then the whole diff
(parsing, shape inference, each engine run, the comparison, each replay) runs in one sandbox child through
run_isolated (app.diff.isolated): an engine that crashes or hangs costs this answer, never the server, and only
the response body comes back, never the engines' tensors.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Literal

from fastapi import APIRouter, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from app.api.diff_models import DiffResponse
from app.api.execute_routes import PROBLEMS, slots
from app.api.model_guard import embedded_only, logged_engine_text
from app.diff import isolated as in_child
from app.diff import run
from app.diff.inputs import SEED
from app.core.errors import ArtifactError, UnsupportedMediaType
from app.engines.sandbox import run_isolated
from app.diff.engines import require as require_engines

router = APIRouter()
DIFF_BODY = {"requestBody": {"required": True, "content": {
    "multipart/form-data": {"schema": {"type": "object", "required": ["model"], "properties": {
        "model": {"type": "string", "format": "binary", "description": "the .onnx model"},
        "inputs": {"type": "string", "format": "binary",
                   "description": "optional .npz keyed by graph input name (default: generated, seeded)"}}}}}}}
EngineQuery = Query(default=None, max_length=16, description="Repeatable or comma-separated: "
                    f"{', '.join(run.ENGINE_NAMES)}; at least two (default: {', '.join(run.DEFAULT_ENGINES)})")


async def _read(request: Request) -> tuple[bytes, bytes | None]:
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype != "multipart/form-data":
        raise UnsupportedMediaType("send multipart/form-data with a file field 'model' (and optionally 'inputs', "
                                   f"an .npz); got {ctype or 'no content type'}")
    async with request.form(max_files=2, max_fields=2) as form:
        extra = sorted(set(form.keys()) - {"model", "inputs"})
        if extra:
            raise ArtifactError(f"unknown form field {extra[0][:40]!r}; send 'model' and optionally 'inputs'",
                                extra[0][:40])
        model, inputs = form.get("model"), form.get("inputs")
        if not isinstance(model, UploadFile):
            raise ArtifactError("the form needs a file field 'model' (the .onnx)", "model")
        if inputs is not None and not isinstance(inputs, UploadFile):
            raise ArtifactError("'inputs' must be a file (an .npz)", "inputs")
        data = await model.read()
        if not data:
            raise ArtifactError("the model is empty", "model")
        npz = await inputs.read() if inputs is not None else None
    return data, npz


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
                     seed: int = Query(default=SEED, ge=0, le=2**32 - 1, description="the input generator's seed")
                     ) -> Response:
    """Which clip, which rule, on which input: the engines' outputs compared node by node, each difference
    introduced or inherited, with its cause and a witness."""
    opts = run.Options(_engines(engine), precision, rtol, atol, seed)
    opts.check("query.")
    require_engines(opts.engines, "query.engine")  # the install command, before the upload is read (never `model`)
    model, npz = await _read(request)
    embedded_only(model)

    def work() -> str:
        body = isolated("diff", in_child.diff_body, model, npz, opts, True)  # with the inspector's graph
        return json.dumps(body, allow_nan=False, separators=(",", ":"))
    text = await run_in_threadpool(slots(request).run, logged_engine_text(request, work))
    return Response(text, media_type="application/json")
