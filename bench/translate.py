"""Benchmark: POST /v1/translate against GET /healthz on the same one-worker server, in the same run.

Target (issue: service): translate requests/s >= 0.8x the trivial endpoint's. Uses wrk (apt-get install wrk).
Prints both rates and the ratio; the ratio is the figure to record, never the absolute numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

SPEC = {"source": {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT16", "shape": [1, 3, 224, 224],
                   "min": 0, "max": 6}}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(port: int) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "serve", "--port", str(port), "--workers", "1",
                             "--log-level", "warning"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(150):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
            return proc
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("server did not start")


def wrk(url: str, seconds: int, connections: int, script: str | None) -> float:
    cmd = ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--latency"]
    if script:
        cmd += ["-s", script]
    out = subprocess.run([*cmd, url], capture_output=True, text=True, check=True).stdout
    m = re.search(r"Requests/sec:\s+([\d.]+)", out)
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    if non2xx:
        raise SystemExit(f"{non2xx.group(1)} non-2xx responses from {url}")
    assert m, out
    return float(m.group(1))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--connections", type=int, default=16)
    args = ap.parse_args()
    if not shutil.which("wrk"):
        raise SystemExit("wrk not found: apt-get install wrk")
    port = free_port()
    proc = start(port)
    try:
        with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
            body = json.dumps(SPEC).replace("\\", "\\\\").replace('"', '\\"')
            f.write(f'wrk.method = "POST"\nwrk.body = "{body}"\nwrk.headers["Content-Type"] = "application/json"\n')
            script = f.name
        base = f"http://127.0.0.1:{port}"
        wrk(base + "/healthz", 2, args.connections, None)  # warm-up
        wrk(base + "/v1/translate", 2, args.connections, script)
        trivial = wrk(base + "/healthz", args.seconds, args.connections, None)
        translate = wrk(base + "/v1/translate", args.seconds, args.connections, script)
        os.unlink(script)
    finally:
        proc.terminate()
        proc.wait()
    print(f"healthz (anchor):   {trivial:10.1f} req/s")
    print(f"translate (3 dial.): {translate:10.1f} req/s")
    print(f"ratio translate/healthz: {translate / trivial:.2f}  (target >= 0.80)")


if __name__ == "__main__":
    main()
