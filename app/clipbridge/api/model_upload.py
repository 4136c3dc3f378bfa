"""A model uploaded with its external data (issue 46, item 3): as a zip, or as form parts; one resolver for both.

torch writes `MODEL.onnx.data` beside every export, and a model over 2 GB must keep its weights outside. The
engine routes (diff, fix, chain from an ONNX source) take the data with the model in one of two ways:

- a zip of the `.onnx` and the files it names, as the form field `model` (clipbridge.api.model_zip);
- the `.onnx` as `model` and each data file as its own form part `data`, whose **filename** is the location
  the model names (`curl -F model=@block.onnx -F data=@block.onnx.data`).

Why the filename and not the field name carries the location: the form's field names stay a fixed vocabulary
(`model`, `inputs`, `data`), so an unknown field is still a 400 and the OpenAPI body can describe the form; and
curl, requests and browsers send a file's base name as its filename, which is the location torch writes. A
location inside a folder is sent as curl's `-F 'data=@w.bin;filename=weights/w.bin'`. The model part's own
filename is not read: locations resolve against the upload's root, where the model is.

Both ways end in clipbridge.scan.parts: the same name check (relative, no `..`, backslash, drive or NUL), and
each tensor's location, offset and length resolved against the upload's own parts only, in memory; the
server's disk is never looked at. A 'data' part that no tensor names is a 400 naming `data` (a misnamed file
says so). A zip and 'data' parts together are a 400 (one way at a time).

Chain: a `.pt2` is itself a zip (torch.export.save). A zip is read as a model and its data when it holds a
`.onnx` entry, else it is the `.pt2`, as before. A `.pt2` keeps its weights inside its own archive, so it needs
nothing more; 'data' parts with one are a 400 naming `data`.

Memory: what the engines get is the model with every tensor inline. With `files` (the diff route) it is written
into a sealed memory file (clipbridge.engines.sandbox_wire.MemoryFile), which the sandbox worker gets by
descriptor; the zip, its entries and the parts are released as soon as the model is built. While it is built
the server holds the upload, the inflated entries (at most CLIPBRIDGE_MAX_MODEL_BYTES declared, each stopped
past its word) and the model being built: a bounded multiple of the model limit (docs/isolation.md). It is built
in the route's execution slot, so the slots bound how many requests hold that at once.
"""

from __future__ import annotations

from typing import Any

from clipbridge.api.model_form import Upload, readable, release
from clipbridge.api.model_zip import holds_onnx, is_zip, model_from_zip
from clipbridge.core.errors import ArtifactError, PayloadTooLarge
from clipbridge.engines.sandbox_wire import MemoryFile
from clipbridge.scan.parts import check_name, embed_from_parts

PT2_HEAD = b"PK\x03\x04"  # what chain.stages.source_kind reads as a .pt2
DATA_FIELD = {"type": "array", "items": {"type": "string", "format": "binary"}, "description": (
    "repeatable, with an .onnx `model`: each external data file the model names, its filename the location the "
    "model gives it (torch: MODEL.onnx.data); resolved only against these parts, in memory")}


def model_from_parts(model: Any, data: dict[str, Any], limit: int) -> bytes:
    """The model with its external data embedded from the form's 'data' parts (by filename)."""
    for name in data:
        check_name(name, "data", "the data part's filename")
    total = len(model) + sum(len(d) for d in data.values())
    if total > limit:
        raise PayloadTooLarge(f"the model and its data parts hold {total} bytes; at most {limit} "
                              "(CLIPBRIDGE_MAX_MODEL_BYTES)", "data")
    parts = {name: readable(d) for name, d in data.items()}
    return embed_from_parts(bytes(readable(model)), "", parts, unused="data")


def is_pt2(upload: Upload) -> bool:
    """Whether chain's source is a .pt2: a zip without a `.onnx` entry, sent without 'data' parts."""
    return not upload.data and is_zip(readable(upload.model)) and not holds_onnx(upload.model)


def source_head(upload: Upload) -> bytes:
    """The first bytes chain's preflight reads the source's kind from, before anything is resolved."""
    return PT2_HEAD if is_pt2(upload) else b""


def _resolve(upload: Upload, limit: int, pt2: bool) -> bytes:
    if not upload.data:
        return model_from_zip(upload.model, limit)
    if is_zip(readable(upload.model)):
        why = ("a .pt2 keeps its weights inside its own archive" if pt2 and not holds_onnx(upload.model) else
               "send the external data in the zip or as 'data' parts, not both")
        raise ArtifactError(f"'data' parts come with an .onnx model only: {why}", "data")
    return model_from_parts(upload.model, upload.data, limit)


def resolve(upload: Upload, limit: int, files: bool = False, pt2: bool = False) -> Any:
    """The upload's model as the engine routes take it: with the external data it came with embedded (a MemoryFile
    with `files` where the platform has one, else bytes), or the model as it came when it came alone (also a
    chain's .pt2 with `pt2`). The model and data parts are released here once replaced, also on a refusal; the
    caller releases what this returns and the upload (releasing twice is harmless).

    Called inside the route's execution slot: building the model holds a bounded multiple of `limit` (the module
    docstring), and the slots bound how many requests do it at once, as they bound the engine runs."""
    if not upload.data and (not is_zip(readable(upload.model)) or (pt2 and is_pt2(upload))):
        return upload.model
    try:
        embedded = _resolve(upload, limit, pt2)
    finally:
        release(upload.model, *upload.data.values())
    return _passed(embedded, files)


def _passed(data: bytes, files: bool) -> Any:
    """`data` in a sealed MemoryFile with `files` (the sandbox worker reads it by descriptor; the bytes here go as
    soon as the caller drops them), else as it is; as it is too where no memory file can be made."""
    if not files or not MemoryFile.available():
        return data
    try:
        f = MemoryFile()
    except OSError:
        return data
    try:
        f.write(data)
        f.seal()
    except OSError:
        f.close()
        return data
    return f
