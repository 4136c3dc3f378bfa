"""The one place where errors become HTTP: RFC 9457 application/problem+json bodies."""

from __future__ import annotations

import json
import logging
import typing
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect

from clipbridge.core.errors import ClipBridgeError, SpecError
from clipbridge.service.field_errors import field_errors
from clipbridge.engines.sandbox import SandboxError

log = logging.getLogger("clipbridge")
PROBLEM = "application/problem+json"


def problem(status: int, title: str, detail: str, errors: list[dict[str, str]] | None = None,
            headers: dict[str, str] | None = None) -> JSONResponse:
    body: dict[str, Any] = {"type": "about:blank", "title": title, "status": status, "detail": detail}
    if errors is not None:
        body["errors"] = errors
    return JSONResponse(body, status_code=status, media_type=PROBLEM, headers=headers)


def _body_type(request: Request) -> Any:
    """The pydantic model the route validates its body with (the root for clipbridge.service.field_errors' type walk)."""
    endpoint = request.scope.get("endpoint")
    try:
        hints = typing.get_type_hints(endpoint) if endpoint is not None else {}
    except (NameError, TypeError):
        return None
    return next((h for h in hints.values() if isinstance(h, type) and issubclass(h, BaseModel)), None)


def install(app: FastAPI) -> None:
    @app.exception_handler(ClipBridgeError)
    async def domain_error(request: Request, exc: ClipBridgeError) -> JSONResponse:
        loc = _prefixed(request, exc.loc) if exc.loc else None
        if isinstance(exc, SandboxError):  # which request, which stage, which signal: for whoever reads the log
            log.warning("sandbox %s: %s, signal %s (request %s)", exc.reason, exc.stage, exc.signal,
                        request.scope.get("state", {}).get("request_id", "-"))
        errors = [{"loc": loc, "msg": exc.message}] if loc else None
        headers = {"Retry-After": str(exc.retry_after)} if hasattr(exc, "retry_after") else None
        detail = f"{exc.message} ({loc})" if loc else exc.message
        return problem(exc.status, _title(exc, loc), detail, errors, headers)

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        errs = exc.errors()
        if any(e.get("type") == "json_invalid" for e in errs):
            detail = "; ".join(str(e.get("ctx", {}).get("error", e.get("msg"))) for e in errs)
            return problem(400, "Malformed JSON", f"The body is not valid JSON: {detail}")
        body = [e for e in errs if tuple(e.get("loc", ()))[:1] == ("body",)]
        items = field_errors(body, _body_type(request), drop=1) if body else []
        items += field_errors([e for e in errs if e not in body])
        items = items[:50]
        detail = "; ".join(f"{i['loc']}: {i['msg']}" for i in items[:5])
        return problem(422, "Invalid request", detail, items)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        title = getattr(exc, "title", None) or {
            400: "Bad request", 404: "Not found", 405: "Method not allowed", 413: "Payload too large",
            415: "Unsupported media type"}.get(exc.status_code, "Error")
        return problem(exc.status_code, title, str(exc.detail), getattr(exc, "errors", None),
                       headers=getattr(exc, "headers", None))

    @app.exception_handler(ClientDisconnect)
    async def client_gone(request: Request, exc: ClientDisconnect) -> JSONResponse:
        # The client (or a connection timeout, app/clipbridge/server/serving.py) closed the connection mid-body: nobody reads
        # this answer, but it is not a server error either, so it is not logged or counted as one.
        return problem(400, "Client disconnected", "The connection closed before the body was complete")

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error on %s %s (request %s)", request.method, request.url.path,
                      request.scope.get("state", {}).get("request_id", "-"))
        return problem(500, "Internal error", "An unexpected error occurred; it has been logged.")


def _title(exc: ClipBridgeError, loc: str | None) -> str:
    """A spec rule broken by the input tensor (JSON `input`, a .npy body) is about the data, not the spec."""
    if isinstance(exc, SpecError) and loc and (loc == "body" or loc.startswith("input")):
        return "Invalid input tensor"
    return exc.title


def _prefixed(request: Request, loc: str) -> str:
    """Domain errors name fields inside the spec; prefix the body field the spec came in."""
    path = request.url.path
    if path.endswith("/translate"):
        return loc if loc.startswith(("spec", "targets")) else f"spec.{loc}"
    if path.endswith(("/execute", "/compare", "/probe", "/bundle")):
        return loc if loc.startswith(("spec", "input", "target", "backend", "reading", "body")) else f"spec.{loc}"
    if path.endswith("/execute.npy"):  # the options travel in the `request` query parameter
        if loc.startswith(("body", "request")):
            return loc
        return f"request.{loc}" if loc.startswith(("target", "reading")) else f"request.spec.{loc}"
    return loc


def dumps(body: Any) -> bytes:
    return json.dumps(body, allow_nan=False, separators=(",", ":")).encode()
