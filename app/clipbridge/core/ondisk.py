"""A model whose weights stay in their files: the CLI's handle on a user's model with external data (issue 46).

`OnDisk` is a serialised model whose large tensors are left as stubs (a location, an offset, a length), and the
folder those locations are relative to (clipbridge.scan.external.weightless makes one). It is `bytes`, so every
step of the diff that parses, marks or cuts the graph works on it unchanged, on kilobytes instead of the
weights; `like` keeps the folder on what a step makes from it, and each engine's loader reads the weights from
the folder: in place where the engine can (clipbridge.engines.config, the OpenVINO runtime), into memory where it
computes from the model in this process (the reference evaluator). The server never makes one: its routes refuse
external data, and a plain `bytes` model with stubs is loaded as before (no folder, nothing followed).

The locations were checked when the model was read (relative, inside the folder, no symlink); the engines check
containment again, each against the model's folder. Nothing here names a format: core stays below the dialects.
"""

from __future__ import annotations

from typing import Any


class OnDisk(bytes):
    """A weightless serialised model and the absolute folder its external data lives in."""

    folder: str

    def __new__(cls, data: bytes, folder: str) -> OnDisk:
        self = super().__new__(cls, data)
        self.folder = folder
        return self

    def __reduce__(self) -> tuple[Any, ...]:  # a sandbox or a pool pickles it: keep the folder
        return OnDisk, (bytes(self), self.folder)


def folder_of(model: bytes) -> str | None:
    """The folder of an OnDisk model; None for plain bytes (every tensor inside, or the server's upload)."""
    return model.folder if isinstance(model, OnDisk) else None


def like(source: bytes, made: bytes) -> bytes:
    """`made` (a transformation of `source`: marks, replays, one node cut out) with the folder of `source`, so that
    its engines still find the weights its stubs name."""
    folder = folder_of(source)
    return made if folder is None or isinstance(made, OnDisk) else OnDisk(made, folder)


def same(a: bytes, b: bytes) -> bool:
    """Whether two models are one: equal bytes and, for OnDisk, the same folder (equal stubs in two folders name
    two sets of weights)."""
    return a == b and folder_of(a) == folder_of(b)
