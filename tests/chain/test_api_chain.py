"""POST /v1/models/chain: the body through the sandbox, and every error a 4xx problem naming its field."""

from __future__ import annotations

import numpy as np
import pytest

from tests.chain import models
from tests.chain.conftest import npz

URL = "/v1/models/chain"


@pytest.fixture(scope="module")
def small() -> bytes:
    return models.clamp_min_int()


def post(client, model: bytes, query: str, inputs: bytes | None = None):  # noqa: ANN001
    files = {"model": ("m.pt2", model)} | ({"inputs": ("in.npz", inputs)} if inputs is not None else {})
    return client.post(URL + query, files=files)


@pytest.mark.slow
def test_a_chain_runs_in_the_sandbox(client, small: bytes) -> None:  # noqa: ANN001
    r = post(client, small, "?chain=torch,onnx,openvino")
    assert r.status_code == 200, r.text[:400]
    body = r.json()
    assert [h["to"] for h in body["hops"]] == ["onnx", "openvino"]
    ov = body["hops"][1]
    assert ov["from"] == "onnx" and ov["engine"]["precision"] == "f32"
    assert ov["against_source"]["outputs"][0]["differing"] > 0 and ov["against_previous"]["reference"] == "onnx"


@pytest.mark.slow
def test_static_only(client, small: bytes) -> None:  # noqa: ANN001
    r = post(client, small, "?chain=onnx&static=true")
    assert r.status_code == 200, r.text[:400]
    assert r.json()["verdict"] is None and r.json()["static"] and r.json()["hops"][0]["lowering"][0]["became"] == "Clip(x, 0.0)"


def _problem(r, status: int, loc: str) -> None:  # noqa: ANN001
    assert r.status_code == status, r.text[:400]
    assert r.headers["content-type"].startswith("application/problem+json")
    assert r.json()["errors"][0]["loc"] == loc, r.text


@pytest.mark.parametrize(("query", "model", "inputs", "status", "loc"), [
    pytest.param("?chain=onnx,bogus", "small", None, 400, "query.chain", id="unknown-stage"),
    pytest.param("?chain=onnx,onnx", "small", None, 400, "query.chain", id="repeated-stage"),
    pytest.param("", "small", None, 422, "query.chain", id="no-chain"),
    pytest.param("?chain=onnx,tflite", b"\x08\x07junk", None, 400, "query.chain", id="tflite-needs-a-pt2"),
    pytest.param("?chain=onnx", b"PK\x03\x04junk", None, 400, "model", id="not-a-pt2"),
    pytest.param("?chain=onnx,openvino", b"\x08\x07junk", None, 400, "model", id="not-onnx"),
    pytest.param("?chain=onnx", "small", b"junk", 400, "inputs", id="bad-npz"),
    pytest.param("?chain=onnx", "small", npz(y=np.zeros(3, np.float32)), 400, "inputs", id="npz-wrong-name"),
    pytest.param("?chain=onnx", b"", None, 400, "model", id="empty-model"),
])
def test_errors_name_the_field(client, small: bytes, query: str, model, inputs,  # noqa: ANN001
                               status: int, loc: str) -> None:
    _problem(post(client, small if model == "small" else model, query, inputs), status, loc)


def test_a_missing_converter_is_a_422_with_its_build_command(client, small: bytes, tmp_path,  # noqa: ANN001
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The server never builds the converter environment: it names the command that does."""
    monkeypatch.setenv("CLIPBRIDGE_CACHE", str(tmp_path))
    r = post(client, small, "?chain=onnx,tflite")
    _problem(r, 422, "query.chain")
    assert "clipbridge chain-env build" in r.json()["detail"]
    assert not (tmp_path / "converters").exists()
