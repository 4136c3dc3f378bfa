"""Embed a model's external data from the parts of its own upload (issue 46, item 3): never from a disk.

An upload may carry the `.onnx` and the files its tensors name, as a zip (clipbridge.api.model_zip) or as form
parts `data` whose filename is the location (clipbridge.api.model_upload). Both come here: one resolver, one set of
name checks (`check_name`). Each external
tensor is resolved here, in memory, against those parts only, and every rule of the external-data issue holds:
the location is checked by the wire walk first (no absolute path, no `..`, no drive, no NUL, not empty), it
must name a part, its offset and length must be whole numbers that stay inside that part, and the length must
be what the tensor's dims and type need. The result is a model with every tensor inline, which the engine
routes then take as any other upload (clipbridge.api.model_guard.embedded_only finds nothing to refuse).
"""

from __future__ import annotations

import math
import posixpath
from collections.abc import Mapping

import onnx

from clipbridge.core.errors import ArtifactError, PayloadTooLarge
from clipbridge.scan.wire import _tensors, is_external, load_light

MAX_PARTS = 64  # the model and its data files; torch writes one
PROTOBUF_LIMIT = 2**31 - 1  # a ModelProto cannot serialize past 2 GiB: bigger models keep their data outside
ITEMSIZE = {onnx.TensorProto.FLOAT: 4, onnx.TensorProto.UINT8: 1, onnx.TensorProto.INT8: 1,
            onnx.TensorProto.UINT16: 2, onnx.TensorProto.INT16: 2, onnx.TensorProto.INT32: 4,
            onnx.TensorProto.INT64: 8, onnx.TensorProto.BOOL: 1, onnx.TensorProto.FLOAT16: 2,
            onnx.TensorProto.DOUBLE: 8, onnx.TensorProto.UINT32: 4, onnx.TensorProto.UINT64: 8,
            onnx.TensorProto.BFLOAT16: 2, onnx.TensorProto.COMPLEX64: 8, onnx.TensorProto.COMPLEX128: 16}


def check_name(name: str, loc: str, what: str = "the zip entry") -> None:
    """A part's name (a zip entry's, or a 'data' part's filename) is a plain relative name: never absolute, no `..`,
    no backslash, no drive, no NUL, not empty; else a 400 naming `loc`."""
    parts = name.split("/")
    if (not name or name.startswith("/") or "\\" in name or "\0" in name or ".." in parts
            or (len(name) > 1 and name[1] == ":")):
        raise ArtifactError(f"{what} {name[:80]!r} is not a plain relative name (absolute, '..', a backslash, a "
                            "drive, NUL or empty); name each file by the location the model gives it", loc)


def _entries(t: onnx.TensorProto) -> dict[str, str]:
    return {e.key: e.value for e in t.external_data}


def _whole(text: str | None, what: str, name: str) -> int | None:
    """A non-negative decimal integer (an offset or a length), None when absent; anything else is a 400."""
    if text is None:
        return None
    if not text.isascii() or not text.isdigit() or len(text) > 19:
        raise ArtifactError(f"tensor {name!r}: the external data {what} {text[:40]!r} is not a whole number of "
                            "bytes", "model")
    return int(text)


def _span(t: onnx.TensorProto, part_size: int) -> tuple[int, int]:
    """(offset, length) of the tensor's bytes in its part, checked against the part and the tensor's dims."""
    name, entries = t.name[:80], _entries(t)
    offset = _whole(entries.get("offset"), "offset", name) or 0
    length = _whole(entries.get("length"), "length", name)
    length = part_size - offset if length is None else length
    if offset > part_size or offset + length > part_size:
        raise ArtifactError(f"tensor {name!r}: its external data (offset {offset}, length {length}) runs past the "
                            f"end of {entries.get('location', '')[:80]!r} ({part_size} bytes)", "model")
    itemsize = ITEMSIZE.get(t.data_type)
    if itemsize is None:
        raise ArtifactError(f"tensor {name!r}: data type {t.data_type} cannot be stored as external data here "
                            "(strings and unknown types are not)", "model")
    if any(d < 0 for d in t.dims) or math.prod(t.dims) * itemsize != length:
        raise ArtifactError(f"tensor {name!r}: {length} bytes of external data, but dims {list(t.dims)[:8]} need "
                            f"{max(math.prod(t.dims), 0) * itemsize}", "model")
    return offset, length


def embed_from_parts(model_bytes: bytes, folder: str, parts: Mapping[str, memoryview],
                     unused: str | None = None) -> bytes:
    """The model with every external tensor's bytes copied in from `parts` (names relative to the upload's root;
    the model's locations are relative to `folder`, the model's own folder in it), serialized; a 4xx naming
    `model` for any location, offset or length that does not resolve inside the upload. With `unused` (a form
    field), a part no tensor names is a 400 naming it: a misnamed file says so instead of a missing location
    (a zip is a folder, where other files may lie)."""
    load_light(model_bytes)  # the framing and every location checked (absolute, '..', a drive: 400) first
    model = onnx.ModelProto()
    try:
        model.ParseFromString(model_bytes)
    except Exception:  # protobuf's DecodeError and friends
        raise ArtifactError("the model is not an ONNX ModelProto (protobuf decoding failed)", "model") from None
    parts = _by_path(parts, unused or "model")
    total, used = len(model_bytes), set()
    for t in _tensors(model):
        if not is_external(t):
            continue
        location = _entries(t).get("location", "")
        key = posixpath.normpath(posixpath.join(folder, location))  # './w.bin' is 'w.bin', as onnx reads it
        part = parts.get(key)
        if part is None:
            raise ArtifactError(f"tensor {t.name[:80]!r} names external data {location[:80]!r}, which is not in "
                                "the upload (send it in the zip, beside the model, or as a form part 'data' whose "
                                "filename is that location)", "model")
        used.add(key)
        offset, length = _span(t, len(part))
        total += length
        if total > PROTOBUF_LIMIT:
            raise PayloadTooLarge("the model with its external data passes 2 GiB, the most one ONNX model holds "
                                  "inline", "model")
        t.raw_data = bytes(part[offset:offset + length])
        del t.external_data[:]
        t.data_location = onnx.TensorProto.DEFAULT
    if unused is not None:
        _all_used(parts, used, unused)
    return model.SerializeToString()


def _by_path(parts: Mapping[str, memoryview], loc: str) -> dict[str, memoryview]:
    """The parts by their normalized path ('./w.bin' and 'w.bin' are one file); two names for one path are a 400."""
    out: dict[str, memoryview] = {}
    for name, part in parts.items():
        key = posixpath.normpath(name)
        if key in out:
            raise ArtifactError(f"the upload names {key[:80]!r} twice (as {name[:80]!r} too)", loc)
        out[key] = part
    return out


def _all_used(parts: Mapping[str, memoryview], used: set[str], loc: str) -> None:
    extra = sorted(set(parts) - used)
    if extra:
        named = ", ".join(repr(u[:80]) for u in sorted(used)[:8]) or "none"
        raise ArtifactError(f"the {loc} part {extra[0][:80]!r} is not a location the model names (it names: "
                            f"{named}); give each data part the filename of its location", loc)
