"""/docs (Swagger UI) offline: assets from the fastapi-offline package, a page without inline code.

FastAPI's own page loads Swagger UI from a CDN and starts it with an inline script. Here the assets come
from the installed `fastapi-offline` package (maintained, declared in pyproject.toml), the page is plain
HTML in app/clipbridge/static, and Swagger UI is started by app/clipbridge/static/docs.js, so /docs runs under the inspector's
CSP unchanged. There is no /redoc: ReDoc always loads its logo from cdn.redoc.ly, which the CSP blocks
(a console error), so it cannot run offline as it is shipped.
"""

from __future__ import annotations

from pathlib import Path

import fastapi_offline
from fastapi import APIRouter, HTTPException
from fastapi.responses import FileResponse

from clipbridge.api.inspector import HEADERS, STATIC

ASSETS = Path(fastapi_offline.__file__).resolve().parent / "static"
FILES = {"swagger-ui-bundle.js": "text/javascript; charset=utf-8", "swagger-ui.css": "text/css; charset=utf-8",
         "favicon.png": "image/png"}
# The assets change only with the package: a day in the browser cache is safe (the page stays no-cache).
ASSET_HEADERS = {**HEADERS, "Cache-Control": "public, max-age=86400"}

router = APIRouter(include_in_schema=False)


@router.get("/docs")
def swagger_ui() -> FileResponse:
    """Swagger UI for /openapi.json."""
    return FileResponse(STATIC / "docs.html", media_type="text/html; charset=utf-8", headers=HEADERS)


@router.get("/docs-assets/{name}")
def docs_asset(name: str) -> FileResponse:
    """One of the files the page loads, by exact name."""
    if name not in FILES:
        raise HTTPException(404, f"no docs asset {name[:64]!r}")
    return FileResponse(ASSETS / name, media_type=FILES[name], headers=ASSET_HEADERS)
