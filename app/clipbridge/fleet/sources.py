"""The models of a registry: .onnx files, OpenVINO .xml files and directories searched recursively; their
path inside the registry, sha256, inputs, and the deterministic shard a model belongs to.

A model's path inside the registry (`Model.key`, results.jsonl's `path`) is its path relative to the SOURCE it was
found under (a file given as SOURCE: its file name), so that the same registry checked out in another folder (a CI
workspace, a volume mounted elsewhere, a copy) names its models the same: `--against` matches by it
(app/clipbridge/fleet/changes.py). Two SOURCEs holding the same relative path keep them apart by the SOURCE's own
folder name in front (`a/m.onnx`, `b/m.onnx`); a run whose models still share a path is refused."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from clipbridge.core.errors import ClipBridgeError
from clipbridge.scan.external import files_of

SUFFIXES = (".onnx", ".xml")
CHUNK = 1 << 20


@dataclass(frozen=True)
class Model:
    """One model: the path as given (the report's name), its path inside the registry (what --against matches),
    its absolute path, sha256 and inputs (.npz or None)."""

    name: str
    key: str
    path: str
    sha256: str
    inputs: str | None
    inputs_sha256: str | None


def file_sha256(path: Path, *extra: Path | None) -> str:
    """sha256 of the file's bytes, then of each extra file's (an IR's .bin, an ONNX model's external data: the
    weights are part of the model)."""
    return sha256_after(hashlib.sha256(), (path, *extra))


def sha256_after(h: "hashlib._Hash", files: tuple[Path | None, ...]) -> str:
    """`h` updated with each file's bytes in turn (None skipped): a worker that has the model's bytes already
    hashes them, then its data files, and gets what the parent got."""
    for p in files:
        if p is None:
            continue
        with open(p, "rb") as f:
            while block := f.read(CHUNK):
                h.update(block)
    return h.hexdigest()


class Found(NamedTuple):
    """A model found under a SOURCE, not read yet: the path as given, its path inside the registry, the file."""

    name: str
    key: str
    path: Path


def _walk(source: str) -> list[Found]:
    p = Path(source)
    if p.is_dir():
        found = sorted(q for q in p.rglob("*") if q.is_file() and q.suffix.lower() in SUFFIXES)
        return [Found(str(q), q.relative_to(p).as_posix(), q) for q in found]
    if p.is_file():
        if p.suffix.lower() not in SUFFIXES:
            raise ClipBridgeError(f"{source} is neither an .onnx model nor an OpenVINO .xml", "SOURCE")
        return [Found(source, p.name, p)]
    raise ClipBridgeError(f"{source} does not exist", "SOURCE")


def _qualified(f: Found, source: str) -> Found:
    """The key with the SOURCE's own folder name in front: two SOURCEs holding the same relative path."""
    p = Path(source).resolve()
    return f._replace(key=f"{(p if p.is_dir() else p.parent).name}/{f.key}")


def _inputs(path: Path, inputs_dir: str | None) -> Path | None:
    """The .npz of the model's name beside it, or in --inputs-dir (which wins when both exist)."""
    for where in ([Path(inputs_dir)] if inputs_dir else []) + [path.parent]:
        npz = where / (path.stem + ".npz")
        if npz.is_file():
            return npz
    return None


def walk(sources: list[str]) -> list[Found]:
    """Every model under the sources, once each (by absolute path), with its path inside the registry; nothing is
    read yet, so that a missing SOURCE (or two models sharing a path) is refused before any work starts."""
    seen: dict[str, tuple[Found, str]] = {}
    for source in sources:
        for f in _walk(source):
            seen.setdefault(str(f.path.resolve()), (f, source))
    keys = Counter(f.key for f, _ in seen.values())
    found = [_qualified(f, src) if keys[f.key] > 1 else f for f, src in seen.values()]
    clash = sorted(k for k, n in Counter(f.key for f in found).items() if n > 1)
    if clash:
        names = [f.name for f in found if f.key == clash[0]]
        raise ClipBridgeError(f"{names[0]} and {names[1]} are both {clash[0]!r} inside the registry (a model is "
                              "named by its path under its SOURCE): give SOURCEs whose folders are named apart",
                              "SOURCE")
    return found


def describe(found: Found, inputs_dir: str | None = None) -> Model:
    """One model with its sha256 and inputs: the files are read (hashed) here."""
    path = found.path
    npz = _inputs(path, inputs_dir)
    return Model(found.name, found.key, str(path.resolve()), file_sha256(path, *weights(path)),
                 str(npz.resolve()) if npz else None, file_sha256(npz) if npz else None)


def weights(path: Path) -> tuple[Path, ...]:
    """The files beside a model that hold its weights: an IR's .bin, an ONNX model's external data (read as the
    worker will read them: clipbridge.scan.external)."""
    if path.suffix.lower() == ".xml":
        bin_ = path.with_suffix(".bin")
        return (bin_,) if bin_.is_file() else ()
    return files_of(path)


def models(sources: list[str], inputs_dir: str | None = None) -> Iterator[Model]:
    """Every model under the sources, described one at a time: a run starts its workers at the first model it
    must compute, while the rest are still being hashed."""
    for found in walk(sources):
        yield describe(found, inputs_dir)


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
