"""HTTP routes: thin; parsing is pydantic's, meaning is app/, errors are app/clipbridge/api/problems.py's."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from clipbridge import __version__
from clipbridge.api.strict import StrictJSONRoute
from clipbridge.api.translate_route import TranslateRoute
from clipbridge.api.models import (DialectsResponse, Health, Problem, TranslateRequest, TranslateResponse,
                                   VersionResponse)
from clipbridge.engines.extras import versions
from clipbridge.service.capabilities import capabilities
from clipbridge.dialects.kit.common import Mode
from clipbridge.service.translate import translate_text

PROBLEMS = {status: {"model": Problem, "content": {"application/problem+json": {}}}
            for status in (400, 413, 415, 422)}
router = APIRouter(route_class=StrictJSONRoute)


@router.get("/healthz", response_model=Health, tags=["ops"])
def healthz() -> dict:
    return {"status": "ok", "version": __version__}


@router.get("/v1/version", response_model=VersionResponse, tags=["ops"])
def version() -> dict:
    """The package's version and each engine's installed version (null where it is not installed)."""
    return {"package": "clipbridge", "version": __version__, "engines": versions()}


@router.get("/v1/dialects", response_model=DialectsResponse, tags=["translate"])
def dialects() -> dict:
    """The capability matrix: per dialect and version, dtypes, ranks and the rules in force."""
    return capabilities()


def translate(body: TranslateRequest, request: Request) -> Response:
    """Translate a clip spec into other dialects, with drift findings, witnesses and artifacts."""
    # Served pre-serialized from the memo; allow_nan=False there guards the wire against bare NaN tokens.
    text = translate_text(body.spec, body.targets, Mode(body.mode), request.app.state.memo,
                          artifacts="artifacts" in body.include)
    request.app.state.metrics.count_findings(text)  # clipbridge_findings_total{code}
    return Response(text, media_type="application/json")


# Its own route class: a small valid JSON body skips FastAPI's generic body handling (app/clipbridge/api/translate_route.py).
router.add_api_route("/v1/translate", translate, methods=["POST"], response_model=TranslateResponse,
                     responses=PROBLEMS, tags=["translate"], route_class_override=TranslateRoute)
