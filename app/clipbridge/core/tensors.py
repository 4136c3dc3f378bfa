"""Tensors on the wire: JSON (dtype, shape, flat C-order data) and .npy bytes (never unpickled)."""

from __future__ import annotations

import io
import math
import tokenize
import warnings
from typing import Any

import numpy as np

from clipbridge.core import exact
from clipbridge.core.dtypes import BFLOAT16, BY_NAME, DType
from clipbridge.core.errors import ClipBridgeError, PayloadTooLarge, SpecError
from clipbridge.core.json_depth import MAX_JSON_DEPTH, too_deep
from clipbridge.core.numbers import JSON_SAFE_INT, format_number, parse_number

NPY_MAGIC = b"\x93NUMPY"


def parse_json_tensor(dtype: str, shape: list[int], data: list[Any], max_elements: int,
                      loc: str = "input") -> tuple[DType, np.ndarray]:
    """A JSON tensor as an exact array: integers must be values of the dtype; floats round to it (nearest)."""
    if dtype not in BY_NAME:
        raise SpecError(f"Unknown dtype {dtype!r}. Known: {', '.join(BY_NAME)}", f"{loc}.dtype")
    dt = BY_NAME[dtype]
    count = 1
    for i, d in enumerate(shape):
        if d < 0:
            raise SpecError(f"shape[{i}] = {d} is negative", f"{loc}.shape[{i}]")
        count *= d
        if count > max_elements:
            raise PayloadTooLarge(f"the tensor has more than {max_elements} elements; JSON tensors are limited to "
                                  f"{max_elements} (CLIPBRIDGE_MAX_JSON_ELEMENTS): send .npy to /v1/execute.npy",
                                  f"{loc}.shape")
    if len(data) != count:
        raise SpecError(f"data has {len(data)} values; shape {shape} needs {count}", f"{loc}.data")
    values: list[Any] = list(data)
    for i, v in enumerate(values):
        kind = type(v)
        if kind is int or kind is float:
            continue
        if kind is str or kind is bool:
            values[i] = parse_number(v, f"{loc}.data[{i}]")  # bools are refused there, with the reason
        else:  # null, objects, nested lists: never coerced (None would silently become NaN)
            raise SpecError(f"data[{i}] is {'null' if v is None else kind.__name__}: expected a number or a "
                            "numeric string; data is a flat C-order list", f"{loc}.data[{i}]")
    if dt.is_float:
        out = dt.array(values)  # each value rounded once from its exact value (clipbridge.core.exact)
    else:
        for i, v in enumerate(values):
            if type(v) is not int:
                if not exact.is_integral(v):
                    raise SpecError(f"{format_number(v)} is not a value of {dt.name}", f"{loc}.data[{i}]")
                values[i] = int(v)
        lo, hi = dt.lowest(), dt.highest()
        bad = next((i for i, v in enumerate(values) if not lo <= v <= hi), None)  # type: ignore[operator]
        if bad is not None:
            raise SpecError(f"{values[bad]} is outside {dt.name} [{lo}, {hi}]", f"{loc}.data[{bad}]")
        out = np.asarray(values, dtype=dt.np_dtype)
    return dt, out.reshape(shape)


def json_values(arr: np.ndarray, dt: DType) -> list[Any]:
    """Flat C-order values as wire numbers: strings for non-finite floats and integers beyond 2^53."""
    flat = np.ascontiguousarray(arr).reshape(-1)
    if dt.is_float:
        vals = flat.astype(np.float64).tolist()
        finite = np.isfinite(flat.astype(np.float64))
        if not finite.all():
            for i in np.flatnonzero(~finite):
                v = vals[i]
                vals[i] = "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
        return vals
    vals = flat.tolist()
    if dt.bits == 64:
        return [v if abs(v) <= JSON_SAFE_INT else str(v) for v in vals]
    return vals


MAX_NPY_HEADER = 65536  # bytes of header text; NumPy's own default is 10000, files it writes stay far below


def _numpy_header_reader():
    """NumPy's maintained header reader for every format version (1.0, 2.0, 3.0); private, so found by name."""
    from numpy.lib import format as npf
    found = getattr(npf, "_read_array_header", None)
    if found is None:
        from numpy.lib import _format_impl
        found = _format_impl._read_array_header
    return found


def npy_header(buf: memoryview) -> tuple[np.dtype, tuple[int, ...], bool, int]:
    """(dtype, shape, fortran_order, data offset) of .npy bytes, read by numpy.lib.format; never unpickled."""
    from numpy.lib import format as npf
    if len(buf) < 8 or bytes(buf[:6]) != NPY_MAGIC:
        raise SpecError("the body is not a .npy file (magic bytes missing)", "body")
    head = io.BytesIO(bytes(buf[:12 + MAX_NPY_HEADER]))  # only the header is copied, never the data
    major, minor = head.read(8)[6:8]
    if (major, minor) not in ((1, 0), (2, 0), (3, 0)):
        raise SpecError(f".npy format version {major}.{minor} is not supported (1.0, 2.0 and 3.0 are)", "body")
    _check_header_depth(buf, major)
    head.seek(0)
    npf.read_magic(head)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # NumPy's note about Python 2 headers: the header still parses
            shape, fortran, dtype = _numpy_header_reader()(head, (major, minor), max_header_size=MAX_NPY_HEADER)
    except UnicodeDecodeError as exc:
        raise SpecError(f".npy {major}.0 header is not valid "
                        f"{'UTF-8' if major == 3 else 'latin-1'}: {exc.reason}", "body") from None
    # NumPy's retry for Python 2 headers tokenizes the text, which raises TokenError on an unclosed '{'.
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError, tokenize.TokenError) as exc:
        raise SpecError(f".npy header refused: {str(exc)[:200]}", "body") from None
    return _checked_header(dtype, shape, fortran) + (head.tell(),)


def _check_header_depth(buf: memoryview, major: int) -> None:
    """The header is a Python literal that NumPy hands to ast.literal_eval: held to the JSON depth bound first."""
    width = 2 if major == 1 else 4
    size = int.from_bytes(bytes(buf[8:8 + width]), "little")
    text = bytes(buf[8 + width:8 + width + min(size, MAX_NPY_HEADER)])
    if too_deep(text, python=True):
        raise ClipBridgeError(f".npy header is nested deeper than {MAX_JSON_DEPTH} levels", "body")


def _checked_header(dtype: np.dtype, shape: object, fortran: object) -> tuple[np.dtype, tuple[int, ...], bool]:
    """What NumPy's reader returns, held to what a clip input can be: plain dtypes, a tuple of sizes."""
    if dtype.hasobject:
        raise SpecError(".npy arrays of object dtype are refused (no pickles)", "body")
    if dtype.names is not None or dtype.subdtype is not None:
        raise SpecError(".npy arrays of structured or subarray dtype are refused", "body")
    if not isinstance(shape, tuple):
        raise SpecError(".npy header 'shape' is not a tuple", "body")
    for i, d in enumerate(shape):
        if type(d) is not int or d < 0:  # bool is an int to isinstance; True is not a size
            raise SpecError(f".npy header shape[{i}] = {d!r} is not a non-negative integer", "body")
    if type(fortran) is not bool:
        raise SpecError(".npy header 'fortran_order' is not a bool", "body")
    return dtype, shape, fortran


def npy_array(buf: bytearray, expect: DType, max_elements: int) -> tuple[np.ndarray, int]:
    """A writable array viewing `buf` (no copy) and the header length; dtype, size and order are checked."""
    view = memoryview(buf)
    dtype, shape, fortran, offset = npy_header(view)
    if dtype.byteorder == ">" or (dtype.byteorder == "=" and not np.little_endian):
        raise SpecError(".npy data must be little-endian", "body")
    if expect is BFLOAT16 and dtype == np.dtype("V2"):
        dtype = expect.np_dtype  # ml_dtypes' bfloat16 is saved as raw 2-byte voids
    if dtype != expect.np_dtype:
        raise SpecError(f".npy dtype {dtype} does not match the spec's {expect.name}", "body")
    count = 1
    for d in shape:
        count *= d
    if count > max_elements:
        raise PayloadTooLarge(f".npy tensor has {count} elements; the limit is {max_elements}", "body")
    need = count * dtype.itemsize
    if len(buf) - offset != need:
        raise SpecError(f".npy data is {len(buf) - offset} bytes; shape {list(shape)} of {expect.name} needs "
                        f"{need}", "body")
    arr = np.frombuffer(buf, dtype=dtype, count=count, offset=offset)
    return arr.reshape(shape, order="F" if fortran else "C"), offset
