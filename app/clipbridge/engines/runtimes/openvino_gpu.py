"""OpenVINO's GPU plugin (`openvino:GPU`, Intel GPUs). The plugin ships in the openvino wheel; the GPU's compute
runtime (OpenCL / Level Zero driver) is the host's, so pip alone cannot make it available."""

from __future__ import annotations

from functools import lru_cache

from clipbridge.engines import config
from clipbridge.engines.runtimes.base import Runtime
from clipbridge.engines.runtimes.openvino import build_id, on_device


@lru_cache(maxsize=1)
def _missing() -> str | None:
    found = list(config.ov_core().available_devices)
    if any(d.split(".")[0] == "GPU" for d in found):
        return None
    return (f"openvino:GPU needs OpenVINO's GPU plugin and an Intel GPU with its compute runtime (OpenCL or Level "
            f"Zero driver); OpenVINO sees only {', '.join(found) or 'no device'} here")


RUNTIME = Runtime("openvino:GPU", "openvino", ("openvino",), "openvino", frozenset({"diff"}), device="GPU",
                  load=on_device("GPU"), probe=_missing, build=build_id,
                  install_note="and the Intel GPU compute runtime from the host's packages (docs/install.md)")
