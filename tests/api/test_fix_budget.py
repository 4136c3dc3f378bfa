"""Issue 46: the fix route's diffs (the causes it looks for, its proof) hold what the diff route's hold: the
server's budget (CLIPBRIDGE_DIFF_MEMORY_MB), never the quarter of the machine a CLI diff defaults to; a tensor
past its share per engine is a 422 naming the setting, before any engine runs."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from clipbridge.core.settings import Settings
from clipbridge.diff import engines
from clipbridge.main import create_app
from tests.hostile.places import amplifying_model

pytest.importorskip("onnxruntime")
pytest.importorskip("openvino")

ROUTES = {
    "fix": "/v1/models/fix?reference=onnxruntime&target=openvino",
    "diff": "/v1/models/diff?engine=onnxruntime,openvino&probe=off",
}


@pytest.mark.parametrize("route", ROUTES.values(), ids=ROUTES.keys())
def test_a_tensor_past_the_servers_share_is_refused_naming_the_setting(route, monkeypatch):
    """64 MiB of budget: 32 MiB per engine, against a 64 MiB float64 tensor (2**23 elements)."""
    with TestClient(create_app(Settings(diff_memory_mb=64)), raise_server_exceptions=False) as client:
        r = client.post(route, files={"model": ("m.onnx", amplifying_model("constant-of-shape", 23))})
    assert r.status_code == 422, r.text
    problem = r.json()
    assert "CLIPBRIDGE_DIFF_MEMORY_MB" in problem["detail"] and "at most 33554432 bytes" in problem["detail"], problem
