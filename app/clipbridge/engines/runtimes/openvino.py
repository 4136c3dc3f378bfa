"""OpenVINO's CPU plugin: a diff engine and the OpenVINO dialect's backend. Its runtime model is read back after
compiling: each executed kernel's `rt_info` names the ONNX nodes it was built from (`originalLayersNames`) and the
type it ran in (`runtimePrecision`), which the diff's walk reports."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from clipbridge.core.ondisk import folder_of
from clipbridge.engines import config
from clipbridge.engines.runtimes.base import Feeds, Runtime


def kernels_of(compiled: Any) -> dict[str, dict]:
    """ONNX node name -> the kernel that ran it: its precision, type and the other layers fused into it."""
    out: dict[str, dict] = {}
    for op in compiled.get_runtime_model().get_ordered_ops():
        info = op.get_rt_info()
        names = [n for n in info["originalLayersNames"].astype(str).split(",") if n] \
            if "originalLayersNames" in info else []
        kernel = {"precision": info["runtimePrecision"].astype(str) if "runtimePrecision" in info else "",
                  "type": info["layerType"].astype(str) if "layerType" in info else "", "layers": names}
        for n in names:
            out.setdefault(n, kernel)
    return out


# OpenVINO's Python infer path initialises function-local C++ statics on its first call (the dtype table behind
# Type.to_dtype) while it waits for the GIL: two threads making the process's first infers at once deadlocked, one
# in the static's guard holding the GIL, the other holding the guard waiting for it (seen with OpenVINO 2025.4 in a
# fleet test, the diff's plain runs beside its marked ones). So the first infer of the process runs alone.
_FIRST_INFER = threading.Lock()
_primed = threading.Event()


def _infer(compiled: Any, feeds: Feeds) -> Any:
    if _primed.is_set():
        return compiled(feeds)
    with _FIRST_INFER:
        result = compiled(feeds)
        _primed.set()
    return result


class OvSession:
    """A compiled model, the precision asked for and the one it compiled to."""

    def __init__(self, compiled: Any, precision: str, effective: str, device: str) -> None:
        self.compiled, self.precision, self.effective, self.device = compiled, precision, effective, device

    def run(self, feeds: Feeds, kernels: bool = True) -> tuple[dict[str, Any], dict[str, Any]]:
        # A graph input no node reads is not a port of the compiled model (OpenVINO drops it): feed only the ports.
        ports = {n for p in self.compiled.inputs for n in p.get_names()}
        result = _infer(self.compiled, {k: v for k, v in feeds.items() if k in ports})
        values = {name: result[port] for port in self.compiled.outputs for name in port.get_names()}
        settings = config.openvino_settings(self.precision, self.effective)  # type: ignore[arg-type]
        if self.device != "CPU":
            settings["device"] = self.device
        # The runtime model's kernels are read where the walk uses them (the marked run), not in a plain run.
        return values, {"precision": self.effective, "kernels": kernels_of(self.compiled) if kernels else {},
                        "settings": settings}


# OpenVINO resolves the external data of a model read from bytes against the working directory, and refuses a
# location outside it (absolute or symlinked) and, from a path, any data file outside the model's own folder: so an
# OnDisk model (clipbridge.core.ondisk) is read with the working directory moved to its folder for that call. One
# at a time (the directory is the process's); the other engines' loads name their folder and never read it.
_CWD = threading.Lock()


@contextmanager
def in_folder(folder: str | None) -> Iterator[None]:
    if folder is None:
        yield
        return
    with _CWD:
        back = os.open(".", os.O_RDONLY)  # by descriptor: the way back even if its name changes meanwhile
        try:
            os.chdir(folder)
            yield
        finally:
            os.fchdir(back)
            os.close(back)


def on_device(device: str) -> Any:
    """A loader compiling for one OpenVINO device (CPU here; GPU in openvino_gpu)."""
    def load(model_bytes: bytes, precision: str) -> OvSession:
        with in_folder(folder_of(model_bytes)):  # an OnDisk model's weights, read in place
            model = config.ov_core().read_model(model_bytes, b"")
        compiled, effective = config.openvino_compile(model, precision, device)  # type: ignore[arg-type]
        return OvSession(compiled, precision, effective, device)
    return load


def build_id() -> str:
    """OpenVINO's own version string, its build included (`2026.4.1-...`): what a diff report names."""
    import openvino
    return str(openvino.get_version())


RUNTIME = Runtime("openvino", "openvino", ("openvino",), "openvino", frozenset({"diff", "backend"}),
                  load=on_device("CPU"), build=build_id,
                  install_note='pip install "clipbridge[diff]" installs onnxruntime and OpenVINO together')
