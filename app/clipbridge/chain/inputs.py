"""The inputs a chain runs on: the user's .npz keyed by the source's input names, or generated like diff's
(standard normal, seeded, with diff's special values planted: NaN, the infinities, FLT_MAX, signed zeros)."""

from __future__ import annotations

import io
import zipfile
from typing import Any

import numpy as np

from clipbridge.core.errors import ClipBridgeError
from clipbridge.diff.inputs import MAX_GENERATED, SEED, SPECIALS


def generate(specs: list[dict[str, Any]], seed: int = SEED) -> list[np.ndarray]:
    """One array per input, in order; float inputs get the specials at evenly spread positions."""
    rng = np.random.default_rng(seed)
    out = []
    for s in specs:
        dtype, shape = np.dtype(s["dtype"]), [int(d) for d in s["shape"]]
        count = int(np.prod(shape)) if shape else 1
        if count > MAX_GENERATED:
            raise ClipBridgeError(f"input {s['name']!r} has {count} elements (more than {MAX_GENERATED} are not "
                                  "generated): give its values in an .npz", "inputs")
        if dtype.kind == "f":
            flat = rng.standard_normal(count).astype(dtype)
            with np.errstate(over="ignore"):
                planted = np.array(SPECIALS, dtype=np.float64).astype(dtype)
            n = min(count, planted.size)
            flat[np.linspace(0, count - 1, num=n, dtype=np.int64)] = planted[:n]
        elif dtype.kind in "iu":
            flat = rng.integers(-8, 8, count).astype(dtype)
        else:
            raise ClipBridgeError(f"input {s['name']!r} has type {dtype}, which is not generated: give an .npz",
                                  "inputs")
        out.append(flat.reshape(shape))
    return out


def read(data: bytes, specs: list[dict[str, Any]]) -> list[np.ndarray]:
    """The .npz's arrays in input order, checked against the source's inputs; pickled objects refused."""
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
    except (ValueError, OSError, zipfile.BadZipFile, EOFError) as exc:
        raise ClipBridgeError(f"inputs is not a readable .npz without pickled objects: {str(exc)[:200]}",
                              "inputs") from None
    names = [s["name"] for s in specs]
    unknown = sorted(set(arrays) - set(names))
    if unknown:
        raise ClipBridgeError(f"inputs has {unknown[0][:60]!r}, which is not a model input (inputs: "
                              f"{', '.join(names)[:200]})", "inputs")
    out = []
    for s in specs:
        a = arrays.get(s["name"])
        if a is None:
            raise ClipBridgeError(f"inputs lacks model input {s['name']!r}", "inputs")
        if a.dtype != np.dtype(s["dtype"]) or list(a.shape) != [int(d) for d in s["shape"]]:
            raise ClipBridgeError(f"inputs[{s['name']!r}] is {a.dtype}{list(a.shape)}, the model takes "
                                  f"{s['dtype']}{list(s['shape'])}", "inputs")
        out.append(a)
    return out
