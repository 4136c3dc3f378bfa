"""Why a clip-like node's output differs between engines, from clipbridge's meaning of the node under each.

Each cause is a named rule over the element's captured input and the node's pattern. Every rule checks what
the engines gave at the element (its witness) before it names a cause: a rule that predicts each engine's value
checks the prediction; a rule about two readings of the node (crossed bounds, a bound rounded or overflowed)
checks that each engine's output is the value one of those readings gives (`_witnessed`). A mismatch leaves the
element without a cause (never a guess).
"""

from __future__ import annotations

import dataclasses
import math
import struct

import numpy as np

from clipbridge import behaviour
from clipbridge.diff import quantized
from clipbridge.scan.patterns import ClipLike, nan_value

NARROWER = {"float32": ("bf16", "f16", "bfloat16", "float16"), "float64": ("bf16", "f16", "f32", "bfloat16",
                                                                           "float16", "float32"),
            "float16": ("bf16", "bfloat16")}
FLOAT16_MAX = 65504.0


def _bits(v: float) -> int:
    """The float's IEEE bits: a dictionary key that tells NaN payloads and -0.0 apart, as the rules may."""
    return struct.unpack("<q", struct.pack("<d", v))[0]


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


def _witnessed(outs: dict[str, float], readings: list[float]) -> bool:
    """Every engine's output at the witness is the value one of the rule's readings gives: the rule explains
    what the engines did there, not only that the node could differ."""
    return bool(outs) and all(any(_same(got, r) for r in readings) for got in outs.values())


def _clips(v: float, los: set[float | None], his: set[float | None], dtype: np.dtype) -> list[float]:
    """v clipped to each reading of the bounds, in double and as the tensor's type holds the result; NaN stays
    NaN (a rule about the bounds says nothing about NaN)."""
    out: list[float] = []
    for lo in los:
        for hi in his:
            r = v
            if lo is not None and not math.isnan(r):
                r = max(r, lo)
            if hi is not None and not math.isnan(r):
                r = min(r, hi)
            with np.errstate(over="ignore", invalid="ignore"):
                held = float(np.dtype(dtype).type(r)) if np.dtype(dtype).kind == "f" or math.isfinite(r) else r
            out += [r, held]
    return out


def in_type(c: ClipLike, dtype: np.dtype) -> ClipLike:
    """The clip with its constant bounds as the engines hold them in the tensor's type (row
    float16-bound-held-as-inf)."""
    dt = np.dtype(dtype)
    if dt.kind != "f":
        return c
    with np.errstate(over="ignore"):
        lo, hi = (None if b is None else float(dt.type(b)) for b in (c.lo, c.hi))
    return dataclasses.replace(c, lo=lo, hi=hi)


def beyond_float16(c: ClipLike, dtype: np.dtype) -> bool:
    """A float16 tensor clipped at a finite bound beyond 65504 (which float16 holds as +-inf)."""
    return np.dtype(dtype) == np.float16 and any(b is not None and math.isfinite(b) and abs(b) > FLOAT16_MAX
                                                 for b in (c.lo, c.hi))


@behaviour.states("nan-propagates-onnx", "openvino-clamp-nan-to-lower", "openvino-relu-nan-to-zero",
        "openvino-hardsigmoid-nan-to-one", "openvino-max-nan-to-constant", "openvino-min-nan-to-constant")
def nan_input(c: ClipLike, v: float, outs: dict[str, float], dtype: np.dtype) -> str | None:
    """A NaN input, each engine's output the value its NaN row gives (patterns.reading_row names the row per
    node), the bound as held in the tensor's type (in_type). A NaN is
    named `nan-input` even where that bound is a float16 one beyond 65504 held as +-inf (issue 44): the NaN is
    what differs, the bound only decides which value the engine writes for it."""
    if not math.isnan(v):
        return None
    c = in_type(c, dtype)
    info = np.finfo(dtype)
    for engine, got in outs.items():
        want = nan_value(c, engine, float(info.min), float(info.max))
        if not _same(float("nan") if want is None else want, got):
            return None
    return behaviour.row("nan-propagates-onnx").cause


@behaviour.states("clip-min-greater-than-max")
def min_greater_than_max(c: ClipLike, v: float, outs: dict[str, float], dtype: np.dtype) -> str | None:
    """Row clip-min-greater-than-max: each engine gave max or min (or NaN for a NaN input)."""
    if not (c.pattern == "clip" and c.lo is not None and c.hi is not None and c.lo > c.hi):
        return None
    held = in_type(c, dtype)
    readings = [held.lo, held.hi] + ([float("nan")] if math.isnan(v) else [])
    return behaviour.row("clip-min-greater-than-max").cause if _witnessed(outs, readings) else None


@behaviour.states("omitted-bound-default")
def default_bound(c: ClipLike, v: float, outs: dict[str, float], dtype: np.dtype) -> str | None:
    """Row omitted-bound-default: +-inf at an omitted bound, each engine's output what its reading gives (the
    type's limit, or the infinity kept where the engine leaves the side open)."""
    if c.pattern != "clip" or not math.isinf(v):
        return None
    side = "min" if v < 0 else "max"
    if side not in c.omitted:
        return None
    limit = float(np.finfo(dtype).min if v < 0 else np.finfo(dtype).max)
    for engine, got in outs.items():
        if not _same(v if behaviour.reading("omitted-bound-default", engine) == "open" else limit, got):
            return None
    return behaviour.row("omitted-bound-default").cause


@behaviour.states("float16-bound-overflow")
def float16_bound_overflow(c: ClipLike, v: float, outs: dict[str, float], dtype: np.dtype) -> str | None:
    """Row float16-bound-overflow: a bound beyond float16's finite range on a float16 tensor, each engine's
    output what one reading of it (+-inf or +-65504) gives."""
    if np.dtype(dtype) != np.float16:
        return None
    beyond = [b for b in (c.lo, c.hi) if b is not None and math.isfinite(b) and abs(b) > FLOAT16_MAX]
    if not beyond or not abs(v) > FLOAT16_MAX:
        return None

    def readings(b: float | None) -> set[float | None]:  # the bound as float16 holds it (+-inf) or saturated
        return {b} if b is None or abs(b) <= FLOAT16_MAX else {math.copysign(math.inf, b),
                                                                 math.copysign(FLOAT16_MAX, b)}
    held = _clips(v, readings(c.lo), readings(c.hi), dtype)
    return behaviour.row("float16-bound-overflow").cause if _witnessed(outs, held) else None


@behaviour.states("bound-rounding")
def bound_rounding(c: ClipLike, v: float, outs: dict[str, float], dtype: np.dtype) -> str | None:
    """Row bound-rounding: the element lies between the bound's two readings, and each engine gave what one
    reading of that bound gives."""
    for side, b in (("lo", c.lo), ("hi", c.hi)):
        if b is None or not math.isfinite(b):
            continue
        dt = np.dtype(dtype)
        if dt.kind == "f":
            with np.errstate(over="ignore"):
                t = float(dt.type(b))
            lo, hi = (min(b, t), max(b, t))
        else:
            lo, hi = math.floor(b), math.ceil(b)
            t = float(lo) if lo == hi else b + 0.5
        if t != b and lo <= v <= hi and _witnessed(outs, _rounded_readings(c, side, b, v, dtype)):
            return behaviour.row("bound-rounding").cause
    return None


def _rounded_readings(c: ClipLike, side: str, b: float, v: float, dtype: np.dtype) -> list[float]:
    """v clipped with the bound `b` read as written, cast to the type, or (integers) its floor and ceil."""
    dt = np.dtype(dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        ways: set[float | None] = {b, float(dt.type(b)) if dt.kind == "f" else float(int(b))}
    if dt.kind != "f":
        ways |= {float(math.floor(b)), float(math.ceil(b))}
    held = in_type(c, dtype)
    los, his = (ways, {held.hi}) if side == "lo" else ({held.lo}, ways)
    return _clips(v, los, his, dtype)


RULES = (nan_input, min_greater_than_max, default_bound, float16_bound_overflow,
         bound_rounding, *quantized.RULES)


def narrower(engine_kernels: dict[str, dict], precisions: dict[str, str], node: str, dtype: str) -> str | None:
    """The engine (and its precision) that ran `node`, or the kernel it was fused into, in a type narrower
    than the model's, naming both types; from OpenVINO's runtime model rt_info (runtimePrecision) where it names
    the node, else from the precision the engine reported it ran at (OpenVINO's compiled
    INFERENCE_PRECISION_HINT: a node its runtime model folded away ran inside a kernel of that precision)."""
    narrow = NARROWER.get(dtype, ())
    for engine, kernels in engine_kernels.items():
        k = kernels.get(node) or next((v for n, v in kernels.items() if n.startswith(node + "/")), None)
        p = (k or {}).get("precision") or precisions.get(engine, "")
        if p in narrow:
            others = ", ".join(f"{e} ran {q}" for e, q in precisions.items() if e != engine)
            where = f" (kernel {k['type']}: {', '.join(k['layers'][:4])})" if k else " (its reported precision)"
            return f"{engine} ran it in {p}{where}; the model's type is {dtype}" + (f", {others}" if others else "")
    return None


def element_cause(c: ClipLike, v: float, outs: dict[str, float], dtype: np.dtype) -> str | None:
    for rule in RULES:
        found = rule(c, v, outs, dtype)
        if found:
            return found
    return None


def node_cause(c: ClipLike, x: np.ndarray, outs: dict[str, np.ndarray], mask: np.ndarray,
               precision_note: str | None, limit: int = 4096) -> tuple[str | None, int, dict[str, int]]:
    """(the node's cause, the flat index of its witness, counts per cause) over the differing elements
    (at most `limit` of them are classified; the counts say how many were)."""
    where = np.flatnonzero(mask.reshape(-1))[:limit]
    counts: dict[str, int] = {}
    first: dict[str, int] = {}
    flat_x = x.reshape(-1)
    flat = {e: o.reshape(-1) for e, o in outs.items()}
    seen: dict[tuple, str | None] = {}  # the rules are functions of the values' bits: each case classified once
    for i in where:
        v = float(flat_x[i]) if flat_x.size > i else float("nan")
        got = {e: float(o[i]) for e, o in flat.items()}
        case = (_bits(v), *(_bits(g) for g in got.values()))
        if case not in seen:
            seen[case] = element_cause(c, v, got, x.dtype)
        cause = seen[case]
        if cause is None and precision_note:
            cause = behaviour.row("openvino-inference-precision").cause
        key = cause or "unexplained"
        counts[key] = counts.get(key, 0) + 1
        first.setdefault(key, int(i))
    if not counts:
        return None, 0, {}
    explained = {k: n for k, n in counts.items() if k != "unexplained"}
    if "unexplained" in counts or not explained:
        return None, first.get("unexplained", int(where[0])), counts
    top = max(explained, key=lambda k: explained[k])
    return top, first[top], counts
