"""The one reading of a user's own model file, for `clipbridge diff`, `clipbridge chain` (an ONNX source) and
fleet's workers: external data next to the model is followed, as onnx.load does.

torch's exporter (torch 2.13, dynamo) writes `MODEL.onnx.data` beside every export, so a registry of exports is a
registry of models with external data. Each location a model names is checked here before onnx reads it: relative,
no `..`, no drive, no NUL (clipbridge.scan.wire.check_external_location), and the file inside the model's folder,
a regular file, not a symlink; onnx.load then applies its own checks (symlink, containment, hard link) as a second
line. The service never calls this: its routes refuse external data (clipbridge.scan.wire.refuse_external,
clipbridge.api.model_guard; docs/isolation.md).
"""

from __future__ import annotations

import mmap
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx.external_data_helper import load_external_data_for_model, load_external_data_for_tensor

from clipbridge.core.errors import ArtifactError
from clipbridge.core.ondisk import OnDisk
from clipbridge.scan.constant_reader import MAX_CONSTANT
from clipbridge.scan.wire import ExternalDataRefused, _tensors, is_external, load_light

UNREADABLE = "the model's external data cannot be read next to it"
# protobuf's limit on one serialised message: the embedded model (read_model) cannot pass it. Checked from the file
# sizes before anything is read (onnx's own refusal, "Failed to serialize proto", came after reading 2 GB).
EMBED_LIMIT = 2**31 - 1


@dataclass(frozen=True)
class ModelFile:
    """A model file as read: `raw` its bytes as they are (what the scan reads: an external tensor stays an unread
    stub), `engines` what the engines run (read_model: every external tensor's data read in; read_weightless: an
    OnDisk model, the weights left in their files), `data_files` the external data files it names (hashed after
    the model: the weights are part of the model)."""

    raw: bytes
    engines: bytes
    data_files: tuple[Path, ...] = ()


def located(folder: Path, location: str) -> Path:
    """The file a (checked) location names, inside the model's folder, a regular file and no symlink."""
    target = folder / location
    inside = target.resolve().is_relative_to(folder.resolve())
    if not inside or any(p.is_symlink() for p in (target, *target.parents) if p != folder and
                         p.is_relative_to(folder)):
        raise ArtifactError(f"{UNREADABLE}: {location[:120]!r} leaves the model's folder (a symlink)", "model")
    if not target.is_file():
        raise ArtifactError(f"{UNREADABLE}: {location[:120]!r} is not a file beside the model", "model")
    return target


def data_files(path: Path, raw: bytes | mmap.mmap) -> tuple[Path, ...]:
    """The external data files an ONNX model names, each checked (module docstring), in location order; none for
    bytes that are not an ONNX model; ArtifactError for a location that leaves the folder or a missing file."""
    try:
        light = load_light(raw)
    except ExternalDataRefused:  # absolute, '..', a drive, empty: never opened
        raise ArtifactError(f"{UNREADABLE}: a tensor's location is not a file name inside the model's folder "
                            "(absolute, '..', a drive or empty)", "model") from None
    except ArtifactError:  # not an ONNX model: the command's own reading says so, in its words
        return ()
    locations = {next((e.value for e in t.external_data if e.key == "location"), "")
                 for t in _tensors(light.model) if is_external(t)}
    return tuple(located(path.parent, loc) for loc in sorted(locations))


def files_of(path: Path) -> tuple[Path, ...]:
    """The model's external data files, for hashing before any worker reads it; () when the file is no ONNX model or
    names a file that cannot be read (the worker's reading then says why, for that model)."""
    try:
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
            return data_files(path, buf)
    except (ArtifactError, OSError, ValueError):  # ValueError: an empty file cannot be mapped
        return ()


def read_model(path: str | Path) -> ModelFile:
    """The model at `path`: as is when every tensor is inside it (or the bytes are not an ONNX model: the
    command's own reading says so, in its words); else loaded as onnx.load does, with the data embedded."""
    path = Path(path)
    raw = path.read_bytes()
    files = data_files(path, raw)
    if not files:
        return ModelFile(raw, raw)
    total = len(raw) + sum(f.stat().st_size for f in files)
    if total > EMBED_LIMIT:
        raise ArtifactError(f"the model with its external data is {total} bytes, past the {EMBED_LIMIT} bytes one "
                            "ONNX protobuf holds: clipbridge runs the engines on the model with its data embedded, "
                            "so a model this size cannot be diffed, fixed or chained yet (issue 46, item 6)", "model")
    try:
        embedded = onnx.load(str(path), load_external_data=True).SerializeToString()
    except Exception as exc:  # noqa: BLE001 - onnx's own refusal (a path outside the folder, a bad offset, > 2 GB)
        raise ArtifactError(f"{UNREADABLE}: {' '.join(str(exc).split())[:300]}", "model") from None
    return ModelFile(raw, embedded, files)


def embedded_from_file(path: str | Path) -> bytes:
    """The model with its external data embedded (read_model): what the precision trace and chain run."""
    return read_model(path).engines


def weightless(path: str | Path) -> bytes:
    """The model at `path` for the engines of `clipbridge diff` without its weights in this process: as is when
    every tensor is inside it; else an OnDisk model (clipbridge.core.ondisk), its graph with each large external
    tensor left as its stub, which the engines read from the model's folder. Past 2 GB too: only the graph is
    one protobuf. The small ones (at most MAX_CONSTANT elements: a clip's bounds, a Reshape's shape, a
    quantization scale) are read in, because the diff's own steps read them by value."""
    return read_weightless(path).engines


def read_weightless(path: str | Path) -> ModelFile:
    """The model at `path` as weightless reads it for the engines, with its raw bytes and data files (fleet hashes
    them before its diff)."""
    path = Path(path)
    raw = path.read_bytes()
    files = data_files(path, raw)  # checks every location before any is read
    if not files:
        return ModelFile(raw, raw)
    try:
        m = onnx.load_from_string(raw)
        for t in _tensors(m):
            if is_external(t) and np.prod(t.dims, dtype=np.float64) <= MAX_CONSTANT:
                load_external_data_for_tensor(t, str(path.parent))  # onnx's own containment checks, again
                t.data_location = onnx.TensorProto.DEFAULT
                del t.external_data[:]
    except Exception as exc:  # noqa: BLE001 - onnx's refusal (a bad offset or length): the user's files
        raise ArtifactError(f"{UNREADABLE}: {' '.join(str(exc).split())[:300]}", "model") from None
    return ModelFile(raw, OnDisk(m.SerializeToString(), str(path.parent.resolve())), files)


def with_weights(model: bytes) -> bytes:
    """An OnDisk model with its weights read in (onnx's reader, with its own checks): a file that must stand on
    its own (a bundle's replay); plain bytes as they are."""
    if not isinstance(model, OnDisk):
        return model
    m = onnx.load_from_string(model)
    load_external_data_for_model(m, model.folder)
    return m.SerializeToString()
