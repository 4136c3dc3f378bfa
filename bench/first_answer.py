"""Measure: the time from `clipbridge serve` to its first /v1/translate answer, for the clipbridge of one virtual
environment, and whether that environment serves every registered example (docs/install.md, issue 27).

    python bench/first_answer.py /tmp/venv-lean/bin/clipbridge /tmp/venv-full/bin/clipbridge --rounds 3

Each round starts each server in turn (interleaved, so machine load hits both alike), sends a translation every
50 ms until one answers 200, then translates every registered example into every other dialect, runs
/v1/compare on it, and asks each engine backend for one clip (a missing engine must answer its 422).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from typing import Any

RELU6 = {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "min": 0, "max": 6}
ENGINES = [("onnxruntime", "onnx"), ("openvino", "openvino"), ("torch", "pytorch"), ("jax", "stablehlo"),
           ("tosa-reference", "tosa"), ("litert", "tflite")]


def _post(base: str, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    req = urllib.request.Request(base + path, json.dumps(body).encode(), {"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def first_answer(clipbridge: str) -> tuple[float, str, subprocess.Popen]:
    port = _free_port()
    start = time.perf_counter()
    proc = subprocess.Popen([clipbridge, "serve", "--host", "127.0.0.1", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "CLIPBRIDGE_ACCESS_LOG": "0"})
    base = f"http://127.0.0.1:{port}"
    while True:
        try:
            if _post(base, "/v1/translate", {"spec": RELU6})[0] == 200:
                return time.perf_counter() - start, base, proc
        except OSError:
            if proc.poll() is not None:
                raise SystemExit(f"{clipbridge} serve exited with {proc.returncode}") from None
        time.sleep(0.05)


def problems(base: str) -> list[str]:
    """What the server fails to serve: an example that does not translate (other than a framework's refusal), a
    compare that is not answered, an engine backend that neither runs nor names its extra."""
    with urllib.request.urlopen(base + "/v1/dialects") as r:
        caps = json.load(r)
    names = [d["dialect"] for d in caps["dialects"]]
    out = []
    for d in caps["dialects"]:
        for name, spec in d["examples"].items():
            st, body = _post(base, "/v1/translate", {"spec": spec, "targets": [n for n in names if n != d["dialect"]]})
            if st != 200 and "refuses to build" not in str(body.get("detail")):
                out.append(f"translate {d['dialect']} {name}: {st} {body.get('detail')}")
    installed = {e["backend"]: e for e in caps["engines"]}
    for backend, dialect in ENGINES:
        st, body = _post(base, "/v1/execute", {"spec": RELU6, "target": dialect, "backend": backend,
                                               "input": {"dtype": "float32", "shape": [1], "data": [7]}})
        ok = st == 200 if installed[backend]["installed"] else (st == 422 and installed[backend]["install"] in
                                                                body.get("detail", ""))
        if not ok:
            out.append(f"execute backend {backend}: {st} {body.get('detail')}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("clipbridge", nargs="+", help="the clipbridge command of each environment")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    for r in range(args.rounds):
        for exe in args.clipbridge:
            seconds, base, proc = first_answer(exe)
            try:
                bad = problems(base) if r == 0 else []
            finally:
                proc.terminate()
                proc.wait(timeout=30)
            load = os.getloadavg()[0]
            print(f"round {r + 1} {exe}: first answer {seconds:.2f} s (load {load:.1f})"
                  + (f"; {len(bad)} problems {bad[:3]}" if r == 0 else ""))


if __name__ == "__main__":
    main()
