"""Meaning -> a StableHLO clamp: the compact spec, its findings and (lazily) the MLIR text."""

from __future__ import annotations

import math

import numpy as np

from clipbridge.core import exact
from clipbridge.core.drift import check_tensor_bound_size
from clipbridge.core.dtypes import DType
from clipbridge.core.findings import Code, Finding, Notes, Severity
from clipbridge.core.meaning import Bound, Meaning, NanBound, Order
from clipbridge.core.numbers import Number, format_number
from clipbridge.dialects.kit.common import (Emitted, LazyArtifacts, Mode, TypeWords, default_made_explicit,
                                     literal_integer_cast)
from clipbridge.dialects.kit.crossed import collapse_crossed
from clipbridge.dialects.stablehlo.meaning import normalize, resolve, version_stablehlo
from clipbridge.dialects.stablehlo.mlir import mlir_text
from clipbridge.dialects.stablehlo.spec import NAME_OF, VERSIONS, StableHloSpec, StableHloTarget


def _literal(bound: Bound, dt: DType, side: str, notes: Notes) -> Number:
    """Literal mode: the source's number as written; a missing bound (no default in StableHLO) made explicit."""
    name = NAME_OF[dt.name]
    if default_made_explicit(bound, side, "StableHLO clamp", notes):
        return bound.value
    given = bound.given
    if dt.is_float:
        return given  # resolve() rounds it once to the element type
    return literal_integer_cast(given, dt, side, notes, TypeWords(f"a {name} constant", name, f"a {name}", name))


def _preserve(src: Meaning, notes: Notes) -> list[Number]:
    """Preserve mode: the source's effective bounds (already values of the type), its NaN and order rules kept."""
    assert src.lower is not None and src.upper is not None
    values: list[Number] = [src.lower.value, src.upper.value]
    if src.nan_bound is NanBound.IGNORE:
        # StableHLO propagates a NaN bound; an ignored one is an open side: +-inf computes that.
        for i, side in enumerate(("min", "max")):
            if exact.is_nan(values[i]):
                values[i] = -math.inf if i == 0 else math.inf
                notes.add(Code.NAN_BOUND, Severity.INFO, f"The source ignores a NaN {side}; StableHLO would "
                          f"propagate it: wrote {format_number(values[i])}")
    return collapse_crossed(src, values, notes, Order.MAX_WINS, "The source gives min when min > max; StableHLO "
                            "gives max: emitted min = max = min")


def emit(src: Meaning, target: StableHloTarget, mode: Mode, shape: list | None) -> Emitted:
    """A StableHLO clamp (compact spec and MLIR text) computing `src`."""
    version_stablehlo(target.version or VERSIONS[-1])
    dt = src.dtype
    if src.scale_bias is not None:
        return Emitted(None, None, [Finding(
            Code.SCALE_BIAS, Severity.ERROR, "ScaleBias is not expressed in the StableHLO artifact (a multiply and "
            "add before clamp would be needed)", "x*Scale+Bias before clipping", "not expressible")],
            unsupported=True)
    notes = Notes()
    if src.has_tensor_bounds:
        return _emit_tensor(src, shape, notes)
    if mode is Mode.LITERAL:
        assert src.lower is not None and src.upper is not None
        values = [_literal(src.lower, dt, "min", notes), _literal(src.upper, dt, "max", notes)]
    else:
        values = _preserve(src, notes)
    spec = StableHloSpec(dialect="stablehlo", element_type=NAME_OF[dt.name], shape=shape, min=values[0],
                         max=values[1])
    meaning = resolve(spec)
    return Emitted(normalize(spec), meaning, notes.items,
                   LazyArtifacts(lambda: {"stablehlo_mlir": mlir_text(spec, meaning)}))


def _open_value(dt: DType, side: str) -> Number:
    return dt.unbounded(side == "min")


def _side_array(src: Meaning, side: str) -> np.ndarray:
    """One side of `src` as an object array of exact values (a scalar side is rank 0; an open side unbounded)."""
    t, b = (src.lower_tensor, src.lower) if side == "min" else (src.upper_tensor, src.upper)
    if t is not None:
        return np.array(t.values, dtype=object).reshape(t.shape)
    return np.array(_open_value(src.dtype, side) if b is None else b.value, dtype=object)


def _emit_tensor(src: Meaning, shape: list | None, notes: Notes) -> Emitted:
    """Per-element bounds as dense constants of the operand's shape (C1/C2), the source's NaN and order rules kept."""
    dt = src.out_dtype
    lo, hi = _side_array(src, "min"), _side_array(src, "max")
    static = shape is not None and all(isinstance(d, int) for d in shape)
    try:
        want = tuple(shape) if static else np.broadcast_shapes(lo.shape, hi.shape)  # type: ignore[arg-type]
        # A rank-0 side stays rank 0 (C1/C2 allow it); a tensor side takes the operand's shape.
        lo, hi = (np.broadcast_to(a, want).copy() if a.ndim else a.copy() for a in (lo, hi))
    except ValueError:
        return Emitted(None, None, [Finding(
            Code.TENSOR_BOUNDS, Severity.ERROR, f"The source's per-element bounds do not broadcast to the operand's "
            f"shape {shape}; StableHLO needs min/max of exactly that shape (C1/C2)")], unsupported=True)
    check_tensor_bound_size(max(lo.size, hi.size), "min")
    if src.nan_bound is NanBound.IGNORE:
        for arr, side in ((lo, "min"), (hi, "max")):
            for i, v in enumerate(arr.flat):
                if exact.is_nan(v):
                    arr.flat[i] = _open_value(dt, side)
                    notes.add(Code.NAN_BOUND, Severity.INFO, f"The source ignores NaN {side} elements; StableHLO "
                              "would propagate them: wrote them unbounded")
    if src.order is not Order.MAX_WINS:
        for i, (a, b) in enumerate(zip(lo.flat, hi.flat)):
            hi.flat[i] = collapse_crossed(src, [a, b], notes, Order.MAX_WINS, "The source gives min where min > "
                                          "max; StableHLO gives max: wrote max = min at those elements")[1]
    if any(t is not None and a.shape != t.shape for a, t in ((lo, src.lower_tensor), (hi, src.upper_tensor))):
        notes.add(Code.TENSOR_BOUNDS, Severity.INFO, f"StableHLO min/max are rank 0 or the operand's shape: "
                  f"wrote the tensor bounds as {list(want)} constants")
    notes.items = list({(f.code, f.message): f for f in notes.items}.values())
    spec = StableHloSpec(dialect="stablehlo", element_type=NAME_OF[dt.name], shape=list(want) if not static
                         else shape, min=lo.tolist() if lo.ndim else lo[()], max=hi.tolist() if hi.ndim else hi[()])
    meaning = resolve(spec)
    return Emitted(normalize(spec), meaning, notes.items,
                   LazyArtifacts(lambda: {"stablehlo_mlir": mlir_text(spec, meaning)}))
