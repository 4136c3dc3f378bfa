"""Fix benchmark: latency of the written (fixed) model on the target against the original on the same target.

Two models, torch blocks exported with torch.onnx.export (torchvision does not import with the CPU torch):
MobileNetV2 at its published shape (width 1.0: 17 inverted residual blocks, 35 ReLU6, 3.5 M parameters), and the
diff's truncated MobileNetV2-like model (tests/diff/models.py: the early, memory-bound layers only; a worst case
for an elementwise pass), and the diff bench's 21 MB model (`mlp20`: five 1024x1024 MatMul + ReLU6). Each is fixed for onnxruntime -> OpenVINO (every ReLU6 Clip gets the NaN guard) and
for OpenVINO -> onnxruntime (NaN to the bound: ThresholdedRelu(alpha=0) after each ReLU6), then in ONE process both models are compiled on
OpenVINO with the same settings and run interleaved (original, written, written, original, ...); the median of
each is reported, and the ratio written / original (target <= 1.15x). Both precisions: "model" (pinned f32) and
"deployed" (the plugin's default: bf16 on a CPU with avx512_bf16/AMX). Also onnxruntime as target (the reverse
fix). Run: python bench/fix.py [--size 224] [--rounds 200] [--models mobilenet_v2 mobilenet_v2_truncated mlp20]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from clipbridge.diff.run import direct  # noqa: E402
from clipbridge.fix import apply, engines, proof  # noqa: E402
from tests.diff.models import mobilenet_v2  # noqa: E402
from diff import mlp20  # noqa: E402  # bench/diff.py (this script's directory): the 21 MB model of the diff bench


# MobileNetV2's inverted residual settings (expansion t, channels c, repeats n, first stride s), stem 32, last 1280.
SETTINGS = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1))


def mobilenet_v2_full(size: int) -> bytes:
    import io

    import torch
    from torch import nn

    def cba(cin: int, cout: int, k: int = 1, s: int = 1, groups: int = 1) -> nn.Sequential:
        return nn.Sequential(nn.Conv2d(cin, cout, k, s, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout),
                             nn.ReLU6())

    class Block(nn.Module):
        def __init__(self, cin: int, cout: int, s: int, t: int) -> None:
            super().__init__()
            mid = cin * t
            layers = ([cba(cin, mid)] if t != 1 else []) + [cba(mid, mid, 3, s, mid),
                                                             nn.Conv2d(mid, cout, 1, bias=False), nn.BatchNorm2d(cout)]
            self.body, self.res = nn.Sequential(*layers), s == 1 and cin == cout

        def forward(self, x):
            return x + self.body(x) if self.res else self.body(x)

    layers, cin = [cba(3, 32, 3, 2)], 32
    for t, c, n, s in SETTINGS:
        for i in range(n):
            layers.append(Block(cin, c, s if i == 0 else 1, t))
            cin = c
    layers.append(cba(cin, 1280))

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.features, self.classifier = nn.Sequential(*layers), nn.Linear(1280, 1000)

        def forward(self, x):
            return self.classifier(self.features(x).mean((2, 3)))

    torch.manual_seed(0)
    net = Net().eval()
    buf = io.BytesIO()
    torch.onnx.export(net, (torch.randn(1, 3, size, size),), buf, input_names=["image"], output_names=["logits"],
                      dynamo=False, opset_version=17)
    return buf.getvalue()


def measure(name: str, model: bytes, reference: str, target: str, precision: str, rounds: int) -> dict:
    w = direct("fix-write", apply.write_checked, model, reference, target)
    feeds = proof.clean_feeds(w["inputs"])
    r = engines.time_pair(target, model, w["model"], feeds, precision, rounds, warmup=10, budget_s=None)
    return {"model": name, "reference": reference, "target": target, "rules": len(w["rules_applied"]), **r}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--models", nargs="+", default=["mobilenet_v2", "mobilenet_v2_truncated", "mlp20"],
                    choices=["mobilenet_v2", "mobilenet_v2_truncated", "mlp20"])
    args = ap.parse_args()
    t = time.time()
    rows = []
    makers = {"mobilenet_v2": lambda: mobilenet_v2_full(args.size), "mobilenet_v2_truncated": lambda: mobilenet_v2(args.size),
              "mlp20": mlp20}
    for name in args.models:
        model = makers[name]()
        for reference, target in (("onnxruntime", "openvino"), ("openvino", "onnxruntime")):
            rows += [measure(name, model, reference, target, p, args.rounds) for p in ("model", "deployed")]
    print(json.dumps({"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "machine": platform.processor()
                      or platform.machine(), "cpus": os.cpu_count(), "load_average": os.getloadavg(),
                      "size": args.size, "seconds": round(time.time() - t, 1), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
