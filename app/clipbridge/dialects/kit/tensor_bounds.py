"""Per-element (tensor) bounds into dialects whose clip takes scalars: a uniform tensor is a scalar; otherwise
the dialect's own fallback (ONNX Max/Min) or `tensor-bounds` unsupported."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from clipbridge.dialects.kit.common import Emitted, Mode
from clipbridge.core.dtypes import DType
from clipbridge.core.errors import SpecError
from clipbridge.core.findings import Code, Finding, Severity
from clipbridge.core.meaning import Bound, Meaning, NanBound, TensorBound, evolve
from clipbridge.core.numbers import Number, format_number, same_value

EmitFn = Callable[[Meaning, Any, Mode, "list | None"], Emitted]


def uniform_value(t: TensorBound) -> Number | None:
    """The single value of a tensor bound whose elements are all equal (NaN equal to NaN); else None."""
    if not t.values:
        return None
    v = t.values[0]
    return v if all(same_value(v, w) for w in t.values[1:]) else None


def open_bound(dt: DType, side: str) -> Bound:
    """An absent side of a per-element clip: unbounded (+-inf, or the integer type's extreme)."""
    return Bound(dt.unbounded(side == "min"), None, (f"no {side}: unbounded",), default=True)


def as_scalar(src: Meaning) -> tuple[Meaning | None, list[Finding]]:
    """A meaning whose tensor bounds each hold one value (every element equal) is that scalar clip."""
    sides: dict[str, Bound] = {}
    notes: list[Finding] = []
    for side, t, b in (("min", src.lower_tensor, src.lower), ("max", src.upper_tensor, src.upper)):
        if t is None:
            sides[side] = b if b is not None else open_bound(src.out_dtype, side)
            continue
        v = uniform_value(t)
        if v is None:
            return None, []
        given = t.given[0] if t.given else v
        sides[side] = Bound(v, given, t.steps)
        notes.append(Finding(Code.TENSOR_BOUNDS, Severity.INFO, f"Every element of the {side} tensor "
                             f"{list(t.shape)} is {format_number(v)}: emitted as a scalar {side}"))
    m = evolve(src, lower=sides["min"], upper=sides["max"], lower_tensor=None, upper_tensor=None)
    return m, notes


def unsupported(src: Meaning, what: str) -> Emitted:
    """A target whose clip takes scalar bounds only, given distinct per-element ones."""
    shapes = [list(t.shape) for t in (src.lower_tensor, src.upper_tensor) if t is not None]
    return Emitted(None, None, [Finding(
        Code.TENSOR_BOUNDS, Severity.ERROR, f"{what} takes scalar bounds only; the source clips each position to "
        f"its own bound (tensor bounds of shape {', '.join(str(s) for s in shapes)})",
        "per-element bounds", "scalar bounds only")], unsupported=True)


def with_tensor_bounds(emit: EmitFn, fallback: EmitFn | None, what: str) -> EmitFn:
    """`emit` for scalar meanings; a tensor-bound meaning as a scalar when uniform, else `fallback` (or refused)."""
    def wrapped(src: Meaning, target: Any, mode: Mode, shape: list | None) -> Emitted:
        if not src.has_tensor_bounds:
            return emit(src, target, mode, shape)
        scalar, notes = as_scalar(src)
        if scalar is not None:
            e = emit(scalar, target, mode, shape)
            return evolve(e, notes=notes + list(e.notes))
        if fallback is not None:
            return fallback(src, target, mode, shape)
        return unsupported(src, what)
    wrapped.__doc__ = emit.__doc__
    return wrapped


def check_bounds_fit(m: Meaning, shape: tuple[int, ...], loc: str = "input.shape") -> None:
    """Per-element bounds broadcast to the input (NumPy rules, as PyTorch's): the output keeps the input's shape."""
    for side, t in (("min", m.lower_tensor), ("max", m.upper_tensor)):
        if t is None:
            continue
        try:
            fits = tuple(np.broadcast_shapes(t.shape, shape)) == tuple(shape)
        except ValueError:
            fits = False
        if not fits:
            raise SpecError(f"The {side} bound has shape {list(t.shape)}, which does not broadcast to the input's "
                            f"shape. Got: {list(shape)}", loc)


def bound_array(src: Meaning, side: str, notes: Any, ops: str) -> np.ndarray | None:
    """One side's values as an array of the dtype for element-wise max/min ops (None: open, no op needed);
    NaN elements the source ignores are written unbounded, since `ops` propagate NaN."""
    dt = src.out_dtype
    t, b = (src.lower_tensor, src.lower) if side == "min" else (src.upper_tensor, src.upper)
    if t is None and b is None:
        return None
    arr = t.array(dt) if t is not None else np.asarray(dt.array([b.value])[0],  # type: ignore[union-attr]
                                                        dtype=dt.np_dtype)
    if src.nan_bound is NanBound.IGNORE and dt.is_float and np.isnan(arr.astype(np.float64)).any():
        fill = open_bound(dt, side).value
        arr = np.where(np.isnan(arr.astype(np.float64)), np.asarray(fill, dt.np_dtype), arr).astype(dt.np_dtype)
        notes.add(Code.NAN_BOUND, Severity.INFO, f"The source ignores NaN {side} elements; {ops} propagate NaN: "
                  "wrote them unbounded")
    return arr


def tensor_of(arr: np.ndarray | None, dt: DType) -> TensorBound | None:
    """A written bound array as the TensorBound it computes (None: rank 0 or open)."""
    if arr is None or arr.ndim == 0:
        return None
    return TensorBound(tuple(arr.shape), tuple(dt.to_python(v) for v in arr.reshape(-1)))


def scalar_of(src: Meaning, side: str, arr: np.ndarray | None) -> Bound | None:
    """A rank-0 side: the source's Bound when the value written is exactly it (None: a tensor or open side)."""
    if arr is None or arr.ndim:
        return None
    b = src.lower if side == "min" else src.upper
    v = src.out_dtype.to_python(arr[()])
    return b if b is not None and same_value(b.value, v) else Bound(v, v)
