"""Accumulation order in Conv, MatMul, Gemm and ReduceSum (issue 45 item 2): each engine sums an output
element's products in an order of its own (blocking, SIMD lanes, FMA), so two engines' sums differ by rounding.

The bound is the standard one for a floating-point inner product, computed in any order (Higham, *Accuracy and
Stability of Numerical Algorithms*, 2nd ed., 2002, §3.1, eq. (3.5)): |fl(a.b) - a.b| <= gamma_n * sum |a_i b_i|,
gamma_n = n u / (1 - n u), with n the number of terms (the reduction length, +1 for a bias) and u the unit
roundoff of the tensor's type (2^-24 for float32). The rule recomputes each output element in float64 from each
engine's own captured inputs and names `accumulation-order` only where every engine's output lies within that
bound of its exact sum; the two engines then differ by at most twice the bound, which the detail reports.
"""

from __future__ import annotations

import math

import numpy as np

from clipbridge import behaviour
from clipbridge.diff.sites import Site, reduced, taps

OPS = ("Conv", "MatMul", "Gemm", "ReduceSum")
UNIT_ROUNDOFF = {"float64": 2.0 ** -53, "float32": 2.0 ** -24, "float16": 2.0 ** -11, "bfloat16": 2.0 ** -8}


def gamma(n: int, dtype: str) -> float:
    """Higham's gamma_n = n u / (1 - n u) for the type's unit roundoff (inf where n u >= 1: no bound)."""
    nu = n * UNIT_ROUNDOFF[dtype]
    return nu / (1 - nu) if nu < 1 else math.inf


def _matmul(ins: list[np.ndarray | None], idx: tuple[int, ...], shape: tuple[int, ...]) -> np.ndarray:
    a, b = ins[0], ins[1]
    if a is None or b is None or a.ndim < 2 or b.ndim < 2:
        raise ValueError("a MatMul of a vector is not read")
    batch = shape[:-2]
    row = np.broadcast_to(a, batch + a.shape[-2:])[idx[:-2]][idx[-2], :]
    col = np.broadcast_to(b, batch + b.shape[-2:])[idx[:-2]][:, idx[-1]]
    return row.astype(np.float64) * col.astype(np.float64)


def _gemm(site: Site, ins: list[np.ndarray | None], idx: tuple[int, ...],
          shape: tuple[int, ...]) -> np.ndarray:
    a, b = ins[0], ins[1]
    a = a.T if site.attrs.get("transA") else a
    b = b.T if site.attrs.get("transB") else b
    terms = float(site.attrs.get("alpha", 1.0)) * a[idx[0], :].astype(np.float64) * b[:, idx[1]]
    c = ins[2] if len(ins) > 2 else None
    if c is not None:
        terms = np.append(terms, float(site.attrs.get("beta", 1.0)) * float(np.broadcast_to(c, shape)[idx]))
    return terms


def _conv(site: Site, ins: list[np.ndarray | None], idx: tuple[int, ...]) -> np.ndarray:
    x, w = ins[0], ins[1]
    group = int(site.attrs.get("group", 1))
    per = w.shape[0] // group  # output channels per group
    cg = w.shape[1]
    g = idx[1] // per
    per_axis = taps(site, idx, list(w.shape[2:]), x.shape[2:])
    xs = x[np.ix_([idx[0]], range(g * cg, (g + 1) * cg), *[[p for p, _ in t] for t in per_axis])][0]
    ws = w[np.ix_([idx[1]], range(cg), *[[k for _, k in t] for t in per_axis])][0]
    terms = (xs.astype(np.float64) * ws).reshape(-1)
    bias = ins[2] if len(ins) > 2 else None
    return terms if bias is None else np.append(terms, float(bias[idx[1]]))


def terms(site: Site, engine: str, idx: tuple[int, ...]) -> np.ndarray:
    """The float64 terms one output element sums, from `engine`'s captured inputs."""
    ins = site.inputs[engine]
    shape = site.outs[engine].shape
    if site.op == "MatMul":
        return _matmul(ins, idx, shape)
    if site.op == "Gemm":
        return _gemm(site, ins, idx, shape)
    if site.op == "Conv":
        return _conv(site, ins, idx)
    return reduced(site, idx, engine).astype(np.float64)


@behaviour.states("accumulation-order")
def accumulation_order(site: Site, idx: tuple[int, ...]) -> tuple[str, str | None] | None:
    """Higham 2002 eq. (3.5): a sum of n terms in any order is within gamma_n * sum |term| of the exact sum;
    each engine's output is within it of its float64 recomputation, so the engines differ by summation order."""
    dtype = next(iter(site.outs.values())).dtype.name
    if site.op not in OPS or dtype not in UNIT_ROUNDOFF:
        return None
    worst = 0.0
    for engine, out in site.outs.items():
        t = terms(site, engine, idx)
        bound = gamma(t.size, dtype) * float(np.abs(t).sum())
        got = float(out[idx])
        if not (math.isfinite(bound) and math.isfinite(got)) or abs(got - float(t.sum())) > bound:
            return None
        worst = max(worst, bound)
    got = [float(o[idx]) for o in site.outs.values()]
    cause = behaviour.row("accumulation-order").cause
    return cause, (f"|difference| {max(got) - min(got):.3g} within the accumulation bound {2 * worst:.3g} "
                   f"(2 gamma_n sum|a_i b_i|, n={t.size} terms in {dtype}, Higham 2002 eq. 3.5)")
