"""A model uploaded as a zip: the `.onnx` and the external data files it names (issue 46, item 3).

torch writes `MODEL.onnx.data` beside every export, and a model over 2 GB must keep its weights outside; a zip
carries both in one form field. Everything stays in memory and inside the upload: the zip is read from the
part's bytes, its entries are checked before any is inflated, and the model's locations resolve only against
those entries (clipbridge.scan.parts), as a form's 'data' parts do (clipbridge.api.model_upload, which calls this).
The server's disk is never looked at.

Refused, each a 4xx problem+json naming `model`: more than MAX_ENTRIES entries, an entry name that is absolute,
has `..`, a backslash, a drive or NUL, a repeated name, a symlink or encrypted entry, not exactly one `.onnx`,
entries that declare more than the model limit (413) or inflate past what they declared or past MAX_RATIO times
their compressed size (a zip bomb, 413), and a zip that does not parse.
"""

from __future__ import annotations

import io
import os
import stat
import struct
import zipfile
import zlib
from typing import Any

from clipbridge.core.errors import ArtifactError, PayloadTooLarge
from clipbridge.engines.sandbox_wire import MemoryFile
from clipbridge.scan.parts import MAX_PARTS, check_name, embed_from_parts

MAGIC = b"PK\x03\x04"
MAX_ENTRIES = MAX_PARTS  # the model and its data files; torch writes one
MAX_RATIO = 200  # inflated / compressed, per entry: real weights compress < 2x, a bomb ~1000x
CHUNK = 1 << 20


def is_zip(data: Any) -> bool:
    return bytes(data[:4]) == MAGIC


def _check_name(info: zipfile.ZipInfo) -> None:
    name = info.filename
    check_name(name, "model")  # the same rule as a form's 'data' part (clipbridge.scan.parts)
    if info.flag_bits & 0x1:
        raise ArtifactError(f"the zip entry {name[:80]!r} is encrypted; send it unencrypted", "model")
    if stat.S_ISLNK(info.external_attr >> 16):
        raise ArtifactError(f"the zip entry {name[:80]!r} is a symlink; send the file itself", "model")


def _entries(zf: zipfile.ZipFile, limit: int) -> list[zipfile.ZipInfo]:
    """The zip's file entries, checked by their headers before anything is inflated."""
    if len(zf.infolist()) > MAX_ENTRIES:
        raise ArtifactError(f"the zip has {len(zf.infolist())} entries; at most {MAX_ENTRIES} (the .onnx and the "
                            "files it names)", "model")
    for info in zf.infolist():
        _check_name(info)  # before zipfile reads a name (is_dir on an empty name was an IndexError: a 500)
    infos = [i for i in zf.infolist() if not i.is_dir()]
    seen: set[str] = set()
    for info in infos:
        if info.filename in seen:
            raise ArtifactError(f"the zip entry {info.filename[:80]!r} is given twice", "model")
        seen.add(info.filename)
    declared = sum(i.file_size for i in infos)
    if declared > limit:
        raise PayloadTooLarge(f"the zip's entries hold {declared} bytes; at most {limit} "
                              "(CLIPBRIDGE_MAX_MODEL_BYTES)", "model")
    return infos


def _inflate(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> memoryview:
    """An entry's bytes, read in chunks and stopped as soon as it passes its declared size or the ratio: a
    header that lies costs at most one chunk past what it declared."""
    cap = min(info.file_size, max(info.compress_size, 1) * MAX_RATIO)
    if info.file_size > cap:
        raise PayloadTooLarge(f"the zip entry {info.filename[:80]!r} inflates {info.file_size} bytes from "
                              f"{info.compress_size}: more than {MAX_RATIO}x (a zip bomb?)", "model")
    out = bytearray()
    with zf.open(info) as f:
        while chunk := f.read(CHUNK):
            out += chunk
            if len(out) > cap:
                raise PayloadTooLarge(f"the zip entry {info.filename[:80]!r} inflates past the {cap} bytes it "
                                      "declared", "model")
    return memoryview(out)


def _opened(data: Any) -> Any:
    """The upload as a file zipfile reads: a MemoryFile through its own descriptor, bytes as they are (no copy)."""
    if isinstance(data, MemoryFile):
        return os.fdopen(os.dup(data.fd), "rb")
    return io.BytesIO(data if isinstance(data, bytes) else bytes(data))


def holds_onnx(data: Any) -> bool:
    """Whether the zip names a `.onnx` entry (a model and its data; chain's .pt2 holds none); False for a zip that
    does not parse (chain then reads it as the .pt2 it says it is, in its sandbox)."""
    try:
        with _opened(data) as f, zipfile.ZipFile(f) as zf:
            return any(n.lower().endswith(".onnx") for n in zf.namelist()[:MAX_ENTRIES + 1])
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError, EOFError, struct.error, IndexError,
            KeyError):
        return False


def model_from_zip(data: Any, limit: int) -> bytes:
    """The zip's one `.onnx`, with the external data it names embedded from the zip's own entries (`data`: the
    upload's bytes or its MemoryFile)."""
    try:
        with _opened(data) as f, zipfile.ZipFile(f) as zf:
            infos = _entries(zf, limit)
            models = [i for i in infos if i.filename.lower().endswith(".onnx")]
            if len(models) != 1:
                raise ArtifactError(f"the zip holds {len(models)} .onnx entries; send exactly one model with the "
                                    "files it names", "model")
            parts = {i.filename: _inflate(zf, i) for i in infos}
    except zipfile.BadZipFile as exc:
        raise ArtifactError(f"the model is not a readable zip: {str(exc)[:120]}", "model") from None
    except (zipfile.LargeZipFile, NotImplementedError, EOFError, ValueError, zlib.error, struct.error,
            IndexError, KeyError) as exc:  # odd methods, and zipfile's own slips on hostile headers
        raise ArtifactError(f"the zip cannot be read: {type(exc).__name__}", "model") from None
    name = models[0].filename
    folder = name.rsplit("/", 1)[0] if "/" in name else ""
    return embed_from_parts(bytes(parts[name]), folder, parts)
