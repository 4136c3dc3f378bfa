"""Routes for /v1/models/inspect and /v1/models/rewrite: receive the upload into a temp file, map it, scan.

The upload is never held in memory whole: multipart parts are spooled to disk by starlette, a raw body is
streamed to a temp file, and the scan reads either through mmap (weights pages are never touched).
Nothing outside the upload is opened. A scan needs a clip's bounds, never the weights (issue 46): a model
whose tensors keep their data in a file that did not come with it is scanned and rewritten without it (a clip
whose bound is such a tensor is listed unresolved, with the reason); the wire walk refuses a location outside
the model's folder, and no location of the upload reaches native code (clipbridge.scan.detach). The routes that
run engines (diff, fix, chain) still refuse external data (clipbridge.api.model_guard).
"""

from __future__ import annotations

import json
import mmap
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import IO, Any, Literal

from fastapi import APIRouter, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from clipbridge.api.execute_routes import PROBLEMS, slots
from clipbridge.api.models import ScanResponse
from clipbridge.dialects.kit.common import Mode
from clipbridge.core.errors import ArtifactError, UnsupportedMediaType
from clipbridge.dialects import registry
from clipbridge.lint.filters import filter_scan
from clipbridge.lint.rules import RULE_IDS, check_codes
from clipbridge.scan.report import scan
from clipbridge.scan.rewrite import rewrite

RAW_TYPES = ("application/octet-stream", "application/onnx", "application/x-protobuf", "application/xml",
             "text/xml")
UPLOAD_BODY = {"requestBody": {"required": True, "content": {
    "multipart/form-data": {"schema": {"type": "object", "required": ["model"], "properties": {
        "model": {"type": "string", "format": "binary", "description": "an .onnx model or an OpenVINO IR .xml"},
        "weights": {"type": "string", "format": "binary", "description": "the IR's .bin (optional)"}}}},
    "application/octet-stream": {"schema": {"type": "string", "format": "binary",
                                            "description": "the .onnx model or IR .xml bytes"}}}}}
TargetQuery = Query(default=None, max_length=16, description=(
    "Repeatable (or comma-separated): a dialect with an optional :version ("
    + ", ".join(d.version_example for d in registry.DIALECTS.values()) + "); 'default': the default columns ("
    + ", ".join(registry.default_names()) + "), 'all': every dialect. Default: the default columns"))
router = APIRouter()


def CodesQuery(what: str) -> Any:
    return Query(default=None, max_length=32, description=f"Repeatable or comma-separated: {what} (findings, "
                 "statuses and the summary are recomputed from what remains). Codes: " + ", ".join(RULE_IDS))


def _map(f: IO[bytes], what: str) -> mmap.mmap:
    f.seek(0, 2)
    if f.tell() == 0:
        raise ArtifactError(f"the {what} is empty", what)
    return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)


@asynccontextmanager
async def upload(request: Request) -> AsyncIterator[tuple[mmap.mmap, mmap.mmap | None, str]]:
    """(model bytes, IR weights or None, file name) from a multipart form or a raw body, as mmaps."""
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    maps: list[mmap.mmap] = []
    try:
        if ctype == "multipart/form-data":
            async with request.form(max_files=2, max_fields=4) as form:
                model, weights = form.get("model"), form.get("weights")
                extra = sorted(set(form.keys()) - {"model", "weights"})
                if extra:
                    raise ArtifactError(f"unknown form field {extra[0][:40]!r}; send 'model' and optionally "
                                        "'weights'", extra[0][:40])
                if not isinstance(model, UploadFile):
                    raise ArtifactError("the form needs a file field 'model' (the .onnx or IR .xml)", "model")
                if weights is not None and not isinstance(weights, UploadFile):
                    raise ArtifactError("'weights' must be a file (the IR's .bin)", "weights")
                maps.append(_map(model.file, "model"))
                if weights is not None:
                    maps.append(_map(weights.file, "weights"))
                yield maps[0], maps[1] if len(maps) > 1 else None, model.filename or ""
        elif ctype in RAW_TYPES:
            with tempfile.TemporaryFile() as tmp:
                async for chunk in request.stream():
                    tmp.write(chunk)
                maps.append(_map(tmp, "model"))
                yield maps[0], None, ""
        else:
            raise UnsupportedMediaType(f"send the model as multipart/form-data (fields 'model', 'weights') or as a raw "
                                   f"application/octet-stream body (got {ctype or 'no content type'})")
    finally:
        for m in maps:
            try:
                m.close()
            except BufferError:  # a timed-out scan still reading it holds a view: the GC unmaps it later
                pass


@router.post("/v1/models/inspect", response_model=ScanResponse, responses=PROBLEMS, tags=["models"],
             openapi_extra=UPLOAD_BODY)
async def inspect(request: Request, target: list[str] | None = TargetQuery,
                  mode: Literal["preserve", "literal"] = "preserve",
                  select: list[str] | None = CodesQuery("report only these finding codes"),
                  ignore: list[str] | None = CodesQuery("drop these finding codes")) -> Response:
    """Every clip of an ONNX model or OpenVINO IR, with its spec, meaning and per-target findings."""
    chosen, dropped = check_codes(select, "select"), check_codes(ignore, "ignore")
    async with upload(request) as (model, weights, _name):

        def work() -> str:
            result = filter_scan(scan(model, weights, target, Mode(mode)).to_json(), chosen, dropped)
            return json.dumps(result, allow_nan=False, separators=(",", ":"))
        # In an execution slot, bounded by CLIPBRIDGE_MAX_EXECUTION_SECONDS like /v1/execute.
        text = await run_in_threadpool(slots(request).run, work)
    return Response(text, media_type="application/json")


@router.post("/v1/models/rewrite", responses={200: {"content": {"application/octet-stream": {}},
                                                     "description": "the rewritten .onnx model"}, **PROBLEMS},
             tags=["models"], openapi_extra=UPLOAD_BODY, response_class=Response)
async def rewrite_model(request: Request, target: str = Query(description="the target to be drift-free for, "
                                                                          "e.g. directml:5_0"),
                        opset: int | None = Query(default=None, ge=11, le=1000, description="ONNX opset of the "
                                                  "output (default: the model's, at least 11)")) -> Response:
    """The ONNX model with every Clip given explicit, typed bounds that translate exactly to the target."""
    async with upload(request) as (model, weights, _name):
        if weights is not None:
            raise ArtifactError("rewrite takes an ONNX model only", "weights")

        def work() -> tuple[bytes, dict[str, str]]:
            out = rewrite(model, target, opset)
            return out.model_bytes, out.headers()
        body, headers = await run_in_threadpool(slots(request).run, work)
    return Response(body, media_type="application/octet-stream", headers=headers)
