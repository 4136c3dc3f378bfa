"""A fixed model is a file (issue 43): POST /v1/models/fix answers the model itself with `Accept:
application/octet-stream`, the JSON report otherwise; the client's `fix(...).save(path)` writes it."""

from __future__ import annotations

import base64

import onnx
import pytest
from starlette.requests import Request

from clipbridge.api.accept import prefers
from clipbridge.fix.models import FixResponse

OCTET = "application/octet-stream"
FIX = "/v1/models/fix?reference=onnxruntime&target=openvino"

ACCEPT = [
    pytest.param(None, False, id="no-accept"),
    pytest.param("*/*", False, id="anything"),
    pytest.param("application/json", False, id="json"),
    pytest.param(OCTET, True, id="octet"),
    pytest.param("APPLICATION/OCTET-STREAM", True, id="octet-upper-case"),
    pytest.param("application/*", False, id="application-wildcard-tie"),
    pytest.param(f"{OCTET}, application/json", False, id="tie-keeps-json"),
    pytest.param(f"application/json;q=0.5, {OCTET}", True, id="octet-preferred-by-q"),
    pytest.param(f"{OCTET};q=0.2, */*;q=0.1", True, id="octet-over-wildcard"),
    pytest.param(f"{OCTET};q=0, */*", False, id="octet-refused"),
    pytest.param(f"{OCTET};q=bad", False, id="octet-bad-q"),
    pytest.param("text/html", False, id="neither-keeps-json"),
]


@pytest.mark.parametrize("accept,octet", ACCEPT)
def test_accept_picks_the_model_only_when_asked_for(accept, octet):
    headers = [(b"accept", accept.encode())] if accept is not None else []
    request = Request({"type": "http", "headers": headers})
    assert prefers(request, OCTET, over="application/json") is octet


@pytest.fixture(scope="module")
def model() -> bytes:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("openvino")
    from tests.fix import models
    return models.clip(0.0, 6.0).SerializeToString()


def _post(client, model: bytes, accept: str | None):
    headers = {"Accept": accept} if accept else {}
    return client.post(FIX, files={"model": ("m.onnx", model, OCTET)}, headers=headers)


@pytest.mark.engines
def test_octet_stream_is_the_model_file_with_its_verdict(client, model):
    r = _post(client, model, OCTET)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == OCTET
    assert r.headers["content-disposition"] == 'attachment; filename="fixed-for-openvino.onnx"'
    assert r.headers["x-clipbridge-verdict"] == "equal"
    assert (r.headers["x-clipbridge-reference"], r.headers["x-clipbridge-target"]) == ("onnxruntime", "openvino")
    assert int(r.headers["x-clipbridge-rules-applied"]) >= 1
    written = onnx.load_from_string(r.content)
    onnx.checker.check_model(written, full_check=True)
    assert any(n.op_type == "Where" for n in written.graph.node)  # the NaN guard, the written model's rewrite


@pytest.mark.engines
@pytest.mark.parametrize("accept", [None, "application/json", "*/*"], ids=["no-accept", "json", "anything"])
def test_json_stays_the_default(client, model, accept):
    r = _post(client, model, accept)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "application/json"
    assert "content-disposition" not in r.headers and "x-clipbridge-verdict" not in r.headers
    body = FixResponse.model_validate(r.json())
    onnx.checker.check_model(onnx.load_from_string(base64.b64decode(body.model.onnx_base64)), full_check=True)


@pytest.mark.engines
@pytest.mark.parametrize("report", [True, False], ids=["with-report", "model-only"])
def test_client_fix_saves_the_model(client, model, tmp_path, report):
    from clipbridge.client import Client
    fixed = Client(http=client).fix(model, reference="onnxruntime", target="openvino", report=report)
    out = fixed.save(tmp_path / "m.fixed.onnx")
    assert out.read_bytes() == fixed.model
    onnx.checker.check_model(onnx.load(str(out)), full_check=True)
    assert fixed.verdict == "equal"
    assert (fixed.report is not None) == report
    if report:
        assert fixed.report.verdict == fixed.verdict and fixed.report.rules_applied


def test_openapi_declares_both_answers(client):
    op = client.app.openapi()["paths"]["/v1/models/fix"]["post"]
    content = op["responses"]["200"]["content"]
    assert content["application/json"]["schema"] == {"$ref": "#/components/schemas/FixResponse"}
    assert content[OCTET]["schema"] == {"type": "string", "format": "binary"}
    headers = op["responses"]["200"]["headers"]
    assert not headers["X-Clipbridge-Verdict"]["required"] and not headers["Content-Disposition"]["required"]
