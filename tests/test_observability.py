"""Operations: X-Request-ID, JSON access logs, Prometheus metrics, the execution time limit, graceful shutdown."""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request

import pytest
from fastapi.testclient import TestClient

from clipbridge.core.errors import Busy, TimedOut
from clipbridge.service.execute import Slots
from clipbridge.main import create_app
from clipbridge.core.settings import Settings
from tests.sockets import listening_socket, port_of

SPEC = {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "min": 0, "max": 6}
# the README's example: literal i8 with fractional bounds drifts by bound-rounding on DirectML
DRIFTING = {"source": {"dialect": "openvino", "element_type": "i8", "min": 0.5, "max": 100.7},
            "targets": [{"dialect": "directml", "feature_level": "2_1"}], "mode": "literal"}


def metric(text: str, name: str, **labels: str) -> float:
    """The value of one sample in a Prometheus exposition (0 when absent)."""
    for line in text.splitlines():
        if not line.startswith(name + "{") and not line.startswith(name + " "):
            continue
        got = dict(re.findall(r'(\w+)="([^"]*)"', line.split(" ")[0]))
        if all(got.get(k) == v for k, v in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


# --- request ids ---------------------------------------------------------------------------------------------

def test_a_request_id_is_generated(client):
    rid = client.get("/healthz").headers["x-request-id"]
    assert re.fullmatch(r"[0-9a-f]{32}", rid)
    assert client.get("/healthz").headers["x-request-id"] != rid


@pytest.mark.parametrize("given,echoed", [("abc-123", True), ("0f" * 16, True), ("trace:1.2_3", True),
                                          ("x" * 128, True), ("x" * 129, False), ("bad id", False),
                                          ("<script>", False), ("", False)])
def test_a_valid_incoming_request_id_is_echoed(client, given, echoed):
    rid = client.get("/healthz", headers={"X-Request-ID": given}).headers["x-request-id"]
    assert (rid == given) == echoed
    if not echoed:
        assert re.fullmatch(r"[0-9a-f]{32}", rid)


def test_errors_and_unknown_paths_carry_a_request_id(client):
    assert client.post("/v1/translate", content=b"{", headers={"content-type": "application/json"}) \
        .headers["x-request-id"]
    assert client.get("/no/such/path").headers["x-request-id"]
    big = client.post("/v1/translate", content=b"{}", headers={"content-type": "application/json",
                                                               "content-length": str(1 << 40)})
    assert big.status_code == 413 and big.headers["x-request-id"]


# --- access log ----------------------------------------------------------------------------------------------

def test_one_json_access_line_per_request(client, caplog):
    with caplog.at_level(logging.INFO, logger="clipbridge.access"):
        r = client.post("/v1/execute.npy?request=secret-looking-query", content=b"x",
                        headers={"content-type": "application/x-npy", "X-Request-ID": "rid-42"})
        client.get("/healthz")
    lines = [json.loads(rec.getMessage()) for rec in caplog.records if rec.name == "clipbridge.access"]
    assert len(lines) == 2
    first = lines[0]
    assert set(first) == {"ts", "method", "path", "route", "status", "duration_ms", "request_id", "client"}
    assert (first["method"], first["path"], first["route"], first["status"], first["request_id"]) == \
        ("POST", "/v1/execute.npy", "/v1/execute.npy", r.status_code, "rid-42")
    assert first["duration_ms"] >= 0 and "secret" not in json.dumps(first)  # no query strings in the log
    assert lines[1]["route"] == "/healthz" and lines[1]["status"] == 200


def test_access_log_can_be_switched_off(caplog):
    with TestClient(create_app(Settings(access_log=False))) as c, \
            caplog.at_level(logging.INFO, logger="clipbridge.access"):
        c.get("/healthz")
    assert not [rec for rec in caplog.records if rec.name == "clipbridge.access"]


def test_serve_log_config_writes_json_lines():
    from clipbridge.server.observability import JsonLineFormatter, log_config
    cfg = log_config("info")
    assert cfg["loggers"]["uvicorn.access"]["handlers"] == [] and cfg["loggers"]["clipbridge.access"]["level"] == "INFO"
    assert log_config("warning")["loggers"]["clipbridge.access"]["level"] == "WARNING"
    rec = logging.LogRecord("clipbridge", logging.ERROR, __file__, 1, "boom %s", ("x",), None)
    assert json.loads(JsonLineFormatter().format(rec))["message"] == "boom x"


# --- metrics -------------------------------------------------------------------------------------------------

def test_metrics_count_requests_by_route_template_and_status():
    with TestClient(create_app()) as c:
        for _ in range(3):
            c.post("/v1/translate", json={"source": SPEC})
        c.post("/v1/translate", json={"source": {**SPEC, "opset": 0}})
        c.get("/no/such/path/42")
        c.get("/no/such/path/43")
        r = c.get("/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    text = r.text
    assert metric(text, "clipbridge_http_requests_total", method="POST", route="/v1/translate", status="200") == 3
    assert metric(text, "clipbridge_http_requests_total", method="POST", route="/v1/translate", status="422") == 1
    assert metric(text, "clipbridge_http_requests_total", method="GET", route="<unmatched>", status="404") == 2
    assert "/no/such/path" not in text  # raw paths never become labels
    assert metric(text, "clipbridge_http_request_duration_seconds_count", method="POST", route="/v1/translate") == 4
    assert metric(text, "clipbridge_http_requests_in_flight") == 1  # the /metrics request itself


def test_metrics_count_findings_by_code_on_every_response_memoized_or_not():
    with TestClient(create_app()) as c:
        first = c.post("/v1/translate", json=DRIFTING).json()
        c.post("/v1/translate", json=DRIFTING)  # served from the memo: counted again
        text = c.get("/metrics").text
    codes = [f["code"] for t in first["translations"] for f in t["findings"]]
    assert "bound-rounding" in codes
    for code in set(codes):
        assert metric(text, "clipbridge_findings_total", code=code) == 2 * codes.count(code)


def test_each_app_has_its_own_registry():
    with TestClient(create_app()) as a, TestClient(create_app()) as b:
        a.get("/healthz")
        a.get("/healthz")
        b.get("/healthz")
        ta, tb = a.get("/metrics").text, b.get("/metrics").text
    assert metric(ta, "clipbridge_http_requests_total", route="/healthz", status="200") == 2
    assert metric(tb, "clipbridge_http_requests_total", route="/healthz", status="200") == 1


def test_an_unhandled_error_is_counted_as_500(monkeypatch):
    import clipbridge.api.routes as routes

    def boom(*a, **k):
        raise RuntimeError("boom")

    monkeypatch.setattr(routes, "translate_text", boom)
    with TestClient(create_app(), raise_server_exceptions=False) as c:
        r = c.post("/v1/translate", json={"source": SPEC})
        assert r.status_code == 500 and r.headers["content-type"].startswith("application/problem+json")
        text = c.get("/metrics").text
    assert metric(text, "clipbridge_http_requests_total", route="/v1/translate", status="500") == 1


# --- execution time limit ------------------------------------------------------------------------------------

def test_slots_run_bounds_time_and_keeps_the_slot_until_the_work_ends():
    slots = Slots(1, timeout=0.2)
    release = threading.Event()
    done = threading.Event()

    def slow() -> str:
        release.wait(5)
        done.set()
        return "late"

    with pytest.raises(TimedOut):
        slots.run(slow)
    with pytest.raises(Busy):  # the abandoned work still holds the only slot
        slots.run(lambda: "next")
    release.set()
    assert done.wait(5)
    deadline = time.time() + 5
    while True:  # the slot is released by the worker thread right after `slow` returns
        try:
            assert slots.run(lambda: "next") == "next"
            break
        except Busy:
            assert time.time() < deadline
            time.sleep(0.01)
    assert Slots(1, timeout=0).run(lambda: 7) == 7  # 0: no time limit (runs in the caller's thread)


def test_an_execution_past_the_limit_is_503_and_its_slot_stays_taken(monkeypatch):
    import clipbridge.api.execute_routes as routes
    release = threading.Event()
    real_run = routes.run_reported  # what /v1/execute calls (it reports the engine settings that ran)

    def slow_run(*args, **kwargs):
        release.wait(10)
        return real_run(*args, **kwargs)

    monkeypatch.setattr(routes, "run_reported", slow_run)
    body = {"spec": SPEC, "input": {"dtype": "float32", "shape": [2], "data": [-1, 9]}}
    settings = Settings(max_execution_seconds=0.3, max_concurrent_executions=1)
    with TestClient(create_app(settings)) as c:
        r = c.post("/v1/execute", json=body)
        assert r.status_code == 503 and r.headers["retry-after"] == "1"
        assert r.json()["title"] == "Execution timed out" and "CLIPBRIDGE_MAX_EXECUTION_SECONDS" in r.json()["detail"]
        busy = c.post("/v1/compare", json=body)
        assert busy.status_code == 503 and busy.json()["title"] == "Busy"
        release.set()
        deadline = time.time() + 10
        while (r := c.post("/v1/execute", json=body)).status_code == 503:
            assert time.time() < deadline
            time.sleep(0.05)
        assert r.status_code == 200 and r.json()["output"]["data"] == [0.0, 6.0]


# --- graceful shutdown ---------------------------------------------------------------------------------------

@pytest.mark.slow
def test_sigterm_finishes_the_request_in_flight_and_exits_0():
    sock = listening_socket()
    port = port_of(sock)
    exe = shutil.which("clipbridge")
    cmd = [exe] if exe else [sys.executable, "-m", "clipbridge.cli.main"]
    proc = subprocess.Popen([*cmd, "serve", "--fd", str(sock.fileno()), "--log-level", "info"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, pass_fds=(sock.fileno(),),
                            env={**os.environ, "CLIPBRIDGE_HOST": "127.0.0.1",
                                 "CLIPBRIDGE_GRACEFUL_SHUTDOWN_SECONDS": "20"})
    sock.close()
    try:
        deadline = time.time() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
                break
            except OSError:
                assert proc.poll() is None and time.time() < deadline, "the server did not start"
                time.sleep(0.2)
        body = json.dumps({"source": SPEC}).encode()
        with socket.create_connection(("127.0.0.1", port), timeout=20) as s:
            # A request in flight: headers and half the body sent, then SIGTERM, then the rest.
            s.sendall(b"POST /v1/translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"X-Request-ID: in-flight-1\r\nConnection: close\r\n"
                      + f"Content-Length: {len(body)}\r\n\r\n".encode() + body[:10])
            time.sleep(0.3)
            proc.send_signal(signal.SIGTERM)
            time.sleep(0.5)
            assert proc.poll() is None, "exited with a request in flight"
            s.sendall(body[10:])
            reply = b""
            while chunk := s.recv(65536):
                reply += chunk
        assert reply.startswith(b"HTTP/1.1 200"), reply[:200]
        assert b"x-request-id: in-flight-1" in reply.lower()
        assert proc.wait(timeout=30) == 0
        log = proc.stdout.read().decode()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    records = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    # Every log record is JSON; the two start lines for people (where it listens, its limits) are the only others.
    people = [line for line in log.splitlines() if line.strip() and not line.startswith("{")]
    assert [p.split(" ")[:2] for p in people] == [["clipbridge", "serving"], ["clipbridge", "limits:"]], log[-2000:]
    access = [r for r in records if r.get("request_id") == "in-flight-1"]
    assert access and access[0]["status"] == 200 and access[0]["route"] == "/v1/translate"
    assert any("Shutting down" in r.get("message", "") for r in records)
