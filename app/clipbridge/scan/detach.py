"""Detach a model's external data references before native code sees it, and put them back after (issue 46).

A scan or a rewrite needs a clip's bounds, never the weights: a model whose weights live in a file that did not
come with it (torch's `MODEL.onnx.data`) is scanned and rewritten without it. Native code still runs on it
(shape inference, the version converter, the checker, in a sandbox worker), and onnx's checker stats the file
a location names (`resolve_external_data_location`: lstat, canonical paths, hard links). So no upload's
location reaches native code: each external tensor's entries are replaced by one fixed location of ours,
`#clipbridge-detached/N` (onnx's checker skips its file checks for a name starting with '#'; shape inference
and the converter never open files and keep the entries as they are). `reattach` puts the upload's own entries
back, by N, in the model that is returned to its sender. The bytes of the data are never read.
"""

from __future__ import annotations

import onnx

from clipbridge.core.errors import ArtifactError
from clipbridge.scan.wire import _tensors, is_external

PREFIX = "#clipbridge-detached/"

Saved = list[tuple[int, list[tuple[str, str]]]]  # per detached tensor: its data_location and external_data


def _location(t: onnx.TensorProto) -> str:
    return next((e.value for e in t.external_data if e.key == "location"), "")


def detach(model: onnx.ModelProto) -> Saved:
    """Replace, in place, every external tensor's entries by `#clipbridge-detached/N`; what was there, by N.

    Every external tensor is detached, a location that already reads like ours included: after this, every
    sentinel in the model is one this call wrote."""
    saved: Saved = []
    for t in _tensors(model):
        if not is_external(t):
            continue
        saved.append((int(t.data_location), [(e.key, e.value) for e in t.external_data]))
        del t.external_data[:]
        t.data_location = onnx.TensorProto.EXTERNAL
        entry = t.external_data.add()
        entry.key, entry.value = "location", f"{PREFIX}{len(saved) - 1}"
    return saved


def reattach(model: onnx.ModelProto, saved: Saved) -> None:
    """Put the upload's own entries back where `detach` left its sentinels (in place); a sentinel that is not
    one of ours, or a detached tensor that did not come back, is the model's error (400): never a guess."""
    seen: set[int] = set()
    for t in _tensors(model):
        loc = _location(t)
        if not loc.startswith(PREFIX):
            continue
        index = loc[len(PREFIX):]
        if not index.isdigit() or int(index) >= len(saved):
            raise ArtifactError(f"tensor {t.name[:80]!r} has an external data location the rewrite cannot put "
                                "back", "model")
        location, entries = saved[int(index)]
        del t.external_data[:]
        for key, value in entries:
            e = t.external_data.add()
            e.key, e.value = key, value
        t.data_location = location  # type: ignore[assignment]
        seen.add(int(index))
    if len(seen) != len(saved):
        raise ArtifactError(f"{len(saved) - len(seen)} tensor(s) with external data did not survive the rewrite "
                            "(onnx.version_converter dropped them); send the model with its data embedded",
                            "model")
