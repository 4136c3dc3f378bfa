"""POST /v1/translate's route: a small valid JSON request is validated once and answered without FastAPI's
generic body and dependency handling; everything else takes the generic path, unchanged.

A fresh translation is benchmarked against GET /healthz (docs/performance.md), and FastAPI's generic path (the
dependency solver, the body field's checks, a thread-pool hop for a sync endpoint) cost about as much as the
translation of the default targets. The fast path takes a request only when all of these hold: no
query string (the app-wide check, clipbridge.api.query_check, refuses any here), a Content-Length of at most
FAST_MAX_BODY bytes, the content type application/json, a body that parses as strict
JSON (no NaN tokens, not too deep) and validates as a TranslateRequest. Any other request, and any request
whose body could not be read, is handed to the generic path with the bytes already read replayed, so every
refusal (400, 413, 415, 422, a disconnect) is the generic path's own answer, byte for byte. Success answers
are the same text either way: the fast path calls the route's own endpoint, `endpoint(body, request)`.

The translation runs on the event loop, not a worker thread: it is pure CPU under the GIL either way, and for
a body of FAST_MAX_BODY bytes at most it takes milliseconds. A model-form source (a base64 ONNX model or IR
XML, parsed in a sandbox worker) still runs on the thread pool, so it never blocks the loop.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import Request, Response
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.types import Message

from clipbridge.api.translate_models import TranslateRequest
from clipbridge.api.strict import StrictJSONRoute
from clipbridge.core.json_depth import too_deep

FAST_MAX_BODY = 16 * 1024  # larger bodies (model-form sources) take the generic path


def _no_constant(name: str) -> Any:
    raise ValueError(f"bare {name}")  # the generic path words the refusal


def _content_length(request: Request) -> int | None:
    for name, value in request.scope["headers"]:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _is_json(request: Request) -> bool:
    for name, value in request.scope["headers"]:
        if name == b"content-type":
            return value.split(b";")[0].strip().lower() == b"application/json"
    return False


async def _read(request: Request) -> tuple[bytes | None, list[Message], BaseException | None]:
    """The body, and what to replay to the generic path: the messages read and the error receive() raised."""
    messages: list[Message] = []
    try:
        while True:
            msg = await request.receive()
            messages.append(msg)
            if msg["type"] != "http.request" or not msg.get("more_body", False):
                break
    except Exception as exc:  # noqa: BLE001 - replayed to the generic path, which answers it as it always has
        return None, messages, exc
    if messages[-1]["type"] != "http.request":
        return None, messages, None
    return b"".join(m.get("body", b"") for m in messages), messages, None


def _replaying(request: Request, messages: list[Message], error: BaseException | None) -> Request:
    """A request whose receive() gives the messages already read, then raises the error receive() raised (if
    any), then reads on."""
    pending = list(messages)
    receive = request.receive

    async def replay() -> Message:
        nonlocal error
        if pending:
            return pending.pop(0)
        if error is not None:
            exc, error = error, None
            raise exc
        return await receive()

    return Request(request.scope, replay)


def _parse(body: bytes) -> TranslateRequest | None:
    """The request, when the body is strict JSON that validates; None sends it to the generic path."""
    if not body or too_deep(body):
        return None
    try:
        data = json.loads(body, parse_constant=_no_constant)
        return TranslateRequest.model_validate(data)
    except (ValueError, ValidationError, RecursionError):  # JSONDecodeError and bad UTF-8 are ValueErrors
        return None


def _model_form(req: TranslateRequest) -> bool:
    """A source carrying a model or an IR document: parsed in a sandbox worker, so kept off the event loop."""
    fields = vars(req.spec)  # getattr of a field the spec lacks goes through pydantic's slow __getattr__
    return fields.get("model") is not None or fields.get("ir_xml") is not None


class TranslateRoute(StrictJSONRoute):
    """StrictJSONRoute with the fast path above, for an endpoint `(body: TranslateRequest, request: Request) ->
    Response`."""

    def get_route_handler(self) -> Callable[[Request], Awaitable[Response]]:
        generic = super().get_route_handler()
        endpoint: Callable[[TranslateRequest, Request], Response] = self.endpoint

        async def fast(request: Request) -> Response:
            length = _content_length(request)
            # A query string (translate takes none) goes the generic way too: its app-wide check answers it.
            if (request.method != "POST" or length is None or length > FAST_MAX_BODY or not _is_json(request)
                    or request.scope.get("query_string")):
                return await generic(request)
            body, messages, error = await _read(request)
            req = None if body is None else _parse(body)
            if req is None:
                return await generic(_replaying(request, messages, error))
            if _model_form(req):
                return await run_in_threadpool(endpoint, req, request)
            return endpoint(req, request)

        return fast
