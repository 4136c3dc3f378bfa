"""The optional engine backends: which pip extra installs each one, and whether it is installed here.

The core install serves every dialect on the NumPy kernels; each engine is its own extra (pyproject.toml), so a
backend that is missing answers a 422 that names the command installing it (`missing`), and /v1/dialects lists
which are present (`status`, found without importing them: importing torch or jax costs seconds).
"""

from __future__ import annotations

from importlib import metadata
from importlib.util import find_spec

from clipbridge.core.errors import BackendUnavailable

# PyPI's Linux x86-64 torch is the CUDA build (several GB); PyTorch's CPU index serves the same version without
# CUDA. An option that saves those GB (docs/install.md), never a requirement: every hint works from PyPI alone.
TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
TORCH_OPTION = f"add --extra-index-url {TORCH_INDEX} for the CPU-only build, several GB smaller"
# The diff's engines (onnxruntime and OpenVINO) in one step, as the README names it beside `clipbridge diff`.
DIFF_INSTALL = 'pip install "clipbridge[diff]"'


def install_command(extra: str) -> str:
    """The install command the README gives for one extra (from a checkout); it resolves from PyPI alone."""
    return f'pip install -e ".[{extra}]"'


# backend name -> (the extra that installs it, the module that proves it is installed)
ENGINES = {
    "onnxruntime": ("onnxruntime", "onnxruntime"),
    "openvino": ("openvino", "openvino"),
    "jax": ("jax", "jax"),
    "tosa-reference": ("tosa", "tosa_serializer"),
    "litert": ("litert", "ai_edge_litert"),
    "torch": ("torch", "torch"),
}
INSTALL_HINT = {"gpu": install_command("gpu"), "engines": install_command("engines"),
                **{extra: install_command(extra) for extra, _ in ENGINES.values()},
                "coreml": install_command("coreml"), "diff": install_command("diff")}


def installed(backend: str) -> bool:
    """Whether the backend's module can be imported (found on the path; not imported)."""
    try:
        return find_spec(ENGINES[backend][1]) is not None
    except (ImportError, ValueError):  # a broken or half-removed install
        return False


def missing(backend: str, what: str | None = None) -> BackendUnavailable:
    """The 422 for an engine backend that is not installed: it names the extra and the command."""
    extra = ENGINES[backend][0]
    also = f"; {TORCH_OPTION}" if extra == "torch" else \
        f"; {DIFF_INSTALL} installs onnxruntime and OpenVINO together" if extra in ("onnxruntime", "openvino") else ""
    return BackendUnavailable(f"backend '{backend}' needs {what or extra}, which is not installed: "
                              f"{INSTALL_HINT[extra]} (or {INSTALL_HINT['engines']} for every engine{also})",
                              "backend")


def status() -> list[dict[str, object]]:
    """Each engine backend, whether it is installed here, and the command that installs it."""
    return [{"backend": b, "installed": installed(b), "extra": extra, "install": INSTALL_HINT[extra]}
            for b, (extra, _) in ENGINES.items()]


# engine -> the distribution that installs it: onnx-reference is the core's onnx, coreml builds (not runs) on Linux
DISTRIBUTIONS = {"onnx-reference": "onnx", "onnxruntime": "onnxruntime", "openvino": "openvino", "jax": "jax",
                 "tosa-reference": "tosa-tools", "litert": "ai-edge-litert", "torch": "torch", "coreml": "coremltools"}


def versions() -> dict[str, str | None]:
    """Each engine's installed version, None when it is not installed: read from the installed distributions'
    metadata, never by importing them (`clipbridge --version` and GET /v1/version answer at once)."""
    out: dict[str, str | None] = {}
    for engine, dist in DISTRIBUTIONS.items():
        try:
            out[engine] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[engine] = None
    return out
