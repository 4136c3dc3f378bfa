"""`python -m tests.fake_engine.service MODEL.onnx`: the clipbridge service (clipbridge.main's app through
Starlette's TestClient, its diffs in sandbox workers) answering GET /v1/version and POST /v1/models/diff with
engine=fake,onnxruntime; prints [[status, body], [status, body]] as JSON. Run with CLIPBRIDGE_ENGINES set."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from clipbridge.main import app
from fastapi.testclient import TestClient


def main(model: str) -> int:
    with TestClient(app) as client:
        version = client.get("/v1/version")
        diff = client.post("/v1/models/diff?engine=fake,onnxruntime&probe=off",
                           files={"model": ("m.onnx", Path(model).read_bytes(), "application/octet-stream")})
        schema = client.get("/openapi.json")
    names = schema.json()["components"]["schemas"]["DiffEngine"]["properties"]["name"]
    json.dump([[version.status_code, version.json()], [diff.status_code, diff.json()], names], sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
