"""Fix benchmark: latency of the written (fixed) model on the target against the original on the same target.

A MobileNetV2-shaped model (torch blocks exported with torch.onnx.export, tests/diff/models.py) is fixed for
onnxruntime -> OpenVINO (every ReLU6 Clip gets the NaN guard), then in ONE process both models are compiled on
OpenVINO with the same settings and run interleaved (original, written, written, original, ...); the median of
each is reported, and the ratio written / original (target <= 1.15x). Both precisions: "model" (pinned f32) and
"deployed" (the plugin's default: bf16 on a CPU with avx512_bf16/AMX). Also onnxruntime as target (the reverse
fix, NaN to the bound) at its default graph optimizations. Run: python bench/fix.py [--size 224] [--rounds 200]
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

from app.diff.run import direct  # noqa: E402
from app.fix import apply, engines, proof  # noqa: E402
from tests.diff.models import mobilenet_v2  # noqa: E402


def measure(model: bytes, reference: str, target: str, precision: str, rounds: int) -> dict:
    w = direct("fix-write", apply.write_checked, model, reference, target)
    feeds = proof.clean_feeds(w["inputs"])
    r = engines.time_pair(target, model, w["model"], feeds, precision, rounds, warmup=10)
    return {"reference": reference, "target": target, "rules": len(w["rules_applied"]), **r}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--rounds", type=int, default=200)
    args = ap.parse_args()
    model = mobilenet_v2(args.size)
    t = time.time()
    rows = [measure(model, "onnxruntime", "openvino", p, args.rounds) for p in ("model", "deployed")]
    rows += [measure(model, "openvino", "onnxruntime", p, args.rounds) for p in ("model", "deployed")]
    print(json.dumps({"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "machine": platform.processor()
                      or platform.machine(), "cpus": os.cpu_count(), "load_average": os.getloadavg(),
                      "size": args.size, "seconds": round(time.time() - t, 1), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
