"""POST /v1/models/fix: the model rewritten so that `target` computes what `reference` computes, with its proof."""

from __future__ import annotations

import base64
import json
from typing import Literal

from fastapi import APIRouter, Query, Request, Response
from fastapi.concurrency import run_in_threadpool

from clipbridge.api.execute_routes import PROBLEMS, slots
from clipbridge.api.model_form import read_model_form
from clipbridge.api.model_guard import embedded_only, logged_engine_text
from clipbridge.fix.models import FixResponse
from clipbridge.diff.engines import require
from clipbridge.fix.facts import ENGINES
from clipbridge.fix.service import fix

FIX_BODY = {"requestBody": {"required": True, "content": {
    "multipart/form-data": {"schema": {"type": "object", "required": ["model"], "properties": {
        "model": {"type": "string", "format": "binary", "description": "the .onnx model"},
        "inputs": {"type": "string", "format": "binary",
                   "description": "optional .npz keyed by graph input name (generated inputs are added)"}}}}}}}
EngineQuery = Literal["onnxruntime", "openvino", "onnx-reference"]
router = APIRouter()


@router.post("/v1/models/fix", response_model=FixResponse, responses=PROBLEMS, tags=["models"],
             openapi_extra=FIX_BODY)
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
    model, npz = await read_model_form(request, "the .onnx")
    embedded_only(model)  # before any engine or numpy_helper sees it: no tensor's data may live in a file
    # In an execution slot (bounded count and time, like /v1/models/inspect); the engines run in sandbox children,
    # and the proof's tensors are compared there (only its body comes back).
    fixed = await run_in_threadpool(slots(request).run, logged_engine_text(
        request, lambda: fix(model, npz, reference, target, precision)))
    body = dict(fixed.body)
    body["model"] = {**body["model"], "onnx_base64": base64.b64encode(fixed.model).decode("ascii")}
    FixResponse.model_validate(body)  # the body is what the schema says
    return Response(json.dumps(body, allow_nan=False, separators=(",", ":")), media_type="application/json")
