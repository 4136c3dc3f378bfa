"""The models of a registry: .onnx files, OpenVINO .xml files and directories searched recursively; their
sha256, their inputs, and the deterministic shard a model belongs to."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from clipbridge.core.errors import ClipBridgeError

SUFFIXES = (".onnx", ".xml")
CHUNK = 1 << 20


@dataclass(frozen=True)
class Model:
    """One model: the path as given (the report's name), its absolute path, sha256 and inputs (.npz or None)."""

    name: str
    path: str
    sha256: str
    inputs: str | None
    inputs_sha256: str | None


def file_sha256(path: Path, extra: Path | None = None) -> str:
    """sha256 of the file's bytes (and of an IR's .bin after them: the weights are part of the model)."""
    h = hashlib.sha256()
    for p in (path, extra):
        if p is None:
            continue
        with open(p, "rb") as f:
            while block := f.read(CHUNK):
                h.update(block)
    return h.hexdigest()


def _walk(source: str) -> list[tuple[str, Path]]:
    p = Path(source)
    if p.is_dir():
        found = sorted(q for q in p.rglob("*") if q.is_file() and q.suffix.lower() in SUFFIXES)
        return [(str(q), q) for q in found]
    if p.is_file():
        if p.suffix.lower() not in SUFFIXES:
            raise ClipBridgeError(f"{source} is neither an .onnx model nor an OpenVINO .xml", "SOURCE")
        return [(source, p)]
    raise ClipBridgeError(f"{source} does not exist", "SOURCE")


def _inputs(path: Path, inputs_dir: str | None) -> Path | None:
    """The .npz of the model's name beside it, or in --inputs-dir (which wins when both exist)."""
    for where in ([Path(inputs_dir)] if inputs_dir else []) + [path.parent]:
        npz = where / (path.stem + ".npz")
        if npz.is_file():
            return npz
    return None


def walk(sources: list[str]) -> list[tuple[str, Path]]:
    """(name as given, path) of every model under the sources, once each (by absolute path); nothing is read yet,
    so that a missing SOURCE is refused before any work starts."""
    seen: dict[str, tuple[str, Path]] = {}
    for source in sources:
        for name, path in _walk(source):
            seen.setdefault(str(path.resolve()), (name, path))
    return list(seen.values())


def describe(name: str, path: Path, inputs_dir: str | None = None) -> Model:
    """One model with its sha256 and inputs: the files are read (hashed) here."""
    bin_ = path.with_suffix(".bin") if path.suffix.lower() == ".xml" else None
    npz = _inputs(path, inputs_dir)
    return Model(name, str(path.resolve()), file_sha256(path, bin_ if bin_ and bin_.is_file() else None),
                 str(npz.resolve()) if npz else None, file_sha256(npz) if npz else None)


def models(sources: list[str], inputs_dir: str | None = None) -> Iterator[Model]:
    """Every model under the sources, described one at a time: a run starts its workers at the first model it
    must compute, while the rest are still being hashed."""
    for name, path in walk(sources):
        yield describe(name, path, inputs_dir)


def discover(sources: list[str], inputs_dir: str | None = None) -> list[Model]:
    """Every model under the sources, once each (by absolute path), sorted by the name given."""
    return sorted(models(sources, inputs_dir), key=lambda m: m.name)


def parse_shard(text: str | None) -> tuple[int, int] | None:
    """'I/N' with 0 <= I < N -> (I, N)."""
    if not text:
        return None
    i, sep, n = text.partition("/")
    if not (sep and i.strip().isdigit() and n.strip().isdigit()) or not 0 <= int(i) < int(n):
        raise ClipBridgeError(f"--shard {text!r}: write I/N with 0 <= I < N (e.g. 0/4)", "--shard")
    return int(i), int(n)


def in_shard(sha256: str, shard: tuple[int, int] | None) -> bool:
    """A model's shard is its sha256 (as an integer) modulo N: deterministic, and every model in exactly one."""
    return shard is None or int(sha256, 16) % shard[1] == shard[0]
