"""The one place where errors become HTTP: RFC 9457 application/problem+json bodies."""

from __future__ import annotations

import json
import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect

from app.errors import ClipBridgeError

log = logging.getLogger("clipbridge")
PROBLEM = "application/problem+json"
DIALECT_TAGS = {"onnx", "openvino", "directml"}


def problem(status: int, title: str, detail: str, errors: list[dict[str, str]] | None = None,
            headers: dict[str, str] | None = None) -> JSONResponse:
    body: dict[str, Any] = {"type": "about:blank", "title": title, "status": status, "detail": detail}
    if errors is not None:
        body["errors"] = errors
    return JSONResponse(body, status_code=status, media_type=PROBLEM, headers=headers)


def format_loc(loc: tuple | list) -> str:
    """('body', 'source', 'directml', 'desc', 'Sizes', 2) -> 'source.desc.Sizes[2]'."""
    out = ""
    parts = list(loc)
    if parts and parts[0] == "body":
        parts = parts[1:]
    prev: Any = None
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        elif "[" in str(p) or "(" in str(p):
            continue  # pydantic's internal validator names (function-after[...], tagged-union[...])
        elif p in DIALECT_TAGS and prev in ("source", "spec", "targets") or (isinstance(prev, int) and p in DIALECT_TAGS):
            continue  # the discriminator tag: the dialect is already in the body
        else:
            out += ("." if out else "") + str(p)
        prev = p
    return out or "body"


def _clean_msg(msg: str) -> str:
    return msg.removeprefix("Value error, ")


def install(app: FastAPI) -> None:
    @app.exception_handler(ClipBridgeError)
    async def domain_error(request: Request, exc: ClipBridgeError) -> JSONResponse:
        errors = [{"loc": _prefixed(request, exc.loc), "msg": exc.message}] if exc.loc else None
        headers = {"Retry-After": str(exc.retry_after)} if hasattr(exc, "retry_after") else None
        return problem(exc.status, exc.title, str(exc), errors, headers)

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        errs = exc.errors()
        if any(e.get("type") == "json_invalid" for e in errs):
            detail = "; ".join(str(e.get("ctx", {}).get("error", e.get("msg"))) for e in errs)
            return problem(400, "Malformed JSON", f"The body is not valid JSON: {detail}")
        items = [{"loc": format_loc(e.get("loc", ())), "msg": _clean_msg(str(e.get("msg", "")))} for e in errs]
        items = items[:50]
        detail = "; ".join(f"{i['loc']}: {i['msg']}" for i in items[:5])
        return problem(422, "Invalid request", detail, items)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        title = {400: "Bad request", 404: "Not found", 405: "Method not allowed", 413: "Payload too large",
                 415: "Unsupported media type"}.get(exc.status_code, "Error")
        return problem(exc.status_code, title, str(exc.detail), headers=getattr(exc, "headers", None))

    @app.exception_handler(ClientDisconnect)
    async def client_gone(request: Request, exc: ClientDisconnect) -> JSONResponse:
        # The client (or a connection timeout, app/serving.py) closed the connection mid-body: nobody reads
        # this answer, but it is not a server error either, so it is not logged or counted as one.
        return problem(400, "Client disconnected", "The connection closed before the body was complete")

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error on %s %s (request %s)", request.method, request.url.path,
                      request.scope.get("state", {}).get("request_id", "-"))
        return problem(500, "Internal error", "An unexpected error occurred; it has been logged.")


def _prefixed(request: Request, loc: str) -> str:
    """Domain errors name fields inside the spec; prefix the body field the spec came in."""
    path = request.url.path
    if path.endswith("/translate"):
        return loc if loc.startswith(("source", "targets")) else f"source.{loc}"
    if path.endswith(("/execute", "/compare")):
        return loc if loc.startswith(("spec", "input", "semantics", "backend", "body")) else f"spec.{loc}"
    return loc


def dumps(body: Any) -> bytes:
    return json.dumps(body, allow_nan=False, separators=(",", ":")).encode()
