"""The CLI's reading of a user's own model file: external data next to the model is followed, as onnx.load does.

Only the CLI imports this. The service never follows external data: its routes refuse it
(clipbridge.scan.wire.refuse_external, clipbridge.api.model_guard).
"""

from __future__ import annotations

from pathlib import Path

import onnx

from clipbridge.core.errors import ArtifactError
from clipbridge.scan.wire import ExternalDataRefused, refuse_external


def embedded_from_file(path) -> bytes:
    """The CLI's reading of a user's own model file: as is when every tensor is inside it; else loaded as
    onnx.load does, which reads external data from files next to the model (refusing absolute paths, '..' and
    symlinks), and serialized with that data embedded. The service never calls this: it refuses external data."""
    data = Path(path).read_bytes()
    try:
        refuse_external(data)
        return data
    except ExternalDataRefused:
        pass
    except ArtifactError:  # not a model at all: the command's own reading says so, in its words
        return data
    try:
        return onnx.load(str(path), load_external_data=True).SerializeToString()
    except Exception as exc:  # noqa: BLE001 - onnx's own refusal (a missing file, a path outside the directory)
        raise ArtifactError(f"the model's external data cannot be read next to it: {' '.join(str(exc).split())[:300]}",
                            "model") from None
