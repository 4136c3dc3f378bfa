"""`clipbridge serve` (this checkout's code) on a port the kernel chose, for tests that need real sockets."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

from tests.sockets import listening_socket, port_of

ROOT = Path(__file__).resolve().parents[2]


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (Linux /proc)."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry.name))
    return out


def worker_pids(proc: subprocess.Popen) -> list[int]:
    """The uvicorn workers of `clipbridge serve` (it supervises even one): its children that serve the app,
    not multiprocessing's resource tracker. Memory is measured there, not in the supervisor."""
    pids = []
    for pid in children(proc.pid):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"multiprocessing.spawn" in cmd:
            pids.append(pid)
    return pids


def worker_pid(proc: subprocess.Popen) -> int:
    pids = worker_pids(proc)
    assert len(pids) == 1, f"expected one worker process, found {pids}"
    return pids[0]


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise KeyError("VmRSS")


def start_server(env: dict[str, str]) -> tuple[subprocess.Popen, int]:
    sock = listening_socket()
    port = port_of(sock)
    full = {k: v for k, v in os.environ.items() if not k.startswith("CLIPBRIDGE_")}
    full.update({"PYTHONPATH": f"{ROOT / 'app'}{os.pathsep}{ROOT}", "CLIPBRIDGE_HOST": "127.0.0.1", "CLIPBRIDGE_ACCESS_LOG": "0", **env})
    log = tempfile.NamedTemporaryFile(prefix="clipbridge-serve-", suffix=".log", delete=False)  # not a pipe: a
    # full pipe would block the server; server_log(proc) reads it
    proc = subprocess.Popen([sys.executable, "-m", "clipbridge.cli.main", "serve", "--fd", str(sock.fileno()), "--log-level",
                             "warning"], cwd=ROOT, env=full, stdout=log, stderr=subprocess.STDOUT,
                            pass_fds=(sock.fileno(),))
    sock.close()  # the server holds it now
    proc.log_path = log.name  # type: ignore[attr-defined]
    log.close()
    deadline = time.time() + 60
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
            return proc, port
        except OSError:
            if proc.poll() is not None or time.time() > deadline:
                proc.kill()
                pytest.fail(f"server did not start: {server_log(proc)[-2000:]}")
            time.sleep(0.2)


def server_log(proc: subprocess.Popen) -> str:
    return Path(proc.log_path).read_text(errors="replace")  # type: ignore[attr-defined]


def stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    Path(proc.log_path).unlink(missing_ok=True)  # type: ignore[attr-defined]
