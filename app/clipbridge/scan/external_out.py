"""A model whose weights stay in their files (an OnDisk model: clipbridge.core.ondisk) written as a model file of
its own, for `clipbridge fix --output OUT.onnx` (issue 46): OUT.onnx is the graph with its stubs as they are
(location, offset, length), and each data file a stub names lies beside it under that location, as the
source's did. So the weights never pass through this process, and a model past 2 GB is written as it was read.

A data file is copied by streaming (shutil.copyfile, to a temporary name in OUT's folder and then renamed, so that
a copy cut short never stands under the data file's name). Nothing is copied when OUT's folder is the source's
folder: the written model names the same files. A file of that name already in OUT's folder is kept when its
content is the data file's, and refused otherwise (ClipBridgeError naming `--output`), never overwritten: it may
be another model's weights. A model with every tensor inside (plain bytes) is written as it is.
"""

from __future__ import annotations

import filecmp
import os
import shutil
from pathlib import Path

import onnx

from clipbridge.core.errors import ClipBridgeError
from clipbridge.core.ondisk import folder_of
from clipbridge.scan.external import located
from clipbridge.scan.wire import _tensors, is_external

OPTION = "--output"


def locations(model: bytes) -> list[str]:
    """The data files the model's stubs name (their locations), sorted: what the written model needs beside it."""
    m = onnx.load_from_string(model)
    return sorted({next((e.value for e in t.external_data if e.key == "location"), "")
                   for t in _tensors(m) if is_external(t)})


def plan(model: bytes, out: str | Path) -> list[tuple[Path, Path]]:
    """The copies (data file, its place beside OUT) that writing `model` to `out` makes: none for plain bytes or
    into the model's own folder. Every refusal is raised here, before anything is written, so that a caller
    refuses before its work too (`clipbridge fix` does, before the fix runs)."""
    out = Path(out)
    folder = folder_of(model)
    if folder is None or out.parent.resolve() == Path(folder):
        return []
    if not out.parent.is_dir():  # as writing a plain model there would fail: no folder is made for OUT
        raise ClipBridgeError(f"{OPTION}'s folder {str(out.parent)[:200]!r} does not exist", OPTION)
    pairs = [(located(Path(folder), loc), _target(out, loc)) for loc in locations(model)]
    return [(source, target) for source, target in pairs if not _already_there(source, target)]


def write_model(model: bytes, out: str | Path) -> None:
    """Write `model` to `out`; an OnDisk model's data files beside it (module docstring), each refusal first."""
    for source, target in plan(model, out):
        _copy(source, target)
    Path(out).write_bytes(model)


def _target(out: Path, location: str) -> Path:
    """Where a data file goes: its location in OUT's folder, which must stay inside that folder (no symlinked
    folder on the way) and must not be OUT itself."""
    target = out.parent / location
    resolved = target.resolve()
    if not resolved.is_relative_to(out.parent.resolve()) or resolved == out.resolve():
        raise ClipBridgeError(f"the fixed model's weights go to {location[:120]!r} beside {out.name[:120]!r}, which "
                              f"is not a file of its own in {OPTION}'s folder: choose another {OPTION}", OPTION)
    return target


def _already_there(source: Path, target: Path) -> bool:
    """Whether `target` already holds `source`'s content (then it is kept); False when there is no such file;
    ClipBridgeError when it holds anything else (compared in chunks, never read whole)."""
    if not target.exists() and not target.is_symlink():
        return False
    if target.is_file() and not target.is_symlink() and filecmp.cmp(source, target, shallow=False):
        return True
    raise ClipBridgeError(f"{str(target)[:200]!r} already exists with other content than the model's data file "
                          f"{source.name[:120]!r}; the fixed model's weights are written beside it under that "
                          f"name: choose another folder for {OPTION}, or remove that file", OPTION)


def _copy(source: Path, target: Path) -> None:
    """Stream `source` to `target` through a temporary file in the same folder, renamed when complete."""
    target.parent.mkdir(parents=True, exist_ok=True)
    part = target.with_name(f".{target.name}.{os.getpid()}.part")
    os.close(os.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))  # ours alone; the umask's mode, as a save
    try:
        shutil.copyfile(source, part)
        os.replace(part, target)
    except BaseException:
        part.unlink(missing_ok=True)
        raise
