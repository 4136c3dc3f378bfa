"""Chain benchmark: `clipbridge chain MODEL.pt2 torch,onnx,openvino,coreml` against the converters' and
engines' own time on the same model.

In one process, alternating, --repeat times each (the median is reported), on a MobileNet-style block of about
5 MB of float32 weights (tests/chain/models.py, --expand channels):
- anchor: what a user's own script costs: torch.export.load + eager run; torch.onnx.export(dynamo=True) +
  an onnxruntime session + run; openvino.convert_model of that ONNX + compile (f32 pinned) + run; coremltools.convert
  (static on Linux). Converters and engines called directly, nothing captured.
- chain: clipbridge.chain.report.chain in process (generated hostile inputs, the lowering tables, every stage run with its
  clip-like ops captured, both comparisons per hop).
Prints both and the ratio chain / anchor (target <= 1.5x), of the medians and of the minima.
Run: python bench/chain.py [--repeat 3] [--channels 256] [--expand 2048] [--size 32]
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from clipbridge.chain import report  # noqa: E402
from clipbridge.diff.run import direct  # noqa: E402
from tests.chain.models import mobilenet  # noqa: E402

CHAIN = "torch,onnx,openvino,coreml"


def anchor(pt2: bytes, x: np.ndarray) -> float:
    import coremltools as ct
    import onnxruntime as ort
    import openvino as ov
    import torch
    t = time.perf_counter()
    ep = torch.export.load(io.BytesIO(pt2))
    with torch.no_grad():
        ep.module()(torch.from_numpy(x))
    proto = torch.onnx.export(ep, dynamo=True, verbose=False).model_proto.SerializeToString()
    sess = ort.InferenceSession(proto, providers=["CPUExecutionProvider"])
    sess.run(None, {sess.get_inputs()[0].name: x})
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.onnx")
        Path(path).write_bytes(proto)
        compiled = ov.Core().compile_model(ov.convert_model(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        compiled([x])
    ct.convert(torch.export.load(io.BytesIO(pt2)).run_decompositions({}), convert_to="mlprogram",
               skip_model_load=True, compute_precision=ct.precision.FLOAT32)
    return time.perf_counter() - t


def chained(pt2: bytes) -> float:
    t = time.perf_counter()
    report.chain(direct, pt2, None, CHAIN)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--channels", type=int, default=256)
    ap.add_argument("--expand", type=int, default=2048, help="expanded channels (with 256: about 5 MB of weights)")
    ap.add_argument("--size", type=int, default=32)
    args = ap.parse_args()
    pt2 = mobilenet(args.size, args.channels, args.expand)
    x = np.random.default_rng(0).standard_normal((1, 3, args.size, args.size)).astype(np.float32)
    anchor(pt2, x), chained(pt2)  # warm: imports, first compiles
    a, c = [], []
    for _ in range(args.repeat):
        a.append(anchor(pt2, x))
        c.append(chained(pt2))
    print(f"model: {len(pt2) / 1e6:.1f} MB .pt2, chain {CHAIN}, input 1x3x{args.size}x{args.size}")
    print(f"anchor (converters + engines, direct): median {statistics.median(a):.2f} s, min {min(a):.2f} s")
    print(f"chain (report.chain): median {statistics.median(c):.2f} s, min {min(c):.2f} s")
    print(f"ratio of medians {statistics.median(c) / statistics.median(a):.2f}, of minima {min(c) / min(a):.2f} "
          "(target <= 1.5)")


if __name__ == "__main__":
    main()
