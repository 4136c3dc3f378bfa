"""The inputs a diff runs on: the user's .npz, or values generated to reach every clip's boundaries."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import onnx
from onnx import helper

from app.scan.patterns import ClipLike
from app.core.errors import ClipBridgeError

SEED = 20240  # the generator's fixed seed; reported in every response
DYNAMIC_DIM = 1  # a symbolic or unknown dimension is generated with this size
MAX_GENERATED = 1 << 24  # elements per generated input (a larger declared shape is refused: give an .npz)
# Values every float input gets at its first positions: NaN, the infinities, beyond float16's finite range
# (65504), float32's extremes, and both signed zeros.
SPECIALS = (np.nan, np.inf, -np.inf, 7.0e4, -7.0e4, 3.4028235e38, -3.4028235e38, 0.0, -0.0)


def graph_inputs(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    """The graph inputs a caller feeds (initializers that are also inputs keep their stored value)."""
    inits = {t.name for t in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in inits]


def _shape_dtype(vi: onnx.ValueInfoProto) -> tuple[list[int], np.dtype]:
    tt = vi.type.tensor_type
    if not vi.type.HasField("tensor_type") or tt.elem_type == 0:
        raise ClipBridgeError(f"graph input {vi.name!r} has no tensor type: give its values in an .npz", "inputs")
    dims = [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else DYNAMIC_DIM for d in tt.shape.dim]
    try:
        return dims, np.dtype(helper.tensor_dtype_to_np_dtype(tt.elem_type))
    except (KeyError, TypeError, ValueError):
        raise ClipBridgeError(f"graph input {vi.name!r} has element type {tt.elem_type}, which has no NumPy "
                              "type", "inputs") from None


def _ulps(v: float, dtype: np.dtype) -> list[float]:
    """v and one ULP either side of it in `dtype` (a clip's bound approached from both sides)."""
    t = dtype.type(v)
    return [float(np.nextafter(t, dtype.type(-np.inf))), float(t), float(np.nextafter(t, dtype.type(np.inf)))]


def boundary_values(clips: list[ClipLike], name: str, dtype: np.dtype) -> list[float]:
    """The bounds, and one ULP around them, of each clip that the graph input `name` feeds directly."""
    out: list[float] = []
    for c in clips:
        if c.x != name:
            continue
        for b in (c.lo, c.hi):
            if b is not None and np.isfinite(b):
                out += _ulps(b, dtype)
    return out


def generate(model: onnx.ModelProto, clips: list[ClipLike], seed: int = SEED) -> dict[str, np.ndarray]:
    """One array per graph input, seeded: normal values with the specials and boundary values planted first."""
    rng = np.random.default_rng(seed)
    feeds: dict[str, np.ndarray] = {}
    for vi in graph_inputs(model):
        dims, dtype = _shape_dtype(vi)
        count = int(np.prod(dims)) if dims else 1
        if count > MAX_GENERATED:
            raise ClipBridgeError(f"graph input {vi.name!r} has {count} elements (more than {MAX_GENERATED} are "
                                  "not generated): give its values in an .npz", "inputs")
        if dtype.kind == "f":
            flat = rng.standard_normal(count).astype(dtype)
            planted = np.array(list(SPECIALS) + boundary_values(clips, vi.name, dtype), dtype=np.float64)
            with np.errstate(over="ignore"):
                planted_t = planted.astype(dtype)
            n = min(count, planted_t.size)
            # Spread the planted values, so that a convolution window sees one at a time.
            where = np.linspace(0, count - 1, num=n, dtype=np.int64) if n else np.array([], np.int64)
            flat[where] = planted_t[:n]
        elif dtype.kind in "iu":
            info = np.iinfo(dtype)
            flat = rng.integers(max(info.min, -128), min(info.max, 127), count, endpoint=True).astype(dtype)
            flat[: min(count, 2)] = [info.min, info.max][: min(count, 2)]
        elif dtype.kind == "b":
            flat = rng.integers(0, 1, count, endpoint=True).astype(bool)
        else:
            raise ClipBridgeError(f"graph input {vi.name!r} has type {dtype}, which is not generated: give its "
                                  "values in an .npz", "inputs")
        feeds[vi.name] = flat.reshape(dims)
    return feeds


def read_npz(data: bytes, model: onnx.ModelProto) -> dict[str, np.ndarray]:
    """The .npz's arrays, checked against the graph inputs (names, dtypes, ranks); pickled objects refused."""
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
    except (ValueError, OSError, zipfile.BadZipFile, EOFError) as exc:
        raise ClipBridgeError(f"inputs is not a readable .npz without pickled objects: {str(exc)[:200]}",
                              "inputs") from None
    wanted = {vi.name: vi for vi in graph_inputs(model)}
    unknown = sorted(set(arrays) - set(wanted))
    if unknown:
        raise ClipBridgeError(f"inputs has {unknown[0][:60]!r}, which is not a graph input (inputs: "
                              f"{', '.join(sorted(wanted))[:200]})", "inputs")
    for name, vi in wanted.items():
        if name not in arrays:
            raise ClipBridgeError(f"inputs lacks graph input {name!r}", "inputs")
        dims, dtype = _shape_dtype(vi)
        a = arrays[name]
        if a.dtype != dtype:
            raise ClipBridgeError(f"inputs[{name!r}] is {a.dtype}, the graph input is {dtype}", "inputs")
        if a.ndim != len(dims):
            raise ClipBridgeError(f"inputs[{name!r}] has rank {a.ndim}, the graph input has rank {len(dims)}",
                                  "inputs")
    return arrays
