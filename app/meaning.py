"""The canonical meaning of a clip: the exact function it computes on every value of its dtype.

A Meaning is the common currency between dialects. It holds the *spec* behaviour only;
what real engines were observed to do differently is kept beside it in `engine_notes`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np

from app.dtypes import FLOAT32, DType
from app.exact import trunc_saturate
from app.errors import RejectedSpec
from app.numbers import Number, format_number, wire_number


class Order(StrEnum):
    """What the clip computes when the effective lower bound exceeds the upper one."""

    MAX_WINS = "max-wins"  # min(hi, max(x, lo)): every value becomes hi
    MIN_WINS = "min-wins"  # max(lo, min(x, hi)): every value becomes lo
    AMBIGUOUS = "ambiguous"  # the documentation gives both formulas


class NanInput(StrEnum):
    PROPAGATE = "propagate"  # NaN in, NaN out
    UNDOCUMENTED = "undocumented"  # the spec is silent; execution reads it as propagate


class NanBound(StrEnum):
    PROPAGATE = "propagate"  # a NaN bound makes every output NaN
    IGNORE = "ignore"  # a NaN bound leaves that side unbounded
    REJECTED = "rejected"
    UNDOCUMENTED = "undocumented"


class State(StrEnum):
    DEFINED = "defined"
    REJECTED = "rejected"
    AMBIGUOUS = "ambiguous"


# Readings of an ambiguous DirectML min > max, named after the documentation that gives them.
READING_CURRENT = "current-doc: max(Min, min(x, Max))"
READING_2022 = "2022-doc: min(Max, max(Min, x))"
DEFAULT_READING = READING_CURRENT


@dataclass(frozen=True)
class Bound:
    """An effective bound: an exact value of the tensor dtype, with how the spec's number became it."""

    value: Number
    given: Number | None = None  # the number written in the spec; None when a default applied
    steps: tuple[str, ...] = ()  # each rule applied, in order, citing its source
    default: bool = False
    rounded: bool = False  # an integer-rounding rule changed the value
    saturated: bool = False  # clamped into the dtype range
    precision_loss: bool = False  # the carrier type could not hold the given number
    overflow: bool = False  # a float conversion overflowed to inf

    @property
    def is_nan(self) -> bool:
        return isinstance(self.value, float) and math.isnan(self.value)

    def to_json(self) -> dict[str, Any]:
        return {"value": wire_number(self.value), "given": wire_number(self.given), "default": self.default,
                "steps": list(self.steps)}


@dataclass(frozen=True)
class ScaleBias:
    """g(x) = x * scale + bias applied before clipping, computed in `precision`."""

    scale: float
    bias: float
    precision: DType = FLOAT32
    fused: bool = False  # one rounding (fma) instead of two

    def to_json(self) -> dict[str, Any]:
        return {"scale": wire_number(self.scale), "bias": wire_number(self.bias),
                "precision": self.precision.name, "fused": self.fused}


@dataclass(frozen=True)
class EngineNote:
    """A deviation of a real engine from the spec meaning, observed and cited, never mixed into it."""

    engine: str
    text: str


@dataclass(frozen=True)
class Meaning:
    dialect: str
    version: str
    dtype: DType
    lower: Bound | None
    upper: Bound | None
    order: Order = Order.MAX_WINS
    nan_input: NanInput = NanInput.PROPAGATE
    nan_bound: NanBound = NanBound.PROPAGATE
    scale_bias: ScaleBias | None = None
    state: State = State.DEFINED
    reason: str | None = None
    readings: tuple[str, ...] = ()
    dynamic: bool = False
    engine_notes: tuple[EngineNote, ...] = field(default=())
    rules: tuple[str, ...] = ()

    @property
    def lo(self) -> Number | None:
        return None if self.lower is None else self.lower.value

    @property
    def hi(self) -> Number | None:
        return None if self.upper is None else self.upper.value

    @property
    def crossed(self) -> bool:
        """True when the effective lower bound exceeds the upper one."""
        lo, hi = self.lo, self.hi
        if lo is None or hi is None:
            return False
        try:
            return lo > hi
        except TypeError:
            return False

    def describe(self) -> str:
        """One line a person reads: the function this clip computes."""
        if self.state is State.REJECTED:
            return f"rejected: {self.reason}"
        if self.dynamic:
            return f"{self.dtype.name}: bounds computed at run time"
        sb = ""
        if self.scale_bias:
            sb = f"x*{format_number(self.scale_bias.scale)}+{format_number(self.scale_bias.bias)} then "
        text = f"{self.dtype.name}: {sb}clip to [{format_number(self.lo)}, {format_number(self.hi)}]"
        if self.crossed:
            text += f"; min > max: {self.order.value}"
        return text

    def to_json(self) -> dict[str, Any]:
        return {
            "dialect": self.dialect, "version": self.version, "dtype": self.dtype.name,
            "lower": self.lower.to_json() if self.lower else None,
            "upper": self.upper.to_json() if self.upper else None,
            "order": self.order.value, "nan_input": self.nan_input.value, "nan_bound": self.nan_bound.value,
            "scale_bias": self.scale_bias.to_json() if self.scale_bias else None,
            "state": self.state.value, "reason": self.reason, "readings": list(self.readings),
            "dynamic": self.dynamic, "summary": self.describe(), "rules": list(self.rules),
            "engine_notes": [{"engine": n.engine, "text": n.text} for n in self.engine_notes],
        }


def apply_scale_bias(sb: ScaleBias, x: np.ndarray, dtype: DType) -> np.ndarray:
    """x*scale+bias in the stated precision, then converted back to the tensor type."""
    p = sb.precision.np_dtype
    xs = x.astype(p)
    with np.errstate(over="ignore", invalid="ignore"):
        if sb.fused:
            # One rounding: compute exactly enough in float64 for float32/float16 inputs, round once.
            y = (xs.astype(np.float64) * sb.scale + sb.bias).astype(p)
        else:
            y = (xs * p.type(sb.scale)).astype(p) + p.type(sb.bias)
        if dtype.is_float:
            return y.astype(dtype.np_dtype)
        # Integer tensors: truncate toward zero and saturate (the documented reading of a float->int cast).
        return trunc_saturate(np, y.astype(np.float64), dtype.np_dtype, dtype.lowest(), dtype.highest())


def evaluate(m: Meaning, x: np.ndarray, reading: str | None = None) -> np.ndarray:
    """The output of the clip on `x` (an array of m.dtype) under the spec meaning."""
    if m.state is State.REJECTED:
        raise RejectedSpec(m.reason or "rejected by the framework")
    if m.dynamic or m.lower is None or m.upper is None:
        raise RejectedSpec("bounds are computed at run time; the clip cannot be evaluated without them")
    dt = m.dtype
    x = np.asarray(x, dtype=dt.np_dtype)
    t = apply_scale_bias(m.scale_bias, x, dt) if m.scale_bias else x
    lo, hi = m.lower.value, m.upper.value
    if dt.is_float and (m.lower.is_nan or m.upper.is_nan):
        if m.nan_bound is NanBound.REJECTED:
            raise RejectedSpec(m.reason or "a NaN bound is rejected")
        if m.nan_bound is NanBound.PROPAGATE:
            return np.full_like(t, np.nan)
        # IGNORE (and the execution reading of UNDOCUMENTED): a NaN bound leaves that side open.
        lo = -math.inf if m.lower.is_nan else lo
        hi = math.inf if m.upper.is_nan else hi
    lo_a = np.asarray(lo, dtype=dt.np_dtype)
    hi_a = np.asarray(hi, dtype=dt.np_dtype)
    order = m.order
    if order is Order.AMBIGUOUS:
        order = Order.MIN_WINS if (reading or DEFAULT_READING) == READING_CURRENT else Order.MAX_WINS
    # np.maximum/np.minimum propagate NaN inputs, which is the spec reading of every dialect here.
    if order is Order.MAX_WINS:
        return np.minimum(hi_a, np.maximum(t, lo_a))
    return np.maximum(lo_a, np.minimum(t, hi_a))


def same_outputs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise: equal values, NaN equal to NaN, -0 equal to +0."""
    if a.dtype.kind == "f" or a.dtype.kind == "V" or str(a.dtype) == "bfloat16":
        af = a.astype(np.float64)
        bf = b.astype(np.float64)
        return (af == bf) | (np.isnan(af) & np.isnan(bf))
    return a == b
