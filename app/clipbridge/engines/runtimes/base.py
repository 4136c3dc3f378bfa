"""The one interface of an engine (`Runtime`) and of a loaded model on a diff engine (`Session`).

An engine module exports `RUNTIME = Runtime(...)`. Only the whole-model diff's engines (role "diff") have `load`;
the others (dialect backends, the chain's LiteRT and Core ML) are listed for their version, install hint and
presence. A device entry (`onnxruntime:cuda`) is its own Runtime with `probe`, which says why the device cannot run
here; it is asked before any work (clipbridge.diff.engines.require), so a missing GPU is a 422 / exit 2, never a
500 and never a silent fall-back to the CPU.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from importlib.util import find_spec
from typing import Any, Protocol

import numpy as np

from clipbridge import behaviour

Feeds = dict[str, np.ndarray]
SHORT = {"float32": "f32", "float16": "f16", "float64": "f64", "bfloat16": "bf16"}


def float_types(values: Any) -> str:
    """The float types the outputs came back in ("f16/f32"), "model" when none is a float: how a kernel-per-node
    engine (onnxruntime's CPU provider, the reference) reports the precision it ran at."""
    return "/".join(sorted({SHORT[v.dtype.name] for v in values if v.dtype.name in SHORT})) or "model"


def install_command(extra: str) -> str:
    """The install command the README gives for one extra (from a checkout); it resolves from PyPI alone."""
    return f'pip install -e ".[{extra}]"'


class Session(Protocol):
    """A model loaded on one engine: `run` returns (tensor name -> value, {"precision", "kernels", "settings"})."""

    def run(self, feeds: Feeds, kernels: bool = True) -> tuple[dict[str, Any], dict[str, Any]]: ...


# (model bytes, precision "model" | "deployed") -> Session. Raises the engine's own exception on a model it refuses:
# the caller reduces it (clipbridge.engines.errors) into the 422 that names `model`.
Loader = Callable[[bytes, str], Session]


@dataclass(frozen=True)
class Runtime:
    """One engine as clipbridge knows it. `name` is how the CLI, the API and reports spell it."""

    name: str
    module: str  # found (never imported) to tell that it is installed
    distributions: tuple[str, ...]  # whose metadata gives its version; the first installed one wins
    extra: str  # the pip extra that installs it (pyproject.toml)
    roles: frozenset[str] = frozenset()  # "diff": runs a whole ONNX model; "backend": a dialect's execute backend
    device: str | None = None  # None: the CPU; else the device part of the name (onnxruntime:cuda -> cuda)
    load: Loader | None = None
    probe: Callable[[], str | None] | None = None  # installed, but why this device cannot run here (None: it can)
    install_note: str = ""  # said after the install command (a swap, a smaller build)
    table_names: tuple[str, ...] = ()  # the names the behaviour table gives it besides its own (LiteRT's hops)
    build: Callable[[], str] | None = None  # the version the imported engine reports (OpenVINO's build id)

    @property
    def base(self) -> str:
        """The engine without its device: `onnxruntime:cuda` -> `onnxruntime`."""
        return self.name.partition(":")[0]

    def install_hint(self) -> str:
        command = install_command(self.extra) if self.extra else "pip install -e ."  # "": the core install
        return command + (f" ({self.install_note})" if self.install_note else "")

    def installed(self) -> bool:
        """Whether its module is on the path (found, not imported: importing OpenVINO costs a second)."""
        try:
            return find_spec(self.module) is not None
        except (ImportError, ValueError):  # a broken or half-removed install
            return False

    def version(self) -> str | None:
        """The installed version from distribution metadata (no import), None when not installed."""
        return _version(self.distributions)

    def ran_version(self) -> str | None:
        """The version a report names for a run: the engine's own build id where it has one (the run imported it
        already), else the distribution's."""
        return self.build() if self.build is not None else self.version()

    def unavailable(self) -> str | None:
        """Why this engine cannot run here though installed (its device or provider is absent); None: it can."""
        return self.probe() if self.probe is not None else None

    def rows(self) -> tuple[Any, ...]:
        """Its rows of the behaviour table (clipbridge.behaviour): each row whose engines name it. A device entry
        (`onnxruntime:cuda`) has only the rows measured on that device: the CPU's facts are not assumed there."""
        found = (r for n in (self.name, *self.table_names) for r in behaviour.rows_for(n))
        return tuple({r.id: r for r in found}.values())


def _version(distributions: tuple[str, ...]) -> str | None:
    for dist in distributions:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return None
