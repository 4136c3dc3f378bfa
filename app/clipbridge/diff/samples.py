"""Input sets (issue 44, item 3): several `.npz` files, or a folder of them, each one sample.

Each engine compiles the model once and runs every sample on that one session or compiled model (a compile
costs far more than an inference: OpenVINO's is tens of milliseconds even for a small model). The outputs of
every sample give the statistics (clipbridge.diff.statistics); the whole diff (marks, walk, causes) runs on the
first sample whose outputs differ, named by its file, or on the first sample when none does.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from clipbridge.core.errors import ClipBridgeError
from clipbridge.diff import compare, statistics, tolerance
from clipbridge.diff import engines as diff_engines
from clipbridge.diff.child import load
from clipbridge.diff.inputs import MAX_INPUT_BYTES, read_npz
from clipbridge.engines.runtimes import registry as engine_registry

MAX_SAMPLES = 4096
MAX_ZIPPED = 256  # samples in one uploaded zip (the API), whose .npz members together stay within MAX_INPUT_BYTES


def files(paths: list[str], loc: str = "--inputs") -> list[tuple[str, bytes]]:
    """(name, bytes) of each sample: the .npz files given, and every .npz in a folder given (sorted by name)."""
    out: list[tuple[str, bytes]] = []
    for p in map(Path, paths):
        found = sorted(p.glob("*.npz")) if p.is_dir() else [p]
        if p.is_dir() and not found:
            raise ClipBridgeError(f"{str(p)[:200]} holds no .npz file", loc)
        out += [(str(f), f.read_bytes()) for f in found]
    if len(out) > MAX_SAMPLES:
        raise ClipBridgeError(f"{len(out)} samples (at most {MAX_SAMPLES})", loc)
    return out


def zipped(data: bytes | None, loc: str = "inputs") -> list[tuple[str, bytes]] | None:
    """The samples of an uploaded zip of .npz files (each one sample, by name), or None when `data` is one .npz
    (its members are .npy arrays) or absent. Sizes are read from the zip's directory before anything is inflated."""
    if not data:
        return None
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            infos = [i for i in zf.infolist() if not i.is_dir()]
            if not infos or not all(i.filename.endswith(".npz") for i in infos):
                return None
            if len(infos) > MAX_ZIPPED:
                raise ClipBridgeError(f"inputs holds {len(infos)} samples (at most {MAX_ZIPPED})", loc)
            if sum(i.file_size for i in infos) > MAX_INPUT_BYTES:
                raise ClipBridgeError(f"inputs' samples hold more than {MAX_INPUT_BYTES} bytes", loc)
            return [(i.filename, zf.read(i)) for i in sorted(infos, key=lambda i: i.filename)]
    except zipfile.BadZipFile:
        return None  # read_npz names what is wrong with it


def _runner(engine: str, model: bytes, precision: str) -> Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]]:
    """The engine's session (its registry entry, clipbridge.engines.runtimes, as the diff's runs load it), loaded
    once for every sample; no kernel read-back (only the outputs are compared)."""
    rt = engine_registry.get(engine)
    if rt is None or rt.load is None:
        raise ClipBridgeError(f"unknown engine {engine[:40]!r}; choose from {', '.join(engine_registry.names('diff'))}",
                              "engine")
    session = rt.load(model, precision)
    return lambda feeds: {k: np.asarray(v) for k, v in session.run(feeds, False)[0].items()}


def run_all(engine: str, model: bytes, feeds: list[dict[str, np.ndarray]], precision: str) -> list[dict]:
    """Every sample's final outputs on one engine, compiled once (a module-level function: `execute` runs it)."""
    try:
        run = _runner(engine, model, precision)
    except ClipBridgeError:
        raise
    except Exception as exc:
        raise diff_engines._load_error(engine, exc, model) from None  # reduced as a diff reduces it
    with np.errstate(all="ignore"):
        return [run(f) for f in feeds]


def read_all(model: bytes, npzs: list[tuple[str, bytes]]) -> list[dict[str, np.ndarray]]:
    """Each sample's arrays, checked against the graph inputs (names, dtypes, ranks, fixed dims, bytes)."""
    m = load(model)
    out = []
    for name, data in npzs:
        try:
            out.append(read_npz(data, m))
        except ClipBridgeError as exc:
            raise ClipBridgeError(f"{Path(name).name}: {exc.message}", exc.loc) from None
    return out


def compare_all(outs: dict[str, list[dict]], opts: Any, classes: int | None) -> tuple[int | None, list[dict]]:
    """(the index of the first sample whose outputs differ, or None; per output: its statistics per engine)."""
    engines = list(opts.engines)
    ref = outs[engines[0]]
    names = list(ref[0])
    first: int | None = None
    rows = []
    for name in names:
        per: dict[str, Any] = {}
        for e in engines[1:]:
            rtol, atol = tolerance.for_tensor(opts, name, names)
            masks = [compare.differing(r[name], o[name], rtol, atol).reshape(-1) for r, o in zip(ref, outs[e])]
            for k, m in enumerate(masks):
                if m.any() and (first is None or k < first):
                    first = k
            per[e] = statistics.pair([r[name] for r in ref], [o[name] for o in outs[e]], masks,
                                     classes if classes is not None and -ref[0][name].ndim <= classes < ref[0][name].ndim
                                     else None)
        rows.append({"name": name, "against": engines[0], "engines": per})
    return first, rows
