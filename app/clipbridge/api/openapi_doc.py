"""Response headers in the OpenAPI document: every header the service sends, declared where it is sent, so
schema-driven clients (and schemathesis's response_headers_conformance) can rely on them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI

from clipbridge.service.execute import BACKENDS

REQUEST_ID = {"description": "The caller's X-Request-ID when it is 1 to 128 of [A-Za-z0-9._:-], else a fresh uuid4 "
                             "hex; also in the access log line", "required": True,
              "schema": {"type": "string", "pattern": "^[A-Za-z0-9._:-]{1,128}$"}}
RETRY_AFTER = {"description": "Seconds to wait before retrying", "required": True,
               "schema": {"type": "integer", "minimum": 0}}
# Per operation and status: the headers beyond X-Request-ID (which every response carries).
EXTRA: dict[tuple[str, str, str], dict[str, dict[str, Any]]] = {
    ("/v1/execute.npy", "post", "200"): {
        "X-Clipbridge-Semantics": {"description": "The semantics the output was computed under (dialect[:version])",
                                   "required": True, "schema": {"type": "string", "minLength": 1}},
        "X-Clipbridge-Backend": {"description": "The backend that computed it", "required": True,
                                 "schema": {"type": "string", "enum": [b for b in BACKENDS if b != "auto"]}},
        "X-Clipbridge-Reading": {"description": "The reading applied, when one did (an ambiguous DirectML min > "
                                                "max's formula; webnn: spec or chromium; tensorrt: header or "
                                                "observed; tflite: xnnpack or builtin)",
                                 "required": False, "schema": {"type": "string"}}},
    ("/v1/models/rewrite", "post", "200"): {
        "X-Clipbridge-Opset": {"description": "ONNX opset of the rewritten model", "required": True,
                               "schema": {"type": "integer", "minimum": 1}},
        "X-Clipbridge-Rewritten": {"description": "How many Clips were rewritten", "required": True,
                                   "schema": {"type": "integer", "minimum": 0}},
        "X-Clipbridge-Skipped": {"description": "How many Clips were left as they were", "required": True,
                                 "schema": {"type": "integer", "minimum": 0}},
        "Content-Disposition": {"description": "attachment; filename=\"rewritten.onnx\"", "required": True,
                                "schema": {"type": "string"}}},
    # The model download (Accept: application/octet-stream) only: the JSON report says all of this in its body.
    ("/v1/models/fix", "post", "200"): {
        "Content-Disposition": {"description": "With the model: attachment; filename=\"fixed-for-TARGET.onnx\"",
                                "required": False, "schema": {"type": "string"}},
        "X-Clipbridge-Verdict": {"description": "With the model: the proof's verdict (the report's `verdict`)",
                                 "required": False, "schema": {"type": "string", "minLength": 1}},
        "X-Clipbridge-Reference": {"description": "With the model: the engine whose results it keeps",
                                   "required": False, "schema": {"type": "string"}},
        "X-Clipbridge-Target": {"description": "With the model: the engine it is written for",
                                "required": False, "schema": {"type": "string"}},
        "X-Clipbridge-Rules-Applied": {"description": "With the model: how many rewrites it carries",
                                       "required": False, "schema": {"type": "integer", "minimum": 0}}},
}


def document_headers(app: FastAPI) -> None:
    """Wrap app.openapi (after every other wrapper, so added responses such as the 401s are covered too)."""
    build: Callable[[], dict[str, Any]] = app.openapi

    def openapi() -> dict[str, Any]:
        schema = build()
        for path, item in schema.get("paths", {}).items():
            for method, op in item.items():
                if not isinstance(op, dict):
                    continue
                for status, response in op.get("responses", {}).items():
                    headers = response.setdefault("headers", {})
                    headers.setdefault("X-Request-ID", REQUEST_ID)
                    if status == "503":
                        headers.setdefault("Retry-After", RETRY_AFTER)
                    for name, spec in EXTRA.get((path, method, status), {}).items():
                        headers.setdefault(name, spec)
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
