"""Witnesses: the inputs where two clip functions can first differ, and the inputs where they do.

Both meanings are clip functions (monotone, piecewise constant or identity with breakpoints at their bounds), so
evaluating them at every bound, its neighbours by one ulp/unit, the dtype's extremes, zeros, infinities, NaN and
subnormals visits every piece of both (app/clipbridge/core/drift.py's module docstring); a witness is one such input with
both outputs, each in its own dtype.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from clipbridge.core import critical, exact
from clipbridge.core.dtypes import DType
from clipbridge.core.findings import Witness
from clipbridge.core.meaning import Meaning, same_outputs
from clipbridge.core.numbers import Number


def critical_points(dt: DType, meanings: Iterable[Meaning]) -> np.ndarray:
    """The inputs where two clip functions of `dt` can first differ (see the module docstring), in a fixed
    order: the dtype's points, then each meaning's bounds and ScaleBias pre-images with their neighbours."""
    parts = [critical.fixed_points(dt)]
    for m in meanings:
        for b in (m.lower, m.upper):
            if b is None or b.is_nan or (not dt.is_float and exact.is_inf(b.value)):
                continue  # an infinite bound of a promoting meaning has no integer neighbours
            parts.append(critical.bound_points(dt, b.value))
            if m.scale_bias is not None and m.scale_bias.scale != 0 and math.isfinite(float(b.value)):
                pre = (float(b.value) - m.scale_bias.bias) / m.scale_bias.scale
                if math.isfinite(pre):
                    parts.append(critical.bound_points(dt, pre if dt.is_float else dt.saturate(int(pre)), 3))
    return critical.unique_in_order(dt, parts)


def witnesses(src: Meaning, tgt: Meaning, pts: np.ndarray, ys: np.ndarray, yt: np.ndarray) -> list[Witness]:
    """The witnesses among the points, from both meanings' outputs there (in the points' order)."""
    bad = ~same_outputs(ys, yt)
    # Each output in its own dtype: a promoting source (PyTorch int32 -> float32) keeps its fractions.
    dt, ds, dtt = src.dtype, src.out_dtype, tgt.out_dtype
    return [Witness(dt.to_python(pts[i]), ds.to_python(ys[i]), dtt.to_python(yt[i])) for i in np.flatnonzero(bad)]


def closest(ws: list[Witness], anchor: Number) -> Witness | None:
    """The witness with a non-NaN input nearest `anchor` (exactly: ints and doubles), or None."""
    finite = [w for w in ws if not (isinstance(w.input, float) and math.isnan(w.input))]
    if not finite:
        return None
    return min(finite, key=lambda w: exact.distance(w.input, anchor))
