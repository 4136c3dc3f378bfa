"""Model-scan benchmark: scan time vs `onnx.load` of the same file, and peak memory vs the model's size.

Generates a ~200 MB ONNX model (large float32 initializers, a few hundred Clip nodes of several opset forms
and Min/Max pairs), then, each in a fresh subprocess so peaks do not mix:
- anchor: `onnx.load(path)` (weights included, as tools load models);
- scan: `clipbridge scan` in process (mmap + clipbridge.scan.report.scan, three targets).
Prints seconds, the ratio scan/load (target <= 1.2x), and the peak RSS growth of each over its process's
baseline, as a multiple of the file size (target <= 1.5x). Run: python bench/scan.py [--mb 200] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

CHILD = r"""
import json, mmap, os, sys, time
def rss(field):
    for line in open("/proc/self/status"):
        if line.startswith(field):
            return int(line.split()[1]) * 1024
import onnx
from clipbridge.scan.report import scan
base, anon = rss("VmRSS"), rss("RssAnon")
t = time.perf_counter()
if sys.argv[1] == "load":
    m = onnx.load(sys.argv[2])
    n = len(m.graph.node)
else:
    with open(sys.argv[2], "rb") as f:
        data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        n = len(scan(data, None, ["onnx", "openvino", "directml:5_0"]).to_json()["clips"])
dt = time.perf_counter() - t
print(json.dumps({"seconds": dt, "peak_growth": rss("VmHWM") - base, "count": n,
                  "file_pages": rss("RssFile"), "anon_growth": rss("RssAnon") - anon}))
"""


def build(path: str, mb: int, clips: int) -> None:
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper, save
    side = 1024
    n_weights = max(1, mb * (1 << 20) // (side * side * 4))
    rng = np.random.default_rng(0)
    inits, nodes = [], []
    cur = "x"
    per = max(1, clips // n_weights)
    inits += [numpy_helper.from_array(np.array(0, np.float32), "zero"),
              numpy_helper.from_array(np.array(6, np.float32), "six")]
    k = 0
    for i in range(n_weights):
        w = f"W{i}"
        inits.append(numpy_helper.from_array(rng.standard_normal((side, side), dtype=np.float32), w))
        nodes.append(helper.make_node("MatMul", [cur, w], [f"mm{i}"], name=f"matmul{i}"))
        cur = f"mm{i}"
        for j in range(per):
            out = f"c{i}_{j}"
            if j % 3 == 2:
                nodes += [helper.make_node("Max", [cur, "zero"], [out + "_m"], name=f"max{k}"),
                          helper.make_node("Min", [out + "_m", "six"], [out], name=f"min{k}")]
            else:
                nodes.append(helper.make_node("Clip", [cur, "zero", "six"] if j % 3 == 0 else [cur, "", "six"],
                                              [out], name=f"clip{k}"))
            cur, k = out, k + 1
    graph = helper.make_graph(nodes, "bench", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, side])],
                              [helper.make_tensor_value_info(cur, TensorProto.FLOAT, [1, side])], inits)
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), path)


def run(kind: str, path: str) -> dict:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", CHILD, kind, path], capture_output=True, text=True, cwd=root,
                         check=True)
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=200)
    ap.add_argument("--clips", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "bench.onnx")
        build(path, args.mb, args.clips)
        size = os.path.getsize(path)
        print(f"model: {size / 1e6:.1f} MB, {args.clips} clip sites requested")
        loads, scans = [], []
        for _ in range(args.repeat):  # interleaved, so drift in machine load hits both
            loads.append(run("load", path))
            scans.append(run("scan", path))
        best_load = min(r["seconds"] for r in loads)
        best_scan = min(r["seconds"] for r in scans)
        print(f"onnx.load: {best_load:.3f} s (best of {args.repeat}), peak +{loads[0]['peak_growth'] / size:.2f}x size")
        print(f"scan:      {best_scan:.3f} s, {scans[0]['count']} clips found, "
              f"peak +{max(r['peak_growth'] for r in scans) / size:.2f}x size")
        print(f"  of which mapped file pages (page cache, reclaimable): {scans[0]['file_pages'] / size:.2f}x size; "
              f"anonymous memory after the scan: +{scans[0]['anon_growth'] / 1e6:.1f} MB")
        print(f"ratio scan/onnx.load: {best_scan / best_load:.2f}x (target <= 1.2x)")
        print(f"scan peak memory / model size: {max(r['peak_growth'] for r in scans) / size:.2f}x (target <= 1.5x)")


if __name__ == "__main__":
    main()
