"""POST /v1/models/fix: the model rewritten so that `target` computes what `reference` computes, with its proof.

Two answers, by the Accept header (clipbridge.api.accept): the JSON report (the default; the model in it as
base64), or with `Accept: application/octet-stream` the written model itself, as a file download whose headers
carry the proof's verdict (the report's other parts then stay on the server: ask for JSON to read them).
"""

from __future__ import annotations

import base64
import json
from typing import Literal

from fastapi import APIRouter, Query, Request, Response
from fastapi.concurrency import run_in_threadpool

from clipbridge.api.accept import prefers
from clipbridge.api.diff_routes import server_budget
from clipbridge.api.execute_routes import PROBLEMS, slots
from clipbridge.api.model_form import read_model_upload
from clipbridge.api.model_guard import embedded_only, logged_engine_text
from clipbridge.api.model_upload import DATA_FIELD, resolve
from clipbridge.fix.models import FixResponse
from clipbridge.diff.engines import require
from clipbridge.fix.facts import ENGINES
from clipbridge.fix.service import Fixed, fix

FIX_BODY = {"requestBody": {"required": True, "content": {
    "multipart/form-data": {"schema": {"type": "object", "required": ["model"], "properties": {
        "model": {"type": "string", "format": "binary", "description": "the .onnx model, or a zip of it and the "
                  "external data files it names (torch's MODEL.onnx.data)"},
        "inputs": {"type": "string", "format": "binary",
                   "description": "optional .npz keyed by graph input name (generated inputs are added)"},
        "data": DATA_FIELD}}}}}}
EngineQuery = Literal[ENGINES]  # type: ignore[valid-type]  # the engines whose facts the fix rules know
MODEL_TYPE = "application/octet-stream"
FIX_ANSWERS = {200: {"description": "The report as JSON (the default), or with `Accept: application/octet-stream` "
                                    "the written .onnx model as a download (Content-Disposition), its proof's "
                                    "verdict in X-Clipbridge-Verdict",
                     "content": {MODEL_TYPE: {"schema": {"type": "string", "format": "binary"}}}}}
router = APIRouter()


@router.post("/v1/models/fix", response_model=FixResponse, responses={**FIX_ANSWERS, **PROBLEMS},
             tags=["models"], openapi_extra=FIX_BODY)
async def fix_model(request: Request,
                    reference: EngineQuery = Query(description="engine A, whose results the written model keeps: "
                                                   + ", ".join(ENGINES)),
                    target: EngineQuery = Query(description="engine B, which runs the written model"),
                    precision: Literal["model", "deployed"] = Query(
                        default="model", description="'model' pins each engine to the model's float type; "
                        "'deployed' takes the engines' defaults (OpenVINO: bf16 on CPUs that have it)")) -> Response:
    """Write the model so that `target` computes what `reference` computes; prove it with the diff; time it."""
    require([reference], "query.reference")  # a missing engine names the install command, before any upload is read
    require([target], "query.target")
    upload = await read_model_upload(request, "the .onnx, or a zip of it and its external data")
    limit = request.app.state.settings.max_model_bytes
    budget = server_budget(request)  # the diffs of the proof hold what the diff route's hold (issue 46)

    def work() -> Fixed:
        model = resolve(upload, limit)  # issue 46: the data it came with (a zip, 'data' parts), in memory only
        embedded_only(model)  # before any engine or numpy_helper sees it: no tensor's data may live in a file
        return fix(model, upload.inputs, reference, target, precision, memory=budget)
    # In an execution slot (bounded count and time, like /v1/models/inspect), the model built there too; the engines
    # run in sandbox children, and the proof's tensors are compared there (only its body comes back).
    fixed = await run_in_threadpool(slots(request).run, logged_engine_text(request, work))
    if prefers(request, MODEL_TYPE, over="application/json"):
        return Response(fixed.model, media_type=MODEL_TYPE, headers=model_headers(fixed))
    body = dict(fixed.body)
    body["model"] = {**body["model"], "onnx_base64": base64.b64encode(fixed.model).decode("ascii")}
    FixResponse.model_validate(body)  # the body is what the schema says
    return Response(json.dumps(body, allow_nan=False, separators=(",", ":")), media_type="application/json")


def model_headers(fixed: Fixed) -> dict[str, str]:
    """The download's headers: its file name (the inspector's, without the upload's stem) and the report's
    verdict and its engines, so that a client that saves the file still knows whether the proof holds."""
    body = fixed.body
    return {"Content-Disposition": f'attachment; filename="fixed-for-{body["target"]}.onnx"',
            "X-Clipbridge-Verdict": str(body["verdict"]),
            "X-Clipbridge-Reference": str(body["reference"]), "X-Clipbridge-Target": str(body["target"]),
            "X-Clipbridge-Rules-Applied": str(len(body["rules_applied"]))}
