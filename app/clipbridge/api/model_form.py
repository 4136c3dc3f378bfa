"""The multipart form the whole-model routes take (diff, chain, fix): a file 'model', optionally a file 'inputs',
and (read_model_upload) any number up to MAX_PARTS of files 'data', the model's external data (issue 46, item 3).

One reader, so that every model route refuses the same things with the same words and `loc`: another content
type (415), a body that is no multipart form (400, `body`), an unknown or repeated field, a 'model' that is no
file or is empty, an 'inputs' that is no file, a 'data' that is no file (its filename is the location the model
names: clipbridge.api.model_upload).

Why not Starlette's `request.form()`: it spools every file part past 1 MiB to a temporary file on disk, one
thread hop per 64 KiB chunk, and the routes then read it all back into memory anyway; for a 21 MB model that
was ~50 ms of a diff's ~270 ms (docs/performance.md). Here python-multipart's parser (the library Starlette uses)
writes the parts straight into memory. The body is already bounded (CLIPBRIDGE_MAX_BODY_BYTES, clipbridge.main's
BodyLimit), so the parts held are too. With `files=True` (the diff route, whose whole work runs in a sandbox
worker) each part is written into a memory file as it arrives (clipbridge.engines.sandbox_wire.MemoryFile): the worker
then gets it by descriptor, and this process never copies the model (a 21 MB upload: docs/performance.md).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from fastapi import Request
from python_multipart.multipart import MultipartParser, parse_options_header

from clipbridge.core.errors import ArtifactError, UnsupportedMediaType
from clipbridge.engines.sandbox_wire import MemoryFile
from clipbridge.scan.parts import MAX_PARTS as MAX_DATA_PARTS

MAX_PARTS = 2  # 'model' and 'inputs'
FIELDS = "send 'model' and optionally 'inputs'"
DATA_FIELDS = "send 'model', optionally 'inputs', and a file 'data' per external data file the model names"


@dataclass
class Part:
    name: str = ""
    filename: str | None = None
    data: Any = field(default_factory=bytearray)  # a bytearray, or a MemoryFile (read_parts' `files`)
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)


class _Collector:
    """python-multipart's callbacks, collecting each part's headers and bytes in memory."""

    def __init__(self, files: bool = False, max_parts: int = MAX_PARTS) -> None:
        self.parts: list[Part] = []
        self.max_parts = max_parts
        self.files = files and MemoryFile.available()
        self.field, self.value = bytearray(), bytearray()  # python-multipart bounds a header's size and count

    def callbacks(self) -> dict:
        return {"on_part_begin": self.begin, "on_header_field": self.on_field, "on_header_value": self.on_value,
                "on_header_end": self.header_end, "on_headers_finished": self.headers_done,
                "on_part_data": self.on_data}

    def begin(self) -> None:
        if len(self.parts) >= self.max_parts:
            fields = FIELDS if self.max_parts == MAX_PARTS else f"{DATA_FIELDS} (at most {MAX_DATA_PARTS})"
            raise ArtifactError(f"the form has more than {self.max_parts} parts; {fields}", "body")
        self.parts.append(Part(data=_memory_file()) if self.files else Part())

    def on_field(self, data: bytes, start: int, end: int) -> None:
        self.field += data[start:end]

    def on_value(self, data: bytes, start: int, end: int) -> None:
        self.value += data[start:end]

    def header_end(self) -> None:
        self.parts[-1].headers.append((bytes(self.field).lower(), bytes(self.value)))
        self.field, self.value = bytearray(), bytearray()

    def headers_done(self) -> None:
        part = self.parts[-1]
        disposition = dict(part.headers).get(b"content-disposition", b"")
        _kind, options = parse_options_header(disposition)
        part.name = options.get(b"name", b"").decode("latin-1")
        raw = options.get(b"filename")
        part.filename = raw.decode("latin-1") if raw is not None else None

    def on_data(self, data: bytes, start: int, end: int) -> None:
        part = self.parts[-1]
        if isinstance(part.data, MemoryFile):
            before = part.data.size
            try:
                part.data.write(memoryview(data)[start:end])
                return
            except OSError:  # the memory file cannot grow: the part goes on in this process's memory
                part.data = _in_memory(part.data, before)  # this chunk is appended whole below
        part.data += memoryview(data)[start:end]  # no slice copy: a 21 MB part is ~80 chunks

    def close(self) -> None:
        release(*(p.data for p in self.parts))


def _boundary(content_type: str) -> bytes:
    _kind, options = parse_options_header(content_type)
    boundary = options.get(b"boundary")
    if not boundary:
        raise ArtifactError("the multipart/form-data content type has no boundary", "body")
    return boundary


async def read_parts(request: Request, files: bool = False, max_parts: int = MAX_PARTS) -> list[Part]:
    """The form's parts, in memory (in memory files with `files`, where the platform has them); a body that is
    no multipart form is a 400 naming `body`. On any refusal the parts read so far are released."""
    collector = _Collector(files, max_parts)
    try:
        parser = MultipartParser(_boundary(request.headers.get("content-type", "")), collector.callbacks())
        async for chunk in request.stream():
            parser.write(chunk)
        parser.finalize()
    except ArtifactError:
        collector.close()
        raise
    except BaseException as exc:  # python-multipart's parse errors (the sender's body), or a lost client
        collector.close()
        if not isinstance(exc, Exception):
            raise
        raise ArtifactError(f"the body is not a readable multipart form: {str(exc)[:200]}", "body") from None
    return collector.parts


@dataclass
class Upload:
    """A model form as read: the model, the optional .npz, and the 'data' parts by filename (the locations)."""

    model: Any
    inputs: Any = None
    data: dict[str, Any] = field(default_factory=dict)

    def release(self) -> None:
        release(self.model, self.inputs, *self.data.values())


async def read_model_form(request: Request, model_is: str, files: bool = False) -> tuple[Any, Any]:
    """The model's bytes and the optional .npz's; `model_is` says what 'model' holds ("the .onnx", ...). With
    `files`, each is a MemoryFile where the platform has them (the caller closes them), else bytes."""
    upload = await read_model_upload(request, model_is, files, data=False)
    return upload.model, upload.inputs


async def read_model_upload(request: Request, model_is: str, files: bool = False, data: bool = True) -> Upload:
    """The form as read_model_form reads it, and with `data` the 'data' parts (the model's external data files,
    each by its filename; clipbridge.api.model_upload resolves them)."""
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype != "multipart/form-data":
        raise UnsupportedMediaType(f"send multipart/form-data with a file field 'model' ({model_is}; optionally "
                                   f"'inputs', an .npz); got {ctype or 'no content type'}")
    parts = await read_parts(request, files, MAX_PARTS + MAX_DATA_PARTS if data else MAX_PARTS)
    try:
        model, inputs, data_parts = _fields(parts, model_is, data)
    except BaseException:
        release(*(p.data for p in parts))
        raise
    return Upload(_as_passed(model.data), _as_passed(inputs.data) if inputs is not None else None,
                  {p.filename or "": _as_passed(p.data) for p in data_parts})


def readable(data: Any) -> Any:
    """An upload as a bytes-like object for the checks run in this process (a MemoryFile's read-only view)."""
    return data.sealed() if isinstance(data, MemoryFile) else data


def release(*data: Any) -> None:
    """Close the memory files among `data` (a route's uploads, once answered; bytes need nothing)."""
    for d in data:
        if isinstance(d, MemoryFile):
            d.close()


def _as_passed(data: Any) -> Any:
    """A part as the route gets it: its MemoryFile, or bytes."""
    return data if isinstance(data, MemoryFile) else bytes(data)


def _memory_file() -> Any:
    """A new part's MemoryFile, or a bytearray where none can be made (descriptors or memory run out): the form
    is still read, the copy-free path only is lost."""
    try:
        return MemoryFile()
    except OSError:
        return bytearray()


def _in_memory(f: MemoryFile, size: int) -> bytearray:
    """The first `size` bytes a MemoryFile holds, in a bytearray (the file closed)."""
    try:
        return bytearray(os.pread(f.fd, size, 0))
    finally:
        f.close()


def _fields(parts: list[Part], model_is: str, data: bool = False) -> tuple[Part, Part | None, list[Part]]:
    """The 'model' part, the optional 'inputs' part and the 'data' parts, or the 400 naming what is wrong."""
    by_name: dict[str, Part] = {}
    data_parts: list[Part] = []
    for p in parts:
        if p.name == "data" and data:
            data_parts.append(_data_part(p, data_parts))
            continue
        if p.name not in ("model", "inputs"):
            raise ArtifactError(f"unknown form field {p.name[:40]!r}; {DATA_FIELDS if data else FIELDS}",
                                p.name[:40])
        if p.name in by_name:
            raise ArtifactError(f"the form field {p.name!r} is given twice", p.name)
        by_name[p.name] = p
    model, inputs = by_name.get("model"), by_name.get("inputs")
    if model is None or model.filename is None:
        raise ArtifactError(f"the form needs a file field 'model' ({model_is})", "model")
    if inputs is not None and inputs.filename is None:
        raise ArtifactError("'inputs' must be a file (an .npz)", "inputs")
    if not len(model.data):
        raise ArtifactError("the model is empty", "model")
    if inputs is not None and not len(inputs.data):
        raise ArtifactError("the inputs file is empty (an .npz keyed by graph input name)", "inputs")
    return model, inputs, data_parts


def _data_part(p: Part, seen: list[Part]) -> Part:
    """A 'data' part: a file whose filename is the location the model names, not given twice."""
    if not p.filename:
        raise ArtifactError("'data' must be a file whose filename is the location the model names for it "
                            "(torch: MODEL.onnx.data; curl -F data=@MODEL.onnx.data)", "data")
    p.filename = _utf8(p.filename)
    if any(q.filename == p.filename for q in seen):
        raise ArtifactError(f"the data part {p.filename[:80]!r} is given twice", "data")
    return p


def _utf8(name: str) -> str:
    """A filename as sent: clients send UTF-8 (as an ONNX location is), python-multipart decodes latin-1."""
    try:
        return name.encode("latin-1").decode("utf-8")
    except UnicodeError:
        return name
