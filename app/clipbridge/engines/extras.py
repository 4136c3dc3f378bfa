"""The optional engine backends: which pip extra installs each one, and whether it is installed here.

The core install serves every dialect on the NumPy kernels; each engine is its own extra (pyproject.toml), so a
backend that is missing answers a 422 that names the command installing it (`missing`), and /v1/dialects lists
which are present (`status`, found without importing them: importing torch or jax costs seconds). What each engine
is (module, distribution, extra) is its entry in the engine registry (clipbridge.engines.runtimes); the tables here
are views of it, kept for their callers.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableMapping
from importlib.util import find_spec

from clipbridge.core.errors import BackendUnavailable
from clipbridge.engines.runtimes import registry
from clipbridge.engines.runtimes.base import Runtime, install_command

__all__ = ["DIFF_INSTALL", "DISTRIBUTIONS", "ENGINES", "INSTALL_HINT", "TORCH_INDEX", "TORCH_OPTION", "install_command",
           "installed", "missing", "status", "versions"]

# PyPI's Linux x86-64 torch is the CUDA build (several GB); PyTorch's CPU index serves the same version without
# CUDA. An option that saves those GB (docs/install.md), never a requirement: every hint works from PyPI alone.
TORCH_OPTION = registry.get("torch").install_note  # type: ignore[union-attr]
TORCH_INDEX = TORCH_OPTION.split()[2]  # the URL its note names: "add --extra-index-url URL for ..."
# The diff's engines (onnxruntime and OpenVINO) in one step, as the README names it beside `clipbridge diff`.
DIFF_INSTALL = 'pip install "clipbridge[diff]"'


class _Backends(Mapping[str, tuple[str, str]]):
    """backend name -> (the extra that installs it, the module that proves it is installed): the registry's
    entries with the "backend" role, read when asked."""

    def __getitem__(self, name: str) -> tuple[str, str]:
        rt = registry.get(name)
        if rt is None or "backend" not in rt.roles:
            raise KeyError(name)
        return rt.extra, rt.module

    def __iter__(self) -> Iterator[str]:
        return iter(registry.names("backend"))

    def __len__(self) -> int:
        return len(registry.names("backend"))


class _Distributions(MutableMapping[str, str]):
    """engine -> the distribution whose version GET /v1/version and `clipbridge --version` report: the registry's
    CPU entries (onnx-reference is the core's onnx; coreml builds, not runs, on Linux). Setting one registers a
    bare engine of that name (a test's engine that is not installed)."""

    def __getitem__(self, name: str) -> str:
        rt = registry.get(name)
        if rt is None or rt.device is not None:
            raise KeyError(name)
        return rt.distributions[0]

    def __setitem__(self, name: str, dist: str) -> None:
        registry.register(Runtime(name, dist.replace("-", "_"), (dist,), ""))

    def __delitem__(self, name: str) -> None:
        registry.unregister(name)

    def __iter__(self) -> Iterator[str]:
        return iter(registry.versions())

    def __len__(self) -> int:
        return len(registry.versions())


ENGINES: Mapping[str, tuple[str, str]] = _Backends()
DISTRIBUTIONS: MutableMapping[str, str] = _Distributions()
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


def versions() -> dict[str, str | None]:
    """Each engine's installed version, None when it is not installed: read from the installed distributions'
    metadata, never by importing them (`clipbridge --version` and GET /v1/version answer at once)."""
    return registry.versions()
