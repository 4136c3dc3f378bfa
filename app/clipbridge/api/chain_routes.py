"""POST /v1/models/chain: follow an uploaded torch.export `.pt2` (or an ONNX model) across converters, hop by hop
(docs/chain.md).

A `.pt2` is untrusted bytes (torch.export.load unpickles parts of it): loading it, every converter and every engine
run happen in a sandbox child through run_isolated, with a time limit of their own (a converter's first call
imports torch, which a diff never does). A converter that fails is a failed hop in the body, never a 5xx.

An ONNX source may come with its external data, as diff's does (a zip of the .onnx and the files it names, or
'data' parts named by their location: clipbridge.api.model_upload, issue 46); a zip without a `.onnx` entry is the
.pt2, which keeps its weights in its own archive and takes no 'data' parts."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Query, Request, Response
from fastapi.concurrency import run_in_threadpool

from clipbridge.api.model_form import read_model_upload
from clipbridge.api.model_guard import embedded_only
from clipbridge.api.model_upload import DATA_FIELD, resolve, source_head
from clipbridge.api.execute_routes import PROBLEMS, slots
from clipbridge.chain import preflight, report
from clipbridge.chain.models import ChainResponse
from clipbridge.diff.inputs import SEED
from clipbridge.engines.sandbox import run_isolated

router = APIRouter()
CHAIN_TIMEOUT_S = 180.0  # per call: a converter's first call in a worker imports torch and the exporter
CHAIN_BODY = {"requestBody": {"required": True, "content": {
    "multipart/form-data": {"schema": {"type": "object", "required": ["model"], "properties": {
        "model": {"type": "string", "format": "binary",
                  "description": "a torch.export.save .pt2 (or an .onnx: the chain then starts at onnx; or a zip "
                                 "of the .onnx and the external data files it names)"},
        "inputs": {"type": "string", "format": "binary",
                   "description": "optional .npz keyed by the model's input names (default: generated, seeded)"},
        "data": DATA_FIELD}}}}}}


def isolated(stage: str, fn: Callable[..., Any], /, *args: Any) -> Any:
    """The chain's executor on the server: every call on the uploaded bytes in a sandbox child."""
    return run_isolated(stage, fn, *args, timeout_s=CHAIN_TIMEOUT_S)


def _check_installed(spec: str, head: bytes, static: bool) -> None:
    """The stages, the [chain] extra and the converter environment (the server never builds it): a 422 naming
    every missing piece with its install command (clipbridge.chain.preflight; `head`: the source's first bytes,
    its kind)."""
    preflight.check(spec, head, "query.chain", server=True, static=static)


@router.post("/v1/models/chain", response_model=ChainResponse, responses=PROBLEMS, tags=["models"],
             openapi_extra=CHAIN_BODY)
async def chain_model(request: Request,
                      chain: str = Query(..., min_length=1, max_length=120, description=(
                          "comma list of torch, onnx, openvino, tflite, tflite:builtin, coreml")),
                      static: bool = Query(default=False, description=(
                          "the lowering table and its predictions only, read from the converted graphs")),
                      seed: int = Query(default=SEED, ge=0, le=2**32 - 1, description="the input generator's seed")
                      ) -> Response:
    """Per hop: what each clamp became, the outputs and clamps that differ against the source and the previous
    stage, the first divergence, and each difference's converter lowering rule with a witness."""
    upload = await read_model_upload(request, "the .pt2, or an .onnx (or a zip of it and its external data)")
    _check_installed(chain, source_head(upload), static)  # the query's own errors first, before the data is resolved
    limit = request.app.state.settings.max_model_bytes

    def work() -> str:
        model = resolve(upload, limit, pt2=True)  # an ONNX source's external data, in memory only, in the slot
        if report.source_kind(model) == "onnx":
            embedded_only(model)  # issue 34: no tensor's data may live in a file the service would open
        body = report.chain(isolated, model, upload.inputs, chain, seed, static=static, loc="query.chain")
        return json.dumps(body, allow_nan=False, separators=(",", ":"))
    text = await run_in_threadpool(slots(request).run, work)
    return Response(text, media_type="application/json")
