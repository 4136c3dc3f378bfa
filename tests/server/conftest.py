"""`clipbridge serve` (this checkout's code) on a free port, for tests that need real sockets."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise KeyError("VmRSS")


def start_server(env: dict[str, str]) -> tuple[subprocess.Popen, int]:
    port = free_port()
    full = {k: v for k, v in os.environ.items() if not k.startswith("CLIPBRIDGE_")}
    full.update({"PYTHONPATH": str(ROOT), "CLIPBRIDGE_HOST": "127.0.0.1", "CLIPBRIDGE_ACCESS_LOG": "0", **env})
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "serve", "--port", str(port), "--log-level", "warning"],
                            cwd=ROOT, env=full, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.time() + 60
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
            return proc, port
        except OSError:
            if proc.poll() is not None or time.time() > deadline:
                proc.kill()
                pytest.fail(f"server did not start: {proc.stdout.read().decode()[-2000:]}")
            time.sleep(0.2)


def stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
