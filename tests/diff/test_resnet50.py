"""Issue 46's done-when: a ResNet-50 at 224x224 diffs through the CLI and over HTTP with the defaults (it was
refused: 77 MB of captured tensors against a fixed 64 MiB cap), and a server budget below a model's captures
answers in passes instead of refusing."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from clipbridge.cli.main import main
from clipbridge.core.settings import Settings
from clipbridge.main import create_app
from tests.diff.models_resnet50 import resnet50

pytestmark = [pytest.mark.engines, pytest.mark.slow]
URL = "/v1/models/diff"


@pytest.fixture(scope="module")
def r50() -> bytes:
    return resnet50()


def test_resnet50_diffs_through_the_cli_with_defaults(r50, tmp_path, capsys):
    path = tmp_path / "resnet50.onnx"
    path.write_bytes(r50)
    code = main(["diff", str(path), "--format", "json", "--probe", "off"])
    body = json.loads(capsys.readouterr().out)
    assert code in (0, 1) and body["verdict"] != "error" and body["passes"] >= 1


def test_resnet50_diffs_over_http_with_defaults(r50):
    with TestClient(create_app(Settings())) as client:
        r = client.post(URL + "?probe=off", files={"model": ("resnet50.onnx", r50)})
    assert r.status_code == 200, r.text[:400]
    assert r.json()["passes"] >= 1


def test_a_small_server_budget_answers_in_passes(mnv2):
    with TestClient(create_app(Settings(diff_memory_mb=1))) as client:
        r = client.post(URL + "?probe=off", files={"model": ("m.onnx", mnv2)})
    assert r.status_code == 200, r.text[:400]
    assert r.json()["passes"] > 1


def test_a_server_budget_too_small_for_one_node_is_a_422_naming_its_setting(r50):
    with TestClient(create_app(Settings(diff_memory_mb=1))) as client:
        r = client.post(URL + "?probe=off", files={"model": ("resnet50.onnx", r50)})
    assert r.status_code == 422 and r.headers["content-type"].startswith("application/problem+json")
    assert "CLIPBRIDGE_DIFF_MEMORY_MB" in r.text, r.text[:400]


def test_resnet50_diffs_within_the_deployments_limits(r50):
    """deploy/deployment.yaml's sandbox call memory and diff budget: answered, never refused whole (issue 46)."""
    from tests.test_memory_bounds import deployment_env
    env = deployment_env()
    s = Settings(sandbox_workers=1, sandbox_memory_mb=int(env["CLIPBRIDGE_SANDBOX_MEMORY_MB"]),
                 diff_memory_mb=int(env["CLIPBRIDGE_DIFF_MEMORY_MB"]))
    with TestClient(create_app(s)) as client:
        r = client.post(URL + "?probe=off", files={"model": ("resnet50.onnx", r50)})
    assert r.status_code == 200, r.text[:400]
