"""POST /v1/translate's fast path (app/clipbridge/api/translate_route.py) answers exactly what the generic path answers.

A body sent chunked (no Content-Length) always takes FastAPI's generic path; the same bytes with a
Content-Length take the fast path when they are small, JSON and valid, and are replayed to the generic path
otherwise. Both must give the same status, content type and bytes, for answers and refusals alike."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from clipbridge.api import translate_route

OK = {"source": {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "min": 0, "max": 6.125}}
BODIES = {
    "default": json.dumps(OK),
    "all-nine-no-artifacts": json.dumps({**OK, "targets": ["openvino", "directml", "stablehlo", "webnn", "tosa",
                                                        "tensorrt", "tflite", "coreml", "pytorch"],
                                         "include": []}),
    "renamed-spec": json.dumps({"spec": OK["source"], "mode": "literal"}),
    "rejected": json.dumps({"source": {"dialect": "tosa", "dtype": "fp32", "min_val": 6, "max_val": 0}}),
    "bad-version": json.dumps({**OK, "targets": [{"dialect": "openvino", "version": "opset999"}]}),
    "invalid": json.dumps({**OK, "mode": "fast"}),
    "both-names": json.dumps({**OK, "spec": OK["source"]}),
    "empty": "",
    "not-json": "{nope",
    "nan-token": '{"source": {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "min": NaN}}',
    "too-deep": '{"source": ' + "[" * 100 + "]" * 100 + "}",
    "bad-utf8": b'{"source": "\xff"}'.decode("latin-1"),
    "array": "[1, 2]",
}


def _chunks(data: bytes) -> Iterator[bytes]:
    yield data[: len(data) // 2]
    yield data[len(data) // 2:]


@pytest.mark.parametrize("name", list(BODIES))
def test_fast_path_answers_like_the_generic_path(client, name: str) -> None:
    data = BODIES[name].encode("latin-1")
    headers = {"content-type": "application/json"}
    fast = client.post("/v1/translate", content=data, headers=headers)
    generic = client.post("/v1/translate", content=_chunks(data), headers=headers)
    assert (fast.status_code, fast.headers["content-type"], fast.content) == \
        (generic.status_code, generic.headers["content-type"], generic.content)


def test_the_fast_path_takes_small_valid_json_only(client, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast path parses what it takes: a body over FAST_MAX_BODY or of another type is never parsed there."""
    parsed: list[bytes] = []
    real = translate_route._parse
    monkeypatch.setattr(translate_route, "_parse", lambda body: parsed.append(body) or real(body))
    data = BODIES["default"].encode()
    assert client.post("/v1/translate", content=data, headers={"content-type": "application/json"}).status_code \
        == 200
    assert parsed == [data]
    client.post("/v1/translate", content=data, headers={"content-type": "text/plain"})
    assert client.post("/v1/translate", content=_chunks(data), headers={"content-type": "application/json"}) \
        .status_code == 200
    padded = data[:-1] + b" " * translate_route.FAST_MAX_BODY + b"}"
    assert client.post("/v1/translate", content=padded, headers={"content-type": "application/json"}) \
        .status_code == 200
    assert parsed == [data]
