"""The content address of one model's result: everything that can change the answer, and nothing else."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path


import clipbridge
from clipbridge.core.errors import ClipBridgeError
from clipbridge.engines import config as engine_config
from clipbridge.engines import extras
from clipbridge.engines.runtimes import registry
from clipbridge.engines.runtimes.names import parse_engine_name

PACKAGE = Path(clipbridge.__file__).resolve().parent
# The browser page's files present an answer and compute none; everything else may (a CLI or API module included:
# hashing them too costs a recompute after such an edit, never a stale answer).
NOT_CODE = ("static",)

# engine -> the distribution a pinned release installs: the engine registry's (clipbridge.engines.runtimes)
DISTRIBUTIONS = extras.DISTRIBUTIONS


@dataclass(frozen=True)
class EngineSpec:
    """An engine as named on the command line: `openvino`, or `openvino==2025.4.0` (pinned: its own environment)."""

    name: str
    pinned: str | None = None

    @property
    def label(self) -> str:
        return f"{self.name}=={self.pinned}" if self.pinned else self.name


def parse_engine(text: str) -> EngineSpec:
    """--engine through the one parser of engine names (clipbridge.engines.runtimes.names); `name` is the
    registry entry the diff runs (a device entry keeps its device: onnxruntime:cuda)."""
    spec = parse_engine_name(text, "--engine")
    if spec.precision:
        raise ClipBridgeError(f"--engine {text[:60]!r}: fleet runs each engine on the model as it is; drop "
                              f"@{spec.precision} (`clipbridge trace` runs a float16 copy)", "--engine")
    return EngineSpec(spec.key, spec.pinned)


@lru_cache(maxsize=None)  # read once per process: metadata scans site-packages (~20 ms), a run asks per model
def installed_version(name: str) -> str:
    """The installed distribution's version, read without importing the engine ('absent' when not installed)."""
    rt = registry.get(name)
    return (rt.version() if rt is not None else None) or "absent"


@lru_cache(maxsize=None)
def host_tier() -> str:
    """The host's oneDNN ISA tier (docs/host-differences.md): OpenVINO's bf16 and flush behaviour follow it."""
    return engine_config.cpu_isa() or "unknown"


@lru_cache(maxsize=None)  # read once per process (~270 small files, ~50 ms), by the run's parent only
def code_digest() -> str:
    """The digest of the installed package's code (digest_tree)."""
    return digest_tree(PACKAGE)


def digest_tree(root: Path) -> str:
    """sha256 over every file of the package that computes an answer (its relative path and bytes, in path order):
    a code change without a version bump is a new key, so the cache never serves an answer older code computed."""
    h = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and _is_code(p.relative_to(root))):
        h.update(path.relative_to(root).as_posix().encode() + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def _is_code(rel: Path) -> bool:
    return rel.parts[0] not in NOT_CODE and "__pycache__" not in rel.parts and rel.suffix not in (".pyc", ".pyo")


def cache_key(sha256: str, inputs_sha256: str | None, seed: int, engines: list[EngineSpec], precision: str) -> str:
    """sha256 over the model, its inputs (or the generator's seed), each engine's name and version, the precision,
    the host's ISA tier and the digest of clipbridge's code (its version alone would miss an unreleased change)."""
    fields = {
        "model": sha256,
        "inputs": inputs_sha256 or f"generated:{seed}",
        "engines": [[e.name, e.pinned or installed_version(e.name)] for e in engines],
        "precision": precision,
        "isa": host_tier(),
        "clipbridge": code_digest(),
    }
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()
