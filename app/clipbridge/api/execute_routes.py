"""Routes for /v1/execute, /v1/execute.npy and /v1/compare: thin, the work is in app/clipbridge/service/execute.py."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import numpy as np
from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import StreamingResponse
from pydantic import ValidationError

from clipbridge.api.models import (CompareRequest, CompareResponse, ExecuteOptions, ExecuteRequest, ExecuteResponse,
                            Problem)
from clipbridge.api.strict import StrictJSONRoute
from clipbridge.dialects import registry
from clipbridge.dialects.kit.common import Mode
from clipbridge.core.errors import ClipBridgeError, PayloadTooLarge, RejectedSpec, SpecError, UnsupportedMediaType
from clipbridge.service.execute import (Slots, check_reading, compare_outputs, pick_backend, run_reported, semantics_for,
                         with_precision, with_reading)
from clipbridge.api.basis import MEANING_BACKENDS, reading_for_basis, shows, under_basis
from clipbridge.service.field_errors import field_errors
from clipbridge.core.json_depth import MAX_JSON_DEPTH, too_deep
from clipbridge.core.numbers import wire_number
from clipbridge.core.settings import Settings
from clipbridge.core.tensors import json_values, npy_array, parse_json_tensor
from clipbridge.service.translate import resolve_spec

PROBLEMS: dict[int | str, dict[str, Any]] = {
    status: {"model": Problem, "content": {"application/problem+json": {}}} for status in (400, 413, 415, 422, 503)}
router = APIRouter(route_class=StrictJSONRoute)
binary = APIRouter()


def slots(request: Request) -> Slots:
    """The app's execution slots (made once by create_app from CLIPBRIDGE_MAX_CONCURRENT_EXECUTIONS)."""
    return request.app.state.slots


def label(semantics: Any, default: str) -> str:
    if semantics is None:
        return default
    if isinstance(semantics, str):
        return semantics
    version = getattr(semantics, "opset", None) or getattr(semantics, "version", None) or \
        getattr(semantics, "feature_level", None)
    return f"{semantics.dialect}:{version}" if version else semantics.dialect


def _check_dtype(dtype_name: str, meaning_dtype: str, loc: str) -> None:
    if dtype_name != meaning_dtype:
        raise SpecError(f"the input is {dtype_name} but the spec's tensor is {meaning_dtype}", loc)


def _out(arr: np.ndarray, dt: Any) -> dict[str, Any]:
    return {"dtype": dt.name, "shape": list(arr.shape), "data": json_values(arr, dt)}


@router.post("/v1/execute", response_model=ExecuteResponse, responses=PROBLEMS, tags=["execute"])
def execute(body: ExecuteRequest, request: Request) -> dict[str, Any]:
    """Run the spec on one JSON tensor under one dialect's semantics."""
    settings: Settings = request.app.state.settings
    src = resolve_spec(body.spec)
    sem = semantics_for(src, body.target, Mode(body.mode))
    _check_dtype(body.input.dtype, sem.meaning.dtype.name, "input.dtype")
    dt, x = parse_json_tensor(body.input.dtype, body.input.shape, body.input.data, settings.max_json_elements)
    backend = pick_backend(body.backend)
    sem, reading = with_reading(with_precision(sem, body.precision),
                                reading_for_basis(sem.dialect, body.basis, body.reading))
    sem, observed = under_basis(sem, body.basis) if backend in MEANING_BACKENDS else (sem, False)
    y, ran = slots(request).run(lambda: run_reported(sem, x, backend, reading, inplace=True))
    # The output's own dtype: a promoting semantics (PyTorch int + float bound) returns float32.
    return {"output": _out(y, sem.meaning.out_dtype), "semantics": label(body.target, src.dialect),
            "backend": backend, "reading": reading, "meaning": sem.meaning.describe(),
            "shows": shows(sem.dialect, reading, backend, observed), "precision": body.precision, "engine": ran}


@router.post("/v1/compare", response_model=CompareResponse, responses=PROBLEMS, tags=["execute"])
def compare(body: CompareRequest, request: Request) -> dict[str, Any]:
    """One input under several semantics (default all three); per pair, where the outputs differ."""
    settings: Settings = request.app.state.settings
    src = resolve_spec(body.spec)
    dt = src.meaning.dtype
    _check_dtype(body.input.dtype, dt.name, "input.dtype")
    _, x = parse_json_tensor(body.input.dtype, body.input.shape, body.input.data, settings.max_json_elements)
    wanted = body.targets or list(registry.default_names())
    check_reading(body.reading, [w if isinstance(w, str) else w.dialect for w in wanted])
    backend = pick_backend(body.backend)
    outputs: list[dict[str, Any]] = []
    results: dict[str, np.ndarray] = {}

    def work() -> None:
        for item in wanted:
            name = label(item, src.dialect)
            try:
                sem = with_precision(semantics_for(src, item, Mode(body.mode)), body.precision)
                sem, reading = with_reading(sem, reading_for_basis(sem.dialect, body.basis, body.reading,
                                                                   strict=False), strict=False)
                sem, observed = under_basis(sem, body.basis) if backend in MEANING_BACKENDS else (sem, False)
                y, ran = run_reported(sem, x, backend, reading)
            except (RejectedSpec, ClipBridgeError) as exc:
                if isinstance(exc, PayloadTooLarge):
                    raise
                outputs.append({"semantics": name, "backend": backend, "reading": None, "meaning": None,
                                "shows": None, "output": None, "error": str(exc), "precision": body.precision,
                                "engine": None})
                continue
            results[name] = y
            outputs.append({"semantics": name, "backend": backend, "reading": reading,
                            "meaning": sem.meaning.describe(), "shows": shows(sem.dialect, reading, backend, observed),
                            "output": _out(y, sem.meaning.out_dtype),
                            "error": None, "precision": body.precision, "engine": ran})

    slots(request).run(work)
    pairs = compare_outputs(x, results)
    for p in pairs:
        for d in p["first"]:
            for k in ("input", "a_output", "b_output"):
                v = d[k]  # outputs of a promoting semantics are floats beside integer ones: keep each exact
                d[k] = wire_number(float(v) if getattr(v, "dtype", np.dtype(int)).kind == "f" or
                                   str(getattr(v, "dtype", "")) == "bfloat16" else dt.to_python(v))
    return {"outputs": outputs, "pairs": pairs}


NPY_DOC = {
    "requestBody": {"required": True, "content": {"application/x-npy": {"schema": {"type": "string",
                                                                                   "format": "binary"}}}},
    "responses": {"200": {"description": "The output tensor as .npy bytes (same dtype, shape and order); "
                                         "X-Clipbridge-Semantics/-Backend/-Reading/-Shows headers say how it was computed.",
                          "content": {"application/x-npy": {"schema": {"type": "string", "format": "binary"}}}}},
}


@binary.post("/v1/execute.npy", tags=["execute"], openapi_extra=NPY_DOC, response_class=Response,
             responses={k: v for k, v in PROBLEMS.items()})
async def execute_npy(request: Request, options: str = Query(
        ..., max_length=65536, alias="request",
        description="The execute options as JSON (an ExecuteOptions: spec, target, mode, backend, reading); "
                    "the body is the input tensor as .npy bytes.")) -> Response:
    """Run the spec on a .npy tensor; the output comes back as .npy, computed in place (no copies)."""
    settings: Settings = request.app.state.settings
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype not in ("application/x-npy", "application/octet-stream"):
        raise UnsupportedMediaType(f"Send the tensor as application/x-npy (got {ctype or 'no content type'})")
    if too_deep(options):
        raise ClipBridgeError(f"the 'request' query parameter is nested deeper than {MAX_JSON_DEPTH} levels",
                              "request")
    try:
        opts = ExecuteOptions.model_validate(json.loads(options, parse_constant=_no_constants))
    except ValidationError as exc:
        first = field_errors(exc.errors(), ExecuteOptions)[0]
        raise SpecError(first["msg"], f"request.{first['loc']}") from None
    except (ValueError, RecursionError) as exc:
        raise ClipBridgeError(f"the 'request' query parameter is not valid JSON: {exc}", "request") from None
    buf = await _read_body(request, settings.max_npy_bytes)
    src = resolve_spec(opts.spec)
    sem = semantics_for(src, opts.target, Mode(opts.mode))
    x, offset = npy_array(buf, sem.meaning.dtype, settings.max_npy_elements)
    backend = pick_backend(opts.backend)
    sem, reading = with_reading(with_precision(sem, opts.precision),
                                reading_for_basis(sem.dialect, opts.basis, opts.reading))
    sem, observed = under_basis(sem, opts.basis) if backend in MEANING_BACKENDS else (sem, False)
    y, ran = await anyio.to_thread.run_sync(slots(request).run,
                                            lambda: run_reported(sem, x, backend, reading, inplace=True))
    headers = {"X-Clipbridge-Semantics": label(opts.target, src.dialect), "X-Clipbridge-Backend": backend,
               "X-Clipbridge-Precision": opts.precision,
               "X-Clipbridge-Shows": shows(sem.dialect, reading, backend, observed)}
    if ran and ran.get("inference_precision"):
        headers["X-Clipbridge-Inference-Precision"] = str(ran["inference_precision"])
    if reading:
        headers["X-Clipbridge-Reading"] = reading
    if not np.shares_memory(y, x):  # an engine backend returned a new array: write it over the input
        x[...] = y
    # The request's own buffer (same header, output written in place) is the response, streamed in slices so
    # the server's write path never holds a second copy of the tensor (uvicorn applies flow control per slice).
    headers["Content-Length"] = str(len(buf))
    return StreamingResponse(_slices(memoryview(buf)), media_type="application/x-npy", headers=headers)


def _slices(view: memoryview, size: int = 1 << 20) -> Iterator[memoryview]:
    for start in range(0, len(view), size):
        yield view[start:start + size]


def _no_constants(name: str) -> Any:
    raise ValueError(f"bare {name} is not JSON")


async def _read_body(request: Request, limit: int) -> bytearray:
    """The body into one buffer that grows as bytes arrive, never from a declared size: a client that claims
    256 MiB and sends 6 bytes holds 6 bytes. Growth is amortized (bytearray over-allocates; large blocks are
    resized with mremap, not copied), so the tensor still lands in one buffer without a second copy. The limit
    is enforced on what arrived; Content-Length only decides an early 413 and is checked against the bytes."""
    length = request.headers.get("content-length")
    declared = int(length) if length is not None and length.isdigit() else None
    if declared is not None and declared > limit:
        raise PayloadTooLarge(f"the body is {declared} bytes; the limit is {limit} (CLIPBRIDGE_MAX_NPY_BYTES)")
    buf = bytearray()
    async for chunk in request.stream():
        buf += chunk
        if len(buf) > limit:
            raise PayloadTooLarge(f"the body exceeds {limit} bytes (CLIPBRIDGE_MAX_NPY_BYTES)")
        if declared is not None and len(buf) > declared:
            raise ClipBridgeError("the body is longer than its Content-Length")
    if declared is not None and len(buf) != declared:
        raise ClipBridgeError(f"the body ended after {len(buf)} of {declared} bytes")
    return buf
