"""What the device entries share: finding a GPU without initialising it, and the refusal that names why not.

A GPU is looked for through the driver's files, never by initialising CUDA: the engines run in sandbox children
forked from the server, and a parent that has initialised CUDA leaves its forked children unable to.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from clipbridge.core.errors import BackendUnavailable

NVIDIA_GPUS = Path("/proc/driver/nvidia/gpus")  # one folder per GPU the NVIDIA driver sees (Linux)
# onnxruntime-gpu installs the same `onnxruntime` module as onnxruntime, so the two cannot share an environment and
# no extra can list it beside [diff]'s onnxruntime: the CUDA and TensorRT entries ask for this swap (docs/install.md).
ORT_GPU_SWAP = ("pip uninstall -y onnxruntime && pip install onnxruntime-gpu==1.32.0 (it replaces onnxruntime: "
                "the two cannot share an environment)")


class DeviceUnavailable(BackendUnavailable):
    """An engine's device is absent here (no GPU, no provider, no plugin): the host's fault, never the model's."""

    title = "An engine's device is not available"


@lru_cache(maxsize=1)
def nvidia_gpus() -> int:
    """How many NVIDIA GPUs the driver lists (0: no driver or no GPU)."""
    try:
        return sum(1 for _ in NVIDIA_GPUS.iterdir())
    except OSError:
        return 0


@lru_cache(maxsize=1)
def ort_providers() -> tuple[str, ...]:
    """onnxruntime's execution providers in this build (listing them initialises no device)."""
    import onnxruntime
    return tuple(onnxruntime.get_available_providers())


def ort_provider_missing(engine: str, provider: str) -> str | None:
    """Why `engine` cannot run here: the provider is not in this onnxruntime, or no NVIDIA GPU is visible."""
    have = ort_providers()
    if provider not in have:
        return (f"{engine} needs onnxruntime's {provider}, and the onnxruntime here has only {', '.join(have)}: "
                f"{ORT_GPU_SWAP}")
    if not nvidia_gpus():
        return f"{engine} needs an NVIDIA GPU, and the driver lists none here ({NVIDIA_GPUS} is empty or absent)"
    return None
