"""Benchmark: fresh POST /v1/translate against GET /healthz on the same one-worker server, in the same run.

Every translate request carries a different upper bound (float32 6 + n/2^20, so no two requests share a memo
entry or an effective bound), with the default targets and with all nine other dialects, each as clients get it
today (artifacts included) and with "include": [] (no artifacts built). The loads run in interleaved rounds
(healthz, then each translate load, then healthz again, ...) and each ratio is the median over rounds of translate
req/s / healthz req/s measured in the same round: on a shared machine the load swings between rounds more than
within one. Then the in-process time per target: the core (clipbridge.service.translate.translate, artifacts left unbuilt) and
the core with the response's JSON (artifacts built), no HTTP.

Goals (issue 28): >= 0.8x healthz with the default targets, >= 0.5x with all nine, core < 0.1 ms per target.
Uses wrk (apt-get install wrk) when installed, else a keep-alive http.client loop on threads (slower client:
record which one ran). Prints rates, ratios, the load average and the client; the ratios are the figures. On
Linux it also prints the server's CPU time per request (the server process and its children, from /proc) and
the CPU ratio healthz / translate: on a machine other processes load, that ratio moves less than req/s does.
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import json
import math
import os
import platform
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

from clipbridge.engines.config import cpu_isa

SOURCE = {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "shape": [1, 3, 224, 224], "min": 0}
ALL_NINE = ["openvino", "directml", "stablehlo", "webnn", "tosa", "tensorrt", "tflite", "coreml", "pytorch"]


LOADS = {"default": (None, True), "all9": (ALL_NINE, True), "default-no-artifacts": (None, False),
         "all9-no-artifacts": (ALL_NINE, False)}


def body(n: int, targets: list[str] | None, artifacts: bool = True) -> dict:
    """A translate request whose max (6 + n/2^20, exact in float32) no other request of the run has."""
    req: dict = {"source": {**SOURCE, "max": 6 + n / 1048576}}
    if targets is not None:
        req["targets"] = targets
    if not artifacts:
        req["include"] = []
    return req


def cpu_model() -> str:
    """The CPU's model name as /proc/cpuinfo gives it (else what platform knows)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(port: int) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "clipbridge.cli.main", "serve", "--port", str(port), "--workers", "1",
                             "--log-level", "warning"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(300):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
            return proc
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("server did not start")


LUA = """
local n = {start}
local targets = {targets}
request = function()
  n = n + 1
  local body = '{{"source":{{"dialect":"onnx","opset":13,"elem_type":"FLOAT","shape":[1,3,224,224],"min":0,' ..
    '"max":' .. string.format("%.17g", 6 + n / 1048576) .. '}}' .. targets .. '}}'
  return wrk.format("POST", "/v1/translate", {{["Content-Type"] = "application/json"}}, body)
end
"""


def lua_script(start_n: int, targets: list[str] | None, artifacts: bool) -> str:
    tail = "" if targets is None else ',"targets":' + json.dumps(targets, separators=(",", ":"))
    tail += "" if artifacts else ',"include":[]'
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write(LUA.format(start=start_n, targets="'" + tail + "'"))
        return f.name


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process and its descendants (uvicorn's supervisor and worker), from /proc."""
    tick = os.sysconf("SC_CLK_TCK")
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        total = (int(fields[11]) + int(fields[12])) / tick
        for task in os.listdir(f"/proc/{pid}/task"):
            for child in open(f"/proc/{pid}/task/{task}/children").read().split():
                total += cpu_seconds(int(child))
    except OSError:  # not Linux, or the process is gone
        return math.nan
    return total


def run_wrk(url: str, seconds: float, connections: int, script: str | None, pid: int) -> tuple[float, float]:
    """req/s, and the server's CPU milliseconds per request (less sensitive to other processes' load)."""
    cmd = ["wrk", "-t1", f"-c{connections}", f"-d{max(1, round(seconds))}s", "--timeout", "10s"]
    if script:
        cmd += ["-s", script]
    cpu = cpu_seconds(pid)
    out = subprocess.run([*cmd, url], capture_output=True, text=True, check=True).stdout
    cpu = cpu_seconds(pid) - cpu
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    if non2xx:
        raise SystemExit(f"{non2xx.group(1)} non-2xx responses from {url}")
    m = re.search(r"Requests/sec:\s+([\d.]+)", out)
    n = re.search(r"(\d+) requests in", out)
    assert m and n, out
    return float(m.group(1)), cpu * 1e3 / max(1, int(n.group(1)))


def run_fallback(port: int, seconds: float, connections: int, make: object, pid: int) -> tuple[float, float]:
    """Keep-alive http.client loops on `connections` threads for `seconds`: requests per second, and the server's
    CPU milliseconds per request."""
    stop = time.perf_counter() + seconds
    counts = [0] * connections
    lock = threading.Lock()

    def loop(i: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        while time.perf_counter() < stop:
            with lock:
                method, path, data = make()  # type: ignore[operator]
            conn.request(method, path, body=data, headers={"content-type": "application/json"})
            resp = conn.getresponse()
            resp.read()
            if resp.status != 200:
                raise SystemExit(f"{path}: HTTP {resp.status}")
            counts[i] += 1
        conn.close()

    threads = [threading.Thread(target=loop, args=(i,)) for i in range(connections)]
    t0, cpu = time.perf_counter(), cpu_seconds(pid)
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    cpu = cpu_seconds(pid) - cpu
    return sum(counts) / (time.perf_counter() - t0), cpu * 1e3 / max(1, sum(counts))


def http_rounds(args: argparse.Namespace) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """req/s and server CPU ms per request of healthz and of each translate load, in interleaved rounds on one
    server."""
    port = free_port()
    proc = start(port)
    base = f"http://127.0.0.1:{port}"
    counter = itertools.count(1)
    rates: dict[str, list[float]] = {"healthz": [], **{name: [] for name in LOADS}}
    cpus: dict[str, list[float]] = {"healthz": [], **{name: [] for name in LOADS}}
    use_wrk = shutil.which("wrk") is not None and not args.no_wrk
    try:
        for r in range(args.rounds + 1):  # round 0 warms up (imports, first compiles) and is not kept
            secs = 2 if r == 0 else args.seconds
            for name in ["healthz", *LOADS]:
                targets, artifacts = LOADS.get(name, (None, True))
                if use_wrk:
                    script = None if name == "healthz" else lua_script(next(counter) * 100_000, targets, artifacts)
                    rate, cpu = run_wrk(base + ("/healthz" if name == "healthz" else "/v1/translate"), secs,
                                        args.connections, script, proc.pid)
                    if script:
                        os.unlink(script)
                else:
                    def make(name: str = name, targets: list[str] | None = targets, artifacts: bool = artifacts) \
                            -> tuple:
                        if name == "healthz":
                            return "GET", "/healthz", None
                        n = next(counter) % (1 << 21)
                        return "POST", "/v1/translate", json.dumps(body(n, targets, artifacts)).encode()
                    rate, cpu = run_fallback(port, secs, args.connections, make, proc.pid)
                if r:
                    rates[name].append(rate)
                    cpus[name].append(cpu)
    finally:
        proc.terminate()
        proc.wait()
    rates["client"] = ["wrk" if use_wrk else "http.client threads"]  # type: ignore[list-item]
    return rates, cpus


def core_per_target(repeat: int) -> dict[str, float]:
    """In-process time per target (ms, median), distinct specs: translate() alone (artifacts left unbuilt) and
    translate() with the response JSON as served (artifacts built), default targets and all nine."""
    from pydantic import TypeAdapter

    from clipbridge.service.specs import Spec
    from clipbridge.service.translate import _dumps, default_targets, translate

    ta = TypeAdapter(Spec)
    n_default = len(default_targets("onnx"))
    out = {}
    start_n = 1 << 22
    for name, targets, count in (("default", None, n_default), ("all9", ALL_NINE, 9)):
        for kind in ("core", "core+json"):
            specs = [ta.validate_python(body(i, None)["source"]) for i in range(start_n, start_n + repeat + 20)]
            start_n += repeat + 20
            times = []
            for i, s in enumerate(specs):  # the first 20: warm-up (imports, the fixed points' caches)
                t = time.perf_counter()
                res = translate(s, targets)
                if kind == "core+json":
                    _dumps(res)
                if i >= 20:
                    times.append(time.perf_counter() - t)
            out[f"{kind} ({name})"] = statistics.median(times) * 1e3 / count
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=2)
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--connections", type=int, default=8)
    ap.add_argument("--core-repeat", type=int, default=300)
    ap.add_argument("--no-wrk", action="store_true", help="use the http.client fallback even where wrk exists")
    ap.add_argument("--core-only", action="store_true")
    ap.add_argument("--loads", default=",".join(LOADS),
                    help="translate loads to run (default: all; a server before `include` takes default,all9)")
    args = ap.parse_args()
    for name in list(LOADS):
        if name not in args.loads.split(","):
            del LOADS[name]
    # The ratios depend on the host (healthz's thread-pool hop costs 0.4 ms on one VM, 1.2 ms on another): every
    # run says which machine and when, so a figure copied into the docs carries both.
    print(f"host: {cpu_model()}, ISA {cpu_isa() or 'unknown'}, {os.cpu_count()} CPUs; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"load average before: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    if not args.core_only:
        rates, cpus = http_rounds(args)
        print(f"client: {rates.pop('client')[0]}, {args.rounds} rounds of {args.seconds:g} s, "
              f"{args.connections} connections, one worker")
        for name in ("healthz", *LOADS):
            print(f"{name:20s} req/s per round: " + ", ".join(f"{v:.0f}" for v in rates[name]))
        for name in LOADS:
            goal = 0.8 if name.startswith("default") else 0.5
            ratios = [t / h for t, h in zip(rates[name], rates["healthz"])]
            print(f"translate {name} / healthz: median paired {statistics.median(ratios):.2f} "
                  f"(rounds {', '.join(f'{r:.2f}' for r in ratios)}; goal >= {goal})")
        for name in ("healthz", *LOADS):
            print(f"{name:20s} server CPU per request: {statistics.median(cpus[name]):.3f} ms (median)")
        for name in LOADS:
            ratios = [h / t for t, h in zip(cpus[name], cpus["healthz"])]
            print(f"CPU ratio healthz / {name}: median paired {statistics.median(ratios):.2f}")
    core = core_per_target(args.core_repeat)
    for name, ms in core.items():
        print(f"{name} per target: {ms:.3f} ms (median; goal for the core < 0.1)")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
