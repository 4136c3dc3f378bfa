"""Tensors on the wire: JSON (dtype, shape, flat C-order data) and .npy bytes (never unpickled)."""

from __future__ import annotations

import ast
import math
from typing import Any

import numpy as np

from app import exact
from app.dtypes import BFLOAT16, BY_NAME, DType
from app.errors import PayloadTooLarge, SpecError
from app.numbers import JSON_SAFE_INT, format_number, parse_number

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
        out = dt.array(values)  # each value rounded once from its exact value (app.exact)
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


def npy_header(buf: memoryview) -> tuple[np.dtype, tuple[int, ...], bool, int]:
    """(dtype, shape, fortran_order, data offset) of .npy bytes, without ever unpickling."""
    if len(buf) < 10 or bytes(buf[:6]) != NPY_MAGIC:
        raise SpecError("the body is not a .npy file (magic bytes missing)", "body")
    major = buf[6]
    if major == 1:
        hlen, start = int.from_bytes(buf[8:10], "little"), 10
    elif major in (2, 3):
        if len(buf) < 12:
            raise SpecError("truncated .npy header", "body")
        hlen, start = int.from_bytes(buf[8:12], "little"), 12
    else:
        raise SpecError(f".npy format version {major} is not supported", "body")
    if hlen > 65536 or start + hlen > len(buf):
        raise SpecError("truncated or oversized .npy header", "body")
    text = bytes(buf[start:start + hlen]).decode("latin1" if major < 3 else "utf8")
    try:
        header = ast.literal_eval(text)  # literals only: no code runs
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise SpecError(".npy header is not a Python literal dict", "body") from None
    if not isinstance(header, dict) or set(header) != {"descr", "fortran_order", "shape"}:
        raise SpecError(".npy header must have exactly descr, fortran_order and shape", "body")
    descr, fortran, shape = header["descr"], header["fortran_order"], header["shape"]
    if not isinstance(descr, str):
        raise SpecError(".npy arrays of structured or object dtype are refused (no pickles)", "body")
    try:
        dtype = np.dtype(descr)
    except TypeError:
        raise SpecError(f".npy dtype {descr[:20]!r} is unknown", "body") from None
    if dtype.hasobject:
        raise SpecError(".npy arrays of object dtype are refused (no pickles)", "body")
    if not isinstance(fortran, bool) or not isinstance(shape, tuple) or \
            not all(isinstance(d, int) and d >= 0 for d in shape):
        raise SpecError(".npy header has a bad shape or fortran_order", "body")
    return dtype, shape, fortran, start + hlen


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
