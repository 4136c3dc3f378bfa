"""Load test: wrk against `clipbridge serve --workers N` with a mix of translate, execute and compare requests.

    python bench/load.py                       # 60 s, 64 connections, --workers 2 (the issue's run)
    python bench/load.py --scaling             # the same mix against --workers 1, then --workers 2
    python bench/load.py --seconds 10          # a quick look

Needs wrk (apt-get install wrk). The server runs as in production: JSON access log on (written to a file),
default limits, so executions past CLIPBRIDGE_MAX_CONCURRENT_EXECUTIONS per worker get the designed
503 + Retry-After. Reports requests/s, latency percentiles, statuses (2xx, designed 429/503, anything else),
wrk's socket errors, and the server's RSS (summed over the supervisor and its workers, from /proc) after
start-up, after a warm-up with the same mix, and after the run. Targets: 0 responses other than 2xx and the
designed 429/503, 0 socket errors, RSS growth over the run < 10%.

Before the measured run, the translation memo of every worker is filled with fresh translations and the mix
runs for a warm-up, so the RSS growth is measured from the steady state (a full, bounded cache).

Mix (per request, in rotation): 40% translate of a repeated spec (the memo), 20% translate of a spec with a
fresh random bound (a real translation each time), 30% execute (256 float32 on numpy), 10% compare (64 int8
under all three semantics).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MEMO = 4096  # app/clipbridge/service/translate.py: lru_cache(maxsize=4096) on normalized translate requests
RELU6 = {"source": {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT16", "shape": [1, 3, 224, 224],
                    "min": 0, "max": 6}}
EXECUTE = {"spec": {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "min": 0, "max": 6},
           "input": {"dtype": "float32", "shape": [16, 16], "data": [((i * 37) % 200 - 100) / 8 for i in range(256)]},
           "semantics": "openvino"}
COMPARE = {"spec": {"dialect": "directml", "feature_level": "5_0",
                    "desc": {"InputTensor": {"DataType": "INT8", "Sizes": [1, 1, 8, 8]},
                             "OutputTensor": {"DataType": "INT8", "Sizes": [1, 1, 8, 8]}, "Min": 0.5, "Max": 2.5}},
           "input": {"dtype": "int8", "shape": [64], "data": [(i * 7) % 256 - 128 for i in range(64)]}}
# {MIN} is replaced per request by a random bound (Lua), so each of these is a fresh translation.
FRESH = ('{"source": {"dialect": "openvino", "element_type": "i16", "min": {MIN}, "max": 30000.5}, '
         '"targets": ["onnx", {"dialect": "directml", "feature_level": "5_0"}], "mode": "literal"}')

LUA = r"""
local plan = {PLAN}
local bodies = {BODIES}
local i = 0
counts = {}  -- global: done() reads it from each thread with thread:get
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16) % 100000)
end

function request()
  i = i + 1
  local k = plan[(i % #plan) + 1]
  local b = bodies[k]
  local body = b.body
  if b.fresh then
    body = string.gsub(body, "{MIN}", string.format("%.6f", math.random() * 20000 - 10000))
  end
  return wrk.format("POST", b.path, {["Content-Type"] = "application/json"}, body)
end

function response(status, headers, body)
  counts[status] = (counts[status] or 0) + 1
end

function done(summary, latency, requests)
  local total = {}
  for _, t in ipairs(threads) do
    local c = t:get("counts")
    for s, n in pairs(c) do total[s] = (total[s] or 0) + n end
  end
  local parts = {}
  for s, n in pairs(total) do table.insert(parts, string.format('"%d": %d', s, n)) end
  io.write(string.format('CB_RESULT {"requests": %d, "duration_us": %d, "p50_us": %d, "p90_us": %d, ' ..
    '"p99_us": %d, "max_us": %d, "connect": %d, "read": %d, "write": %d, "timeout": %d, "statuses": {%s}}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency.max, summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.timeout,
    table.concat(parts, ", ")))
end
"""


def lua_script(plan: list[str] | None = None) -> str:
    bodies = {"relu6": ("/v1/translate", json.dumps(RELU6), False),
              "fresh": ("/v1/translate", FRESH, True),
              "execute": ("/v1/execute", json.dumps(EXECUTE), False),
              "compare": ("/v1/compare", json.dumps(COMPARE), False)}
    plan = plan or ["relu6", "execute", "fresh", "relu6", "execute", "relu6", "fresh", "execute", "relu6", "compare"]
    lua_bodies = "{" + ", ".join(f'{k} = {{path = "{p}", body = [==[{b}]==], fresh = {str(f).lower()}}}'
                                 for k, (p, b, f) in bodies.items()) + "}"
    return LUA.replace("{PLAN}", "{" + ", ".join(f'"{k}"' for k in plan) + "}").replace("{BODIES}", lua_bodies)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tree(pid: int) -> list[int]:
    """pid and all its descendants (the uvicorn supervisor and its workers)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += children.get(p, [])
    return out


def rss_mib(pid: int) -> float:
    total = 0
    for p in tree(pid):
        try:
            with open(f"/proc/{p}/status") as f:
                total += next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
        except (OSError, StopIteration):
            pass
    return total / 1024


def start(port: int, workers: int, log_path: str) -> subprocess.Popen:
    env = {**os.environ, "CLIPBRIDGE_HOST": "127.0.0.1", "CLIPBRIDGE_ACCESS_LOG": "1"}
    log = open(log_path, "w")
    proc = subprocess.Popen([sys.executable, "-m", "clipbridge.cli.main", "serve", "--port", str(port), "--workers",
                             str(workers), "--log-level", "info"], stdout=log, stderr=subprocess.STDOUT, env=env,
                            cwd=ROOT)
    deadline = time.time() + 120
    ready = 0
    while ready < 3 * workers:  # several answers in a row: every worker is up
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2)
            ready += 1
        except OSError:
            ready = 0
            if proc.poll() is not None or time.time() > deadline:
                raise SystemExit(f"the server did not start; see {log_path}")
            time.sleep(0.3)
    time.sleep(1.0)
    return proc


def wrk(port: int, seconds: int, connections: int, threads: int, script: str) -> dict:
    cmd = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--timeout", "10s", "-s", script,
           f"http://127.0.0.1:{port}"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    out = done.stdout
    if done.returncode:
        raise SystemExit(f"wrk failed ({done.returncode}):\n{out}\n{done.stderr}")
    m = re.search(r"CB_RESULT (\{.*\})", out)
    if not m:
        raise SystemExit(f"no result from wrk:\n{out}")
    return json.loads(m.group(1))


def run(workers: int, seconds: int, connections: int, threads: int, warmup: int) -> dict:
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        script, fill = os.path.join(tmp, "mix.lua"), os.path.join(tmp, "fresh.lua")
        Path(script).write_text(lua_script())
        Path(fill).write_text(lua_script(["fresh"]))
        log_path = os.path.join(tmp, "server.log")
        proc = start(port, workers, log_path)
        try:
            rss_start = rss_mib(proc.pid)
            # Fill the translation memo (an LRU of MEMO entries per worker) with fresh translations first, so that
            # 'before' is the steady state and growth over the run measures leaks, not a bounded cache filling.
            filled, t0 = 0, time.time()
            while filled < MEMO * workers * 1.3 and time.time() - t0 < 180:
                filled += wrk(port, 10, connections, threads, fill)["requests"]
            wrk(port, warmup, connections, threads, script)
            time.sleep(1.0)
            rss_before = rss_mib(proc.pid)
            res = wrk(port, seconds, connections, threads, script)
            time.sleep(1.0)
            rss_after = rss_mib(proc.pid)
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                code = proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                code = proc.wait()
        log_lines = Path(log_path).read_text().splitlines()
    statuses = {int(k): v for k, v in res["statuses"].items()}
    ok = sum(v for k, v in statuses.items() if 200 <= k < 300)
    designed = sum(v for k, v in statuses.items() if k in (429, 503))
    return {
        "workers": workers, "seconds": seconds, "connections": connections,
        "requests_per_s": round(res["requests"] / (res["duration_us"] / 1e6), 1),
        "requests": res["requests"], "p50_ms": res["p50_us"] / 1000, "p90_ms": res["p90_us"] / 1000,
        "p99_ms": res["p99_us"] / 1000, "max_ms": res["max_us"] / 1000,
        "2xx": ok, "designed_429_503": designed, "other_non_2xx": res["requests"] - ok - designed,
        "statuses": dict(sorted(statuses.items())),
        "socket_errors": {k: res[k] for k in ("connect", "read", "write", "timeout")},
        "memo_fill_requests": filled, "rss_mib_start": round(rss_start, 1), "rss_mib_before": round(rss_before, 1),
        "rss_mib_after": round(rss_after, 1), "rss_growth_pct": round(100 * (rss_after / rss_before - 1), 2),
        "access_log_lines": sum(1 for line in log_lines if '"request_id"' in line),
        "exit_code_after_sigterm": code,
    }


def report(r: dict) -> None:
    print(f"--workers {r['workers']}: {r['requests_per_s']} req/s over {r['seconds']} s at {r['connections']} "
          f"connections; latency p50 {r['p50_ms']:.1f} ms, p90 {r['p90_ms']:.1f} ms, p99 {r['p99_ms']:.1f} ms")
    print(f"  statuses {r['statuses']}: 2xx {r['2xx']}, designed 429/503 {r['designed_429_503']}, "
          f"other non-2xx {r['other_non_2xx']}; socket errors {r['socket_errors']}")
    print(f"  server RSS (all processes): {r['rss_mib_start']} MiB started, {r['rss_mib_before']} MiB after "
          f"memo fill + warm-up, {r['rss_mib_after']} MiB after the run ({r['rss_growth_pct']:+.2f}%); "
          f"exit code after SIGTERM {r['exit_code_after_sigterm']}")
    print("  " + json.dumps(r))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--connections", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2, help="wrk threads")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--warmup", type=int, default=5, help="seconds of the same mix before RSS 'before'")
    ap.add_argument("--scaling", action="store_true", help="run --workers 1, then --workers 2")
    args = ap.parse_args()
    if not shutil.which("wrk"):
        raise SystemExit("wrk not found: apt-get install wrk")
    results = [run(w, args.seconds, args.connections, args.threads, args.warmup)
               for w in ([1, 2] if args.scaling else [args.workers])]
    for r in results:
        report(r)
    if args.scaling:
        ratio = results[1]["requests_per_s"] / results[0]["requests_per_s"]
        print(f"scaling: --workers 2 / --workers 1 = {ratio:.2f}x")
    failed = [r for r in results if r["other_non_2xx"] or any(r["socket_errors"].values())
              or r["rss_growth_pct"] >= 10 or r["exit_code_after_sigterm"] != 0]
    if failed:
        print("TARGET MISSED (errors other than 429/503, socket errors, RSS growth >= 10% or unclean exit)")
        sys.exit(1)


if __name__ == "__main__":
    main()
