"""Access control: an optional API key for every /v1 endpoint, and the CORS allow-list.

With CLIPBRIDGE_API_KEY set, a request to a path under /v1 must carry the key as `X-API-Key: <key>` or
`Authorization: Bearer <key>` (compared in constant time); otherwise 401 problem+json with
WWW-Authenticate, before the body is read. /healthz, /metrics, /, /static, /docs and /openapi.json stay
open. CLIPBRIDGE_CORS_ORIGINS (comma-separated) lets those origins call the API from a browser; empty (the
default) adds no CORS headers at all: same origin only.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI
from starlette.types import ASGIApp, Receive, Scope, Send

from clipbridge.api import problems

PROTECTED_PREFIX = "/v1"
CHALLENGE = 'Bearer realm="clipbridge", ApiKey realm="clipbridge" header="X-API-Key"'
CORS_ALLOW_HEADERS = ["X-API-Key", "Content-Type", "Authorization", "X-Request-ID"]
CORS_EXPOSE_HEADERS = ["X-Request-ID", "Retry-After", "X-Clipbridge-Semantics", "X-Clipbridge-Backend",
                       "X-Clipbridge-Reading", "Content-Disposition", "X-Clipbridge-Verdict", "Deprecation",
                       "X-Clipbridge-Deprecated"]


def route_path(scope: Scope) -> str:
    """The path the router matches (without a --root-path prefix), so a root path cannot dodge the check."""
    path: str = scope.get("path", "")
    root: str = scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root):]
    return path


def protected(path: str) -> bool:
    return path.startswith(PROTECTED_PREFIX)


def presented_key(headers: list[tuple[bytes, bytes]]) -> bytes | None:
    """The key a request carries: X-API-Key, else an Authorization Bearer token."""
    bearer = None
    for name, value in headers:
        if name == b"x-api-key":
            return value.strip()
        if name == b"authorization":
            scheme, _, token = value.strip().partition(b" ")
            if scheme.lower() == b"bearer" and token.strip():
                bearer = token.strip()
    return bearer


class ApiKeyGuard:
    """Pure ASGI: 401 for a /v1 request without the key, before anything reads the body."""

    def __init__(self, app: ASGIApp, key: str) -> None:
        self.app = app
        self.key = key.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not protected(route_path(scope)):
            await self.app(scope, receive, send)
            return
        given = presented_key(scope["headers"])
        if given is not None and hmac.compare_digest(given, self.key):
            await self.app(scope, receive, send)
            return
        detail = ("This endpoint needs the API key: send X-API-Key: <key> or Authorization: Bearer <key>"
                  if given is None else "The API key is not valid")
        resp = problems.problem(401, "Unauthorized", detail, headers={"WWW-Authenticate": CHALLENGE})
        await resp(scope, receive, send)


def cors_options(origins: tuple[str, ...]) -> dict[str, Any]:
    """CORSMiddleware arguments for an allow-list (`*` allows any origin, without credentials)."""
    return {"allow_origins": list(origins), "allow_methods": ["GET", "POST"], "allow_headers": CORS_ALLOW_HEADERS,
            "expose_headers": CORS_EXPOSE_HEADERS, "allow_credentials": False, "max_age": 600}


def document_api_key(app: FastAPI) -> None:
    """Declare the key in /openapi.json (security schemes, and a 401 on every /v1 operation), so /docs can send
    it and schema-driven clients know about the 401."""
    build: Callable[[], dict[str, Any]] = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        schema = build()
        comps = schema.setdefault("components", {})
        comps.setdefault("securitySchemes", {}).update({
            "ApiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
            "Bearer": {"type": "http", "scheme": "bearer"}})
        body = {"$ref": "#/components/schemas/Problem"} if "Problem" in comps.get("schemas", {}) else {}
        for path, item in schema.get("paths", {}).items():
            if not protected(path):
                continue
            for op in item.values():
                if not isinstance(op, dict) or "responses" not in op:
                    continue
                op["security"] = [{"ApiKey": []}, {"Bearer": []}]
                op["responses"].setdefault("401", {
                    "description": "The API key is missing or not valid",
                    "content": {problems.PROBLEM: {"schema": body}}})
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
