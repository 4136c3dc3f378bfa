"""`python -m tests.fake_dialect.service < requests.json`: the clipbridge service (clipbridge.main's app, in-process through
Starlette's TestClient) with the fake dialect registered. Reads [[method, path, JSON body or null], ...] and prints
[[status, body], ...] as JSON (a body that is not JSON comes back as its text)."""

from __future__ import annotations

import json
import sys

import tests.fake_dialect.registered  # noqa: F401  (first: the registry line before the service is imported)
from clipbridge.main import app
from fastapi.testclient import TestClient


def main() -> int:
    answers = []
    with TestClient(app) as client:
        for method, path, body in json.load(sys.stdin):
            r = client.request(method, path, json=body)
            kind = r.headers.get("content-type", "")
            answers.append([r.status_code, r.json() if "json" in kind else r.text])
    json.dump(answers, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
