"""onnxruntime on its TensorRT provider (`onnxruntime:tensorrt`), CUDA running what TensorRT does not take. FP16 and
INT8 stay off (the provider's defaults), so a float32 model runs in float32 unless "deployed" says otherwise."""

from __future__ import annotations

from clipbridge.engines.runtimes import gpu
from clipbridge.engines.runtimes.base import Runtime
from clipbridge.engines.runtimes.onnxruntime import session_on

PROVIDERS = ("TensorrtExecutionProvider", "CUDAExecutionProvider")
RUNTIME = Runtime("onnxruntime:tensorrt", "onnxruntime", ("onnxruntime-gpu", "onnxruntime"), "gpu",
                  frozenset({"diff"}), device="tensorrt", load=session_on(PROVIDERS), install_note=gpu.ORT_GPU_SWAP,
                  probe=lambda: gpu.ort_provider_missing("onnxruntime:tensorrt", PROVIDERS[0]))
