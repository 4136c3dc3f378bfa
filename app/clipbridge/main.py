"""The FastAPI application factory."""

from __future__ import annotations

import gc
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from fastapi import FastAPI
from starlette.exceptions import HTTPException
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from clipbridge import __version__
from clipbridge.api import problems
from clipbridge.api import chain_routes, deprecation, diff_routes, execute_routes, lint_routes, query_check, scan_routes
from clipbridge.api.routes import router
from clipbridge.api.security import ApiKeyGuard, cors_options, document_api_key
from clipbridge.api.docs import router as docs_router
from clipbridge.api.inspector import router as inspector_router
from clipbridge.api import fix_routes
from clipbridge.api.openapi_doc import document_headers
from clipbridge.service.execute import Slots
from clipbridge.core.memo import Memo
from clipbridge.engines import sandbox
from clipbridge.server.observability import Metrics, Observe, metrics_endpoint
from clipbridge.core.settings import Settings


def _too_large(limit: int) -> str:
    return (f"The body exceeds {limit} bytes (CLIPBRIDGE_MAX_BODY_BYTES; CLIPBRIDGE_MAX_NPY_BYTES for .npy; "
            "CLIPBRIDGE_MAX_MODEL_BYTES for /v1/models/)")


class _TooLarge(HTTPException):
    """Raised from receive() once a streamed body passes the limit. An HTTPException, so the body parsers let it
    through (FastAPI turns any other error while reading a body into 400) and the app answers 413."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, _too_large(limit))


class BodyLimit:
    """413 before a body over the limit is read: by Content-Length, or by counting a chunked stream."""

    def __init__(self, app: ASGIApp, limit: int, npy_limit: int | None = None, model_limit: int | None = None) -> None:
        self.app = app
        self.default_limit = limit
        self.npy_limit = npy_limit or limit
        self.model_limit = model_limit or limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        limit = self.npy_limit if path.endswith(".npy") else \
            self.model_limit if path.startswith("/v1/models/") else self.default_limit
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
                    raise _TooLarge(limit)
            return msg

        try:
            await self.app(scope, counting, send)
        except _TooLarge:
            await self._reject(scope, receive, send, limit)

    async def _reject(self, scope: Scope, receive: Receive, send: Send, limit: int) -> None:
        resp = problems.problem(413, "Payload too large", _too_large(limit))
        await resp(scope, receive, send)


def _lifespan(settings: Settings, freeze_gc: bool) -> Callable[[FastAPI], AbstractAsyncContextManager[None]]:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # Start the sandbox workers now, off the event loop, so that no request pays for their start.
        pool = sandbox.ensure(settings)
        threading.Thread(target=pool.warm, name="sandbox-warm", daemon=True).start()
        if freeze_gc:
            # What start-up imported (~400k objects: NumPy, pydantic's schemas, the dialects) lives as long as the
            # process: out of the cyclic GC's full passes, which otherwise rescan all of it every few thousand
            # requests. Only the served app does this: a test process makes many apps and must free them.
            gc.collect()
            gc.freeze()
        yield
    return lifespan


def create_app(settings: Settings | None = None, freeze_gc: bool = False) -> FastAPI:
    """The app; `freeze_gc`: move what start-up allocated out of the cyclic GC's reach (the served app)."""
    settings = settings or Settings.from_env()
    # /docs comes from clipbridge.api.docs (offline, under the inspector's CSP), not FastAPI's CDN pages; no /redoc.
    app = FastAPI(title="clipbridge", version=__version__, docs_url=None, redoc_url=None,
                  lifespan=_lifespan(settings, freeze_gc),
                  swagger_ui_oauth2_redirect_url=None,
                  dependencies=[query_check.KNOWN_QUERY],  # every route: an unknown query parameter is a 400
                  description="Translate the Clip/Clamp operator between ten ML dialects (ONNX, OpenVINO, "
                              "DirectML, StableHLO, WebNN, TOSA, TFLite, TensorRT, Core ML, PyTorch), and say "
                              "exactly where the meaning drifts.")
    app.include_router(router)
    app.include_router(execute_routes.router)
    app.include_router(execute_routes.binary)
    app.include_router(inspector_router)
    app.include_router(docs_router)
    app.include_router(scan_routes.router)
    app.include_router(fix_routes.router)
    app.include_router(lint_routes.router)
    app.include_router(diff_routes.router)
    app.include_router(chain_routes.router)
    problems.install(app)
    app.state.settings = settings
    app.state.memo = Memo(settings.memo_bytes, settings.memo_entries)
    app.state.slots = Slots(settings.max_concurrent_executions, settings.max_execution_seconds)
    app.add_middleware(deprecation.DeprecationHeaders)
    app.add_middleware(BodyLimit, limit=settings.max_body_bytes, npy_limit=settings.max_npy_bytes,
                       model_limit=settings.max_model_bytes)
    # Outermost last: Observe (request id, access log, metrics) > CORS > API key > BodyLimit > Deprecation > routes.
    query_check.document(app)
    deprecation.document(app)
    if settings.api_key:
        app.add_middleware(ApiKeyGuard, key=settings.api_key)
        document_api_key(app)
    if settings.cors_origins:
        app.add_middleware(CORSMiddleware, **cors_options(settings.cors_origins))
    app.state.metrics = Metrics()
    app.add_api_route("/metrics", metrics_endpoint, methods=["GET"], include_in_schema=False, tags=["ops"])
    app.add_middleware(Observe, metrics=app.state.metrics, log=settings.access_log)
    document_headers(app)
    return app


app = create_app(freeze_gc=True)  # what `clipbridge serve` and uvicorn clipbridge.main:app run
