"""Diff benchmark: `clipbridge diff` of a MobileNetV2-shaped model against plain runs of the same model.

In one process, alternating, --repeat times each (the median is reported):
- anchor: a plain run on each engine, compile included (onnxruntime: session + run; OpenVINO: read, compile
  with the same precision pinning, run), summed over the engines;
- diff: app.diff.report.diff in process (inputs generated, mark-all run per engine, observer check, walk,
  replays of each differing clip-like node).
Prints both and the ratio diff / sum of plain runs (target <= 3x). Two input sets: generated boundary values
(a NaN reaches the first Clip, so one replay runs), and a finite image (no difference: no replay).
Run: python bench/diff.py [--repeat 5] [--size 64] [--precision model]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from app.diff import child, engines, report, run  # noqa: E402
from tests.diff.models import mobilenet_v2  # noqa: E402


def plain(model: bytes, feeds: dict, precision: str) -> float:
    t = time.perf_counter()
    for engine in run.DEFAULT_ENGINES:
        engines.run(engine, model, feeds, [], precision)
    return time.perf_counter() - t


def diffed(model: bytes, npz: bytes | None, precision: str) -> tuple[float, dict]:
    t = time.perf_counter()
    body, _ = report.diff(run.direct, model, npz, run.Options(precision=precision))
    return time.perf_counter() - t, body


def measure(model: bytes, npz: bytes | None, feeds: dict, repeat: int, precision: str) -> dict:
    plain(model, feeds, precision)  # warm both engines' imports and allocators once
    anchors, diffs, body = [], [], {}
    for _ in range(repeat):
        anchors.append(plain(model, feeds, precision))
        seconds, body = diffed(model, npz, precision)
        diffs.append(seconds)
    a, d = statistics.median(anchors), statistics.median(diffs)
    return {"plain_sum_s": round(a, 4), "diff_s": round(d, 4), "ratio": round(d / a, 2),
            "verdict": body["verdict"], "replays": sum(1 for n in body["nodes"] if "replay_differing" in n)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--size", type=int, default=64, help="image side (the model is 1x3xSxS)")
    ap.add_argument("--precision", choices=["model", "deployed"], default="model")
    args = ap.parse_args()
    model = mobilenet_v2(args.size)
    generated = child.prepare(model, None).feeds
    image = np.random.default_rng(1).standard_normal((1, 3, args.size, args.size)).astype(np.float32)
    buf = io.BytesIO()
    np.savez(buf, image=image)
    out = {"model": f"MobileNetV2-shaped, 1x3x{args.size}x{args.size}, {len(model)} bytes",
           "precision": args.precision, "load_average": os.getloadavg()[0], "target": "<= 3x",
           "generated": measure(model, None, generated, args.repeat, args.precision),
           "finite_image": measure(model, buf.getvalue(), {"image": image}, args.repeat, args.precision)}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
