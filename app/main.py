"""The FastAPI application factory."""

from __future__ import annotations

from fastapi import FastAPI
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app import __version__
from app.api import problems
from app.api import execute_routes
from app.api.routes import router
from app.execute import Slots
from app.settings import Settings


class _TooLarge(Exception):
    pass


class BodyLimit:
    """413 before a body over the limit is read: by Content-Length, or by counting a chunked stream."""

    def __init__(self, app: ASGIApp, limit: int, npy_limit: int | None = None) -> None:
        self.app = app
        self.default_limit = limit
        self.npy_limit = npy_limit or limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.npy_limit if scope.get("path", "").endswith(".npy") else self.default_limit
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    too_big = int(value) > limit
                except ValueError:
                    too_big = False
                if too_big:
                    await self._reject(scope, receive, send, limit)
                    return
        seen = 0

        async def counting() -> Message:
            nonlocal seen
            msg = await receive()
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > limit:
                    raise _TooLarge()
            return msg

        try:
            await self.app(scope, counting, send)
        except _TooLarge:
            await self._reject(scope, receive, send, limit)

    async def _reject(self, scope: Scope, receive: Receive, send: Send, limit: int) -> None:
        resp = problems.problem(413, "Payload too large", f"The body exceeds {limit} bytes "
                                "(CLIPBRIDGE_MAX_BODY_BYTES; CLIPBRIDGE_MAX_NPY_BYTES for .npy)")
        await resp(scope, receive, send)


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings.from_env()
    app = FastAPI(title="clipbridge", version=__version__,
                  description="Translate the Clip/Clamp operator between DirectML, OpenVINO and ONNX, and say "
                              "exactly where the meaning drifts.")
    app.include_router(router)
    app.include_router(execute_routes.router)
    app.include_router(execute_routes.binary)
    problems.install(app)
    app.state.settings = settings
    app.state.slots = Slots(settings.max_concurrent_executions)
    app.add_middleware(BodyLimit, limit=settings.max_body_bytes, npy_limit=settings.max_npy_bytes)
    return app


app = create_app()
