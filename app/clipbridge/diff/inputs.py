"""The inputs a diff runs on: the user's .npz, or values generated to reach every clip's boundaries."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import onnx
from onnx import helper

from clipbridge.diff import ordinary, shapes
from clipbridge.scan.patterns import ClipLike
from clipbridge.core.errors import ClipBridgeError

SEED = 20240  # the generator's fixed seed; reported in every response
DYNAMIC_DIM = 1  # a symbolic or unknown dimension is generated with this size
MAX_GENERATED = 1 << 24  # elements per generated input (a larger declared shape is refused: give an .npz)
MAX_INPUT_BYTES = 64 * 2**20  # an .npz's arrays together, as declared in their headers (checked before reading)
NPY_HEADER_MAX = 1 << 16  # bytes of one .npy header (numpy's own default limit is 10000)
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


def generate(model: onnx.ModelProto, clips: list[ClipLike], seed: int = SEED,
             sample: str = "ordinary", given: shapes.Shapes = ()) -> dict[str, np.ndarray]:
    """One array per graph input, seeded: an ordinary sample (issue 44: what a model sees in use), or the edge
    probe's (normal values with the specials, boundary values and integer extremes planted first)."""
    rng = np.random.default_rng(seed)
    feeds: dict[str, np.ndarray] = {}
    rows = ordinary.index_rows(model)
    sizes = dict(given)
    for vi in graph_inputs(model):
        dims, dtype = _shape_dtype(vi)
        dims = shapes.resolve(vi, sizes.get(vi.name), DYNAMIC_DIM)
        count = int(np.prod(dims)) if dims else 1
        if count > MAX_GENERATED:
            raise ClipBridgeError(f"graph input {vi.name!r} has {count} elements (more than {MAX_GENERATED} are "
                                  "not generated): give its values in an .npz", "inputs")
        if dtype.kind not in "fiub":
            raise ClipBridgeError(f"graph input {vi.name!r} has type {dtype}, which is not generated: give its "
                                  "values in an .npz", "inputs")
        if sample == "ordinary":
            flat = ordinary.values(rng, count, dtype, rows.get(vi.name))
        else:
            flat = _edge(rng, count, dtype, boundary_values(clips, vi.name, dtype), rows.get(vi.name))
        feeds[vi.name] = flat.reshape(dims)
    return feeds


def _edge(rng: np.random.Generator, count: int, dtype: np.dtype, bounds: list[float],
          rows: int | None = None) -> np.ndarray:
    """The edge probe: standard normal floats with NaN, the infinities, beyond float16, float32's extremes, both
    zeros and the clips' bounds planted at evenly spread positions; integers with the type's extremes, except
    the indices of a Gather's table: its own extremes (-rows, rows - 1; an index out of range is an error on
    every engine, not a difference)."""
    if dtype.kind in "iu" and rows is not None:
        flat = rng.integers(0, rows, count).astype(dtype)
        ends = [v for v in (-rows, rows - 1) if np.iinfo(dtype).min <= v]
        flat[: min(count, len(ends))] = ends[: min(count, len(ends))]
        return flat
    if dtype.kind == "f":
        flat = rng.standard_normal(count).astype(dtype)
        planted = np.array(list(SPECIALS) + bounds, dtype=np.float64)
        with np.errstate(over="ignore"):
            planted_t = planted.astype(dtype)
        n = min(count, planted_t.size)
        # Spread the planted values, so that a convolution window sees one at a time.
        where = np.linspace(0, count - 1, num=n, dtype=np.int64) if n else np.array([], np.int64)
        flat[where] = planted_t[:n]
        return flat
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        flat = rng.integers(max(info.min, -128), min(info.max, 127), count, endpoint=True).astype(dtype)
        flat[: min(count, 2)] = [info.min, info.max][: min(count, 2)]
        return flat
    return rng.integers(0, 1, count, endpoint=True).astype(bool)


def _declared(vi: onnx.ValueInfoProto) -> list[int | None]:
    """A graph input's dims as declared: a number where fixed, None where symbolic or unknown."""
    return [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else None
            for d in vi.type.tensor_type.shape.dim]


def _headers(data: bytes) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """Each member's (shape, dtype) from its .npy header alone: nothing past the headers is decompressed."""
    out: dict[str, tuple[tuple[int, ...], np.dtype]] = {}
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        for info in zf.infolist():
            if not info.filename.endswith(".npy"):
                raise ClipBridgeError(f"inputs holds {info.filename[:60]!r}, which is not an .npy array", "inputs")
            if info.file_size > MAX_INPUT_BYTES + NPY_HEADER_MAX:
                raise ClipBridgeError(f"inputs[{info.filename[:-4][:60]!r}] declares {info.file_size} bytes "
                                      f"(limit {MAX_INPUT_BYTES})", "inputs")
            with zf.open(info) as f:
                version = np.lib.format.read_magic(f)
                if version == (1, 0):
                    shape, _fortran, dtype = np.lib.format.read_array_header_1_0(f, max_header_size=NPY_HEADER_MAX)
                elif version == (2, 0):
                    shape, _fortran, dtype = np.lib.format.read_array_header_2_0(f, max_header_size=NPY_HEADER_MAX)
                else:
                    raise ValueError(f"unsupported .npy version {version}")
            out[info.filename[:-4]] = (tuple(int(d) for d in shape), np.dtype(dtype))
    return out


def _check_declared(name: str, vi: onnx.ValueInfoProto, shape: tuple[int, ...], dtype: np.dtype) -> int:
    """The array's bytes, once its dtype, rank and fixed dims match the graph input `vi`."""
    if dtype.hasobject:
        raise ClipBridgeError(f"inputs[{name!r}] holds pickled objects, which are never read", "inputs")
    want_dims, want = _declared(vi), _shape_dtype(vi)[1]
    if dtype != want:
        raise ClipBridgeError(f"inputs[{name!r}] is {dtype}, the graph input is {want}", "inputs")
    if len(shape) != len(want_dims):
        raise ClipBridgeError(f"inputs[{name!r}] has rank {len(shape)}, the graph input has rank {len(want_dims)}",
                              "inputs")
    for k, (got, fixed) in enumerate(zip(shape, want_dims)):
        if fixed is not None and got != fixed:
            raise ClipBridgeError(f"inputs[{name!r}] has dimension {k} = {got}, the graph input declares {fixed}",
                                  "inputs")
    return int(np.prod(shape, dtype=np.float64)) * dtype.itemsize


def read_npz(data: bytes, model: onnx.ModelProto) -> dict[str, np.ndarray]:
    """The .npz's arrays, checked against the graph inputs (names, dtypes, ranks, fixed dims) and against
    MAX_INPUT_BYTES from their headers, before any array is decompressed; pickled objects refused."""
    try:
        headers = _headers(data)
    except (ValueError, OSError, zipfile.BadZipFile, EOFError, RuntimeError, NotImplementedError) as exc:
        raise ClipBridgeError(f"inputs is not a readable .npz without pickled objects: {str(exc)[:200]}",
                              "inputs") from None
    wanted = {vi.name: vi for vi in graph_inputs(model)}
    unknown = sorted(set(headers) - set(wanted))
    if unknown:
        raise ClipBridgeError(f"inputs has {unknown[0][:60]!r}, which is not a graph input (inputs: "
                              f"{', '.join(sorted(wanted))[:200]})", "inputs")
    total = 0
    for name, vi in wanted.items():
        if name not in headers:
            raise ClipBridgeError(f"inputs lacks graph input {name!r}", "inputs")
        total += _check_declared(name, vi, *headers[name])
    if total > MAX_INPUT_BYTES:
        raise ClipBridgeError(f"inputs hold {total} bytes (limit {MAX_INPUT_BYTES})", "inputs")
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            return {k: npz[k] for k in npz.files}
    except (ValueError, OSError, zipfile.BadZipFile, EOFError, RuntimeError) as exc:
        raise ClipBridgeError(f"inputs is not a readable .npz without pickled objects: {str(exc)[:200]}",
                              "inputs") from None
