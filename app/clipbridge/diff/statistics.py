"""Error statistics per final output over every sample (issue 44, item 3), each engine against the first.

- `samples_differing`, `elements_differing`: at the output's tolerance (clipbridge.diff.tolerance);
- `max_abs`, `max_rel` (|a - b| / max(|a|, |b|), over elements where both are finite and one is nonzero);
- `max_ulp` (float types): the largest distance in units in the last place, over elements both finite;
- `cosine`: the cosine similarity of the two outputs as vectors (finite elements; 1.0 when both are zero);
- `sqnr_db`: 10 log10(sum a^2 / sum (a - b)^2) with a the first engine's (inf when they are equal);
- with a class axis (`--classes AXIS`): `top1` the share of rows whose arg max agrees, `top5` the share of
  rows whose first engine's top class is among the other engine's five largest.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

INTS = {2: np.int16, 4: np.int32, 8: np.int64}


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """|a - b| in units in the last place of their float type: the floats' bits as ordered integers."""
    t = INTS[a.dtype.itemsize]
    ia, ib = (np.asarray(x).view(t).astype(np.int64) for x in (a, b))
    lo = np.iinfo(t).min
    ia, ib = (np.where(i < 0, lo - i, i) for i in (ia, ib))  # negative floats: reversed order below zero
    return np.abs(ia - ib)


def _finite(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.isfinite(a) & np.isfinite(b)


def pair(a: list[np.ndarray], b: list[np.ndarray], masks: list[np.ndarray], classes: int | None) -> dict[str, Any]:
    """The statistics of one output over every sample: a (the first engine's) against b, with each sample's mask
    of differing elements."""
    out: dict[str, Any] = {"samples_differing": sum(bool(m.any()) for m in masks),
                           "elements_differing": int(sum(int(m.sum()) for m in masks))}
    if a[0].dtype.kind != "f":
        return out
    x = np.concatenate([v.reshape(-1) for v in a]).astype(np.float64)
    y = np.concatenate([v.reshape(-1) for v in b]).astype(np.float64)
    f = _finite(x, y)
    d = np.abs(x[f] - y[f])
    big = np.maximum(np.abs(x[f]), np.abs(y[f]))
    out["max_abs"] = float(d.max()) if d.size else 0.0
    out["max_rel"] = float((d[big > 0] / big[big > 0]).max()) if (big > 0).any() else 0.0
    fa = np.concatenate([v.reshape(-1) for v in a])
    fb = np.concatenate([v.reshape(-1) for v in b])
    ff = _finite(fa, fb)
    out["max_ulp"] = int(ulp_distance(fa[ff], fb[ff]).max()) if ff.any() and fa.dtype == fb.dtype else None
    norm = float(np.linalg.norm(x[f]) * np.linalg.norm(y[f]))
    out["cosine"] = float(np.dot(x[f], y[f]) / norm) if norm > 0 else (1.0 if not d.any() else 0.0)
    noise = float(np.sum((x[f] - y[f]) ** 2))
    signal = float(np.sum(x[f] ** 2))
    out["sqnr_db"] = "inf" if noise == 0 else (10 * math.log10(signal / noise) if signal > 0 else "-inf")
    if classes is not None:
        out.update(top_k(a, b, classes))
    return out


def top_k(a: list[np.ndarray], b: list[np.ndarray], axis: int) -> dict[str, Any]:
    """Top-1 and top-5 agreement along the class axis, over every row of every sample."""
    ra = np.concatenate([np.moveaxis(v, axis, -1).reshape(-1, v.shape[axis]) for v in a])
    rb = np.concatenate([np.moveaxis(v, axis, -1).reshape(-1, v.shape[axis]) for v in b])
    first = np.argmax(ra, axis=1)
    k = min(5, rb.shape[1])
    five = np.argsort(-rb, axis=1, kind="stable")[:, :k]
    return {"top1": float(np.mean(first == np.argmax(rb, axis=1))),
            "top5": float(np.mean((five == first[:, None]).any(axis=1))), "classes_axis": axis}
