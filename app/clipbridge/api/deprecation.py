"""A request that used an old name is answered with a `Deprecation` header (docs/api.md#one-vocabulary).

The request models read their old field names (clipbridge.api.model_base.Renamed: translate's `source`, the
execute family's `semantics`) until OLD_NAMES_UNTIL; each time one is read, `note(old, new)` records it for the
request being served. One pure ASGI middleware, `DeprecationHeaders`, gives every request a fresh record and adds
the headers to its answer (whatever the status), so no route does anything of its own:

    Deprecation: @1795478400                                  (RFC 9745: the date the names became old)
    X-Clipbridge-Deprecated: semantics -> targets (until 0.2.0)

Why a context variable holding a list: the body is validated in the request's task (or a thread or child task
started from it, which get a copy of the context, and so the same list); outside a request (the CLI, the Python
client validating a body before sending it) nothing is recorded.
"""

from __future__ import annotations

import calendar
import time
from collections.abc import Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # only the standard library at run time: the CLI reads OLD_NAMES_UNTIL through model_base
    from fastapi import FastAPI
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

OLD_NAMES_SINCE = "2026-11-24"  # 0.1.0, issue 27: the day `spec`, `targets`, `target` became the names
OLD_NAMES_UNTIL = "0.2.0"  # when the old names are refused
DEPRECATION = "@" + str(calendar.timegm(time.strptime(OLD_NAMES_SINCE, "%Y-%m-%d")))
WARNING_HEADER = "X-Clipbridge-Deprecated"
_USED: ContextVar[list[tuple[str, str]] | None] = ContextVar("clipbridge_deprecated_names", default=None)


def note(old: str, new: str) -> None:
    """Record that the request being served named `new` by its old name `old` (a no-op outside a request)."""
    used = _USED.get()
    if used is not None and (old, new) not in used:
        used.append((old, new))


def warning(used: list[tuple[str, str]]) -> str:
    return ", ".join(f"{old} -> {new} (until {OLD_NAMES_UNTIL})" for old, new in used)


class DeprecationHeaders:
    """Pure ASGI: a fresh record per request, and the headers on its answer when an old name was read."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        used: list[tuple[str, str]] = []
        token = _USED.set(used)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start" and used:
                message["headers"] = [*message.get("headers", ()), (b"deprecation", DEPRECATION.encode()),
                                      (WARNING_HEADER.lower().encode(), warning(used).encode("latin-1"))]
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        finally:
            _USED.reset(token)


HEADERS = {
    "Deprecation": {"description": "Sent when the request named a field by its old name (RFC 9745: the date the "
                                   f"names became old, {OLD_NAMES_SINCE}); they are read until {OLD_NAMES_UNTIL}",
                    "required": False, "schema": {"type": "string", "pattern": "^@[0-9]+$"}},
    WARNING_HEADER: {"description": "Each old name the request used and its new name: `old -> new (until "
                                    f"{OLD_NAMES_UNTIL})`, comma-separated", "required": False,
                     "schema": {"type": "string"}},
}


def document(app: FastAPI) -> None:
    """Declare the two headers on every response of the operations that take a JSON body or a JSON query
    parameter (the places an old name can be sent)."""
    build: Callable[[], dict[str, Any]] = app.openapi

    def openapi() -> dict[str, Any]:
        schema = build()
        for item in schema.get("paths", {}).values():
            for op in item.values():
                if isinstance(op, dict) and _takes_json(op):
                    for response in op.get("responses", {}).values():
                        response.setdefault("headers", {}).update(HEADERS)
        return schema

    app.openapi = openapi  # type: ignore[method-assign]


def _takes_json(op: dict[str, Any]) -> bool:
    content = op.get("requestBody", {}).get("content", {})
    # /v1/execute.npy carries its options (an ExecuteOptions, old names and all) as JSON in the `request` query.
    return "application/json" in content or any(p.get("name") == "request" and p.get("in") == "query"
                                                for p in op.get("parameters", []))
