"""Strict request handling for JSON routes: application/json only, no NaN/Infinity tokens, bounded nesting."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import HTTPException, Request, Response
from fastapi.routing import APIRoute

from clipbridge.api import problems
from clipbridge.core.json_depth import MAX_JSON_DEPTH, too_deep


def _reject_constant(name: str) -> Any:
    raise ValueError(f"bare {name} is not JSON; send it as a string (\"nan\", \"inf\", \"-inf\")")


class JSONTooDeep(HTTPException):
    """400 naming the field whose JSON nests deeper than MAX_JSON_DEPTH. An HTTPException, because FastAPI
    turns any other error raised while it reads a body into a bare 400."""

    def __init__(self, loc: str) -> None:
        msg = f"the JSON is nested deeper than {MAX_JSON_DEPTH} levels"
        super().__init__(400, f"{msg} ({loc})")
        self.errors = [{"loc": loc, "msg": msg}]


class StrictJSONRequest(Request):
    """Request whose JSON parser refuses NaN/Infinity tokens (they are not JSON)."""

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            body = await self.body()
            if too_deep(body):
                raise JSONTooDeep("body")
            try:
                self._json = json.loads(body, parse_constant=_reject_constant)
            except RecursionError:  # not reached past the check above; kept so that it can never be a 500
                raise JSONTooDeep("body") from None
            except ValueError as exc:  # JSONDecodeError, bad UTF-8, and the NaN/Infinity refusal above
                raise HTTPException(400, f"The body is not valid JSON: {exc}") from None
        return self._json


class StrictJSONRoute(APIRoute):
    """Routes with POST bodies: application/json required (415 otherwise), strict JSON parsing."""

    def get_route_handler(self) -> Callable[[Request], Awaitable[Response]]:
        handler = super().get_route_handler()

        async def strict(request: Request) -> Response:
            if request.method == "POST":
                ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
                if ctype != "application/json" and not ctype.endswith("+json"):
                    return problems.problem(415, "Unsupported media type",
                                            f"Send the body as application/json (got {ctype or 'no content type'})")
            return await handler(StrictJSONRequest(request.scope, request.receive))

        return strict


