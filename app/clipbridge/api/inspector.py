"""The web spec inspector: GET / (static HTML) and its assets under /static/, with a strict CSP.

The page is plain HTML, CSS and ES modules from clipbridge/static (no build step, nothing from other origins);
every dynamic value reaches the DOM through textContent, and the CSP forbids inline scripts and styles.
"""

from __future__ import annotations

import re
from pathlib import Path

from fastapi import APIRouter, HTTPException
from fastapi.responses import FileResponse

STATIC = Path(__file__).resolve().parent.parent / "static"
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "object-src 'none'; base-uri 'none'; frame-ancestors 'none'")
HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
           "Cache-Control": "no-cache"}
TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
         ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml", ".png": "image/png",
         ".onnx": "application/octet-stream"}
# example.onnx is the model behind "Try the example model" (a copy of docs/example.onnx, shipped as package data).
ASSET = re.compile(r"[a-z0-9][a-z0-9_-]*\.(?:js|css|svg|png|onnx)")

# Listed once: a request's name is looked up in this set, never handed to the filesystem (a 300-byte name
# made os.stat raise ENAMETOOLONG, a 500).
ASSETS = frozenset(p.name for p in STATIC.iterdir() if ASSET.fullmatch(p.name) and p.is_file())

router = APIRouter(include_in_schema=False)


@router.get("/")
def inspector() -> FileResponse:
    """The inspector page."""
    return FileResponse(STATIC / "index.html", media_type=TYPES[".html"], headers=HEADERS)


@router.get("/static/{name}")
def asset(name: str) -> FileResponse:
    """One file of app/clipbridge/static, by plain name only (no paths, no dotfiles)."""
    if name not in ASSETS:
        raise HTTPException(404, f"no static file {name[:64]!r}")
    path = STATIC / name
    return FileResponse(path, media_type=TYPES[path.suffix], headers=HEADERS)
