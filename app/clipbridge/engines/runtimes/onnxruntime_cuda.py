"""onnxruntime on its CUDA provider (`onnxruntime:cuda`). Precision "model" turns TF32 off (the provider's default
rounds float32 matmuls and convolutions to TF32 on Ampere and newer); "deployed" keeps the provider's defaults."""

from __future__ import annotations

from clipbridge.engines.runtimes import gpu
from clipbridge.engines.runtimes.base import Runtime
from clipbridge.engines.runtimes.onnxruntime import session_on

PROVIDERS = ("CUDAExecutionProvider",)
RUNTIME = Runtime("onnxruntime:cuda", "onnxruntime", ("onnxruntime-gpu", "onnxruntime"), "gpu", frozenset({"diff"}),
                  device="cuda", load=session_on(PROVIDERS), install_note=gpu.ORT_GPU_SWAP,
                  probe=lambda: gpu.ort_provider_missing("onnxruntime:cuda", PROVIDERS[0]))
