"""End to end: `clipbridge serve` on a port the kernel chose (--fd), called over a real socket."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from tests.sockets import listening_socket, port_of


@pytest.fixture(scope="module")
def server():
    sock = listening_socket()
    port = port_of(sock)
    exe = shutil.which("clipbridge") or ""
    cmd = [exe] if exe else [sys.executable, "-m", "clipbridge.cli.main"]
    proc = subprocess.Popen([*cmd, "serve", "--fd", str(sock.fileno()), "--log-level", "warning"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            env={**os.environ, "CLIPBRIDGE_HOST": "127.0.0.1"}, pass_fds=(sock.fileno(),))
    sock.close()
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            urllib.request.urlopen(base + "/healthz", timeout=1)
            break
        except OSError:
            if proc.poll() is not None:
                pytest.fail(f"server exited: {proc.stdout.read().decode()[-2000:]}")
            time.sleep(0.2)
    else:
        proc.kill()
        pytest.fail("server did not start in 30 s")
    yield base
    proc.terminate()
    proc.wait(timeout=10)


def test_translate_over_a_socket(server):
    body = json.dumps({"source": {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT16", "min": 0, "max": 6}})
    req = urllib.request.Request(server + "/v1/translate", data=body.encode(),
                                 headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        out = json.loads(r.read())
    assert {t["target"]["dialect"] for t in out["translations"]} == {"openvino", "directml"}


def test_problem_over_a_socket(server):
    req = urllib.request.Request(server + "/v1/translate", data=b"{", headers={"content-type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(req, timeout=10)
    assert info.value.code == 400
    assert info.value.headers["content-type"].startswith("application/problem+json")
