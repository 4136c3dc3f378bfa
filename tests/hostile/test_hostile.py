"""The hostile-input corpus: every case gets a 4xx application/problem+json, never a 5xx, and no file outside
the interpreter, the package and the temp directory is opened while it is handled."""

from __future__ import annotations

import json
import time

import pytest

from tests.hostile.conftest import outside
from tests.hostile.corpus import CASES, MODEL_CASES, ODD_MODELS, Case, number_string_body

HANG_GUARD = 300.0  # seconds


def check_refused(client, case: Case, opened: list[str]) -> None:
    request = client.build_request("POST", case.path, **case.request())
    opened.clear()  # building a multipart body reads /etc/mime.types on the client's side; that is not ours
    start = time.perf_counter()
    r = client.send(request)
    took = time.perf_counter() - start
    assert 400 <= r.status_code < 500, (case.id, r.status_code, r.text[:500])
    assert r.status_code in case.expect, (case.id, r.status_code, r.text[:500])
    assert r.headers["content-type"].startswith("application/problem+json"), r.headers
    body = r.json()
    assert body["status"] == r.status_code and body["title"] and body["detail"], body
    assert "Traceback" not in r.text and "/work/" not in r.text
    assert r.headers.get("x-request-id")
    assert outside(opened) == [], (case.id, outside(opened))
    assert took < HANG_GUARD, (case.id, took)  # a hang guard, not a speed test (timing lives in bench/)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile_input_is_refused(hostile_client, opened_files, case):
    check_refused(hostile_client, case, opened_files)


@pytest.mark.parametrize("case", MODEL_CASES, ids=[c.id for c in MODEL_CASES])
def test_hostile_model_is_refused(hostile_client, opened_files, case):
    check_refused(hostile_client, case, opened_files)


@pytest.mark.parametrize("case", ODD_MODELS, ids=[c.id for c in ODD_MODELS])
def test_odd_models_never_5xx(hostile_client, opened_files, case):
    request = hostile_client.build_request("POST", case.path, **case.request())
    opened_files.clear()
    r = hostile_client.send(request)
    assert r.status_code == 200 or 400 <= r.status_code < 500, (case.id, r.status_code, r.text[:300])
    if r.status_code >= 400:
        assert r.headers["content-type"].startswith("application/problem+json")
    assert outside(opened_files) == []


def test_the_audit_sees_opens(opened_files, tmp_path):
    """The audit works: an open outside the allowed roots is reported (so a silent pass means something)."""
    with open("/etc/hostname", "rb"):
        pass
    (tmp_path / "x").write_bytes(b"")
    assert outside(opened_files) == ["/etc/hostname"]


def test_the_audit_sees_opens_in_the_servers_threads(opened_files):
    """Routes run on the test client's portal thread and in worker threads: the hook records those too."""
    from fastapi.testclient import TestClient

    from clipbridge.main import create_app
    probe = create_app()

    @probe.get("/probe-open")
    def probe_open() -> dict:  # a sync route: runs in the threadpool
        with open("/etc/hostname", "rb"):
            return {}

    with TestClient(probe) as c:
        opened_files.clear()
        assert c.get("/probe-open").status_code == 200
    assert "/etc/hostname" in outside(opened_files)


def test_50MB_number_string_under_a_raised_body_limit_is_422_quickly(opened_files):
    """With the body limit raised past it, a 50 MB number string is parsed and refused by its length (422), in
    about the time it takes to read it."""
    from fastapi.testclient import TestClient

    from clipbridge.main import create_app
    from clipbridge.core.settings import Settings
    with TestClient(create_app(Settings(max_body_bytes=64 << 20)), raise_server_exceptions=False) as c:
        case = Case("number-string-50MB-raised-limit", "/v1/translate", number_string_body(50 << 20),
                    expect=frozenset({422}))
        check_refused(c, case, opened_files)
        assert "at most 400" in c.post(case.path, **case.request()).json()["detail"]


@pytest.mark.parametrize("text,expected", [("0x1p99999", "inf"), ("-0x1p99999", "-inf"), ("1e99999", "inf")])
def test_number_strings_past_double_range_become_infinities(hostile_client, text, expected):
    """A hex float beyond double range was a 500 (OverflowError); it now reads as +-inf, as a decimal one does."""
    body = {"source": {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "min": text, "max": "inf"}}
    r = hostile_client.post("/v1/translate", content=json.dumps(body), headers={"content-type": "application/json"})
    assert r.status_code == 200, r.text
    assert r.json()["source"]["min"] == expected
