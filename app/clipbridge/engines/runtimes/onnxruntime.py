"""onnxruntime on the CPU provider: a diff engine and the ONNX dialect's backend (configured by
clipbridge.engines.config: precision "model" disables graph rewrites and keeps denormals)."""

from __future__ import annotations

from typing import Any

from clipbridge.engines import config
from clipbridge.engines.runtimes.gpu import DeviceUnavailable
from clipbridge.engines.runtimes.base import Feeds, Runtime, float_types

PROVIDERS = ("CPUExecutionProvider",)


class OrtSession:
    """An InferenceSession and the settings it was made with."""

    def __init__(self, session: Any, settings: dict[str, Any]) -> None:
        self.session, self.settings = session, settings

    def run(self, feeds: Feeds, kernels: bool = True) -> tuple[dict[str, Any], dict[str, Any]]:
        names = [o.name for o in self.session.get_outputs()]
        values = self.session.run(names, feeds)
        # The provider computes each node in its declared type: report the model's float type as it ran.
        return dict(zip(names, values)), {"precision": float_types(values), "kernels": {}, "settings": self.settings}


def session_on(providers: tuple[str, ...]) -> Any:
    """A loader on these execution providers (the CPU here; CUDA and TensorRT in their own entries)."""
    def load(model_bytes: bytes, precision: str) -> OrtSession:
        session, settings = config.onnxruntime_session(model_bytes, precision, providers)  # type: ignore[arg-type]
        if providers[0] not in settings["providers"]:  # onnxruntime fell back to the CPU: never report that as a GPU
            raise DeviceUnavailable(f"onnxruntime could not start {providers[0]} here (it ran on "
                                    f"{', '.join(settings['providers'])})", "engine")
        return OrtSession(session, settings)
    return load


RUNTIME = Runtime("onnxruntime", "onnxruntime", ("onnxruntime", "onnxruntime-gpu"), "onnxruntime",
                  frozenset({"diff", "backend"}), load=session_on(PROVIDERS),
                  install_note='pip install "clipbridge[diff]" installs onnxruntime and OpenVINO together')
