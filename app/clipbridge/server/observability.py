"""Operations: request ids, JSON access logs and Prometheus metrics, in one pure ASGI middleware.

One middleware (not three) because each layer costs a coroutine per request and the translate path is
benchmarked against /healthz. Everything here is per app: `create_app` may run many times in one process
(the tests do), so each app has its own Prometheus registry.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from collections import Counter as Tally
from functools import lru_cache
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

access_log = logging.getLogger("clipbridge.access")

REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")  # an incoming X-Request-ID is echoed only if it matches
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
UNMATCHED = "<unmatched>"  # one label for every path no route matched (404s), so labels stay bounded
FINDINGS_CACHE_MAX_TEXT = 64 * 1024  # finding_codes keeps at most 256 of these: 16 MiB at worst
BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class Metrics:
    """The app's Prometheus registry: requests by method/route/status, latency, findings by code."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter("clipbridge_http_requests", "HTTP requests by method, route template and status",
                                ["method", "route", "status"], registry=self.registry)
        self.latency = Histogram("clipbridge_http_request_duration_seconds", "Time from the request's arrival "
                                 "to the last byte of the response", ["method", "route"], buckets=BUCKETS,
                                 registry=self.registry)
        self.in_flight = Gauge("clipbridge_http_requests_in_flight", "Requests being handled now",
                               registry=self.registry)
        self.findings = Counter("clipbridge_findings", "Drift findings in /v1/translate responses, by code",
                                ["code"], registry=self.registry)
        self._children: dict[tuple[str, str, int], tuple[Any, Any]] = {}
        self._finding_children: dict[str, Any] = {}

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        key = (method, route, status)
        pair = self._children.get(key)
        if pair is None:  # labels() takes a lock and formats; resolve each combination once
            pair = (self.requests.labels(method, route, str(status)), self.latency.labels(method, route))
            self._children[key] = pair
        pair[0].inc()
        pair[1].observe(seconds)

    def count_findings(self, translate_json: str) -> None:
        """Count the findings of a /v1/translate response: the codes its Answer carries, else read from the text
        (once per distinct response; a large one, which the memo does not keep either, is scanned every time
        rather than held by the cache)."""
        codes = getattr(translate_json, "codes", None)  # translate_text's Answer carries them
        if codes is None:
            codes = finding_codes(translate_json) if len(translate_json) <= FINDINGS_CACHE_MAX_TEXT else \
                finding_codes.__wrapped__(translate_json)
        for code, n in codes:
            child = self._finding_children.get(code)
            if child is None:
                child = self._finding_children[code] = self.findings.labels(code)
            child.inc(n)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


_CODE = re.compile(r'"code":"([^"\\]*)"')


@lru_cache(maxsize=256)
def finding_codes(translate_json: str) -> tuple[tuple[str, int], ...]:
    """(code, count) pairs of a translate response. The responses come from translate_text's memo, so the
    same str object recurs: its hash is cached and the lookup is an identity check, not a parse."""
    # A scan, not a parse (a response with artifacts runs to hundreds of KiB): in translate's compact JSON only a
    # finding has a "code" key, and a "code":" inside a string value would have its quotes escaped.
    return tuple(sorted(Tally(_CODE.findall(translate_json)).items()))


def request_id_of(scope: Scope) -> str | None:
    return scope.get("state", {}).get("request_id")


class Observe:
    """Outermost middleware: X-Request-ID in and out, one JSON access-log line, and the request metrics.

    The route label is the matched route's template (`/v1/translate`), read from the scope after routing;
    paths no route matched share one label. A request that raises is counted as 500.
    """

    def __init__(self, app: ASGIApp, metrics: Metrics, log: bool = True) -> None:
        self.app = app
        self.metrics = metrics
        self.log = log

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        rid = None
        for name, value in scope["headers"]:
            if name == b"x-request-id":
                text = value.decode("latin-1")
                if REQUEST_ID.fullmatch(text):
                    rid = text
                break
        if rid is None:
            rid = uuid.uuid4().hex
        scope.setdefault("state", {})["request_id"] = rid
        rid_header = (b"x-request-id", rid.encode("ascii"))
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", ()), rid_header]
            await send(message)

        self.metrics.in_flight.inc()
        try:
            await self.app(scope, receive, send_with_id)
        finally:
            self.metrics.in_flight.dec()
            seconds = time.perf_counter() - start
            method = scope["method"] if scope["method"] in METHODS else "OTHER"
            route = getattr(scope.get("route"), "path", None) or UNMATCHED
            self.metrics.observe(method, route, status, seconds)
            if self.log and access_log.isEnabledFor(logging.INFO):
                client = scope.get("client")
                access_log.info(json.dumps({
                    "ts": round(time.time(), 3), "method": scope["method"][:16], "path": scope["path"][:256],
                    "route": route, "status": status, "duration_ms": round(seconds * 1000, 3),
                    "request_id": rid, "client": f"{client[0]}:{client[1]}" if client else None}))


async def metrics_endpoint(request: Request) -> Response:
    """GET /metrics: the Prometheus text exposition of this process's registry."""
    return Response(request.app.state.metrics.exposition(), media_type=CONTENT_TYPE_LATEST)


class JsonLineFormatter(logging.Formatter):
    """The access logger's messages are already JSON; every other record becomes one JSON line too."""

    def format(self, record: logging.LogRecord) -> str:
        if record.name == access_log.name:
            return record.getMessage()
        out = {"ts": round(record.created, 3), "level": record.levelname.lower(), "logger": record.name,
               "message": record.getMessage()}
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out)


def log_config(level: str = "info") -> dict[str, Any]:
    """uvicorn's log_config for `clipbridge serve`: JSON lines on stdout (uvicorn's access log is off)."""
    level = level.upper()
    handler = {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stdout"}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": "clipbridge.server.observability.JsonLineFormatter"}},
        "handlers": {"default": handler},
        "loggers": {
            "uvicorn": {"handlers": ["default"], "level": level, "propagate": False},
            "uvicorn.error": {"level": level},
            "uvicorn.access": {"handlers": [], "level": "WARNING", "propagate": False},
            "clipbridge": {"handlers": ["default"], "level": level, "propagate": False},
            # access lines are INFO: they stay on unless the level is above info or CLIPBRIDGE_ACCESS_LOG=0
            "clipbridge.access": {"level": "INFO" if level in ("DEBUG", "INFO", "TRACE") else level},
        },
    }
