"""The FastAPI application factory."""

from __future__ import annotations

from fastapi import FastAPI
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app import __version__
from app.api import problems
from app.api.routes import router
from app.errors import ClipBridgeError
from app.settings import Settings


class BodyLimit:
    """413 before a body over the limit is read: by Content-Length, or by counting a chunked stream."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    too_big = int(value) > self.limit
                except ValueError:
                    too_big = False
                if too_big:
                    await self._reject(scope, receive, send)
                    return
        seen = 0

        async def counting() -> Message:
            nonlocal seen
            msg = await receive()
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > self.limit:
                    raise ClipBridgeError("body too large")
            return msg

        try:
            await self.app(scope, counting, send)
        except ClipBridgeError:
            await self._reject(scope, receive, send)

    async def _reject(self, scope: Scope, receive: Receive, send: Send) -> None:
        resp = problems.problem(413, "Payload too large", f"The body exceeds {self.limit} bytes "
                                "(CLIPBRIDGE_MAX_BODY_BYTES)")
        await resp(scope, receive, send)


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings.from_env()
    app = FastAPI(title="clipbridge", version=__version__,
                  description="Translate the Clip/Clamp operator between DirectML, OpenVINO and ONNX, and say "
                              "exactly where the meaning drifts.")
    app.include_router(router)
    problems.install(app)
    app.state.settings = settings
    app.add_middleware(BodyLimit, limit=settings.max_body_bytes)
    return app


app = create_app()
