"""The canonical meaning of a clip: the exact function it computes on every value of its dtype.

A Meaning is the common currency between dialects. It holds the *spec* behaviour only;
what real engines were observed to do differently is kept beside it in `engine_notes`. This module is the data
model; clipbridge.core.evaluate computes a meaning's output on an array.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any, TypeVar

import numpy as np

from clipbridge.core.dtypes import FLOAT32, DType
from clipbridge.core.errors import RejectedSpec
from clipbridge.core.numbers import Number, format_number, wire_number


class Order(StrEnum):
    """What the clip computes when the effective lower bound exceeds the upper one."""

    MAX_WINS = "max-wins"  # min(hi, max(x, lo)): every value becomes hi
    MIN_WINS = "min-wins"  # max(lo, min(x, hi)): every value becomes lo
    REJECTED = "rejected"  # min > max is an error (TOSA ERROR_IF, WebNN TypeError, OpenVINO, Core ML iOS17)


class NanInput(StrEnum):
    PROPAGATE = "propagate"  # NaN in, NaN out
    UNDOCUMENTED = "undocumented"  # the spec is silent; execution reads it as propagate
    TO_LOWER = "to-lower"  # a NaN input is read as the lower bound, then clipped (TOSA IGNORE, TensorRT kCLIP)
    TO_ZERO = "to-zero"  # a NaN input is read as +0, then clipped (TFLite's float RELU6 loop: max(0.f, NaN) = 0)
    TO_UPPER = "to-upper"  # a NaN input is read as the upper bound, then clipped (TFLite builtin MINIMUM ternary)


# The rules that replace a NaN input by a value before clipping (evaluate() computes them; the fast kernels do not).
FILLED_NAN_INPUTS = (NanInput.TO_LOWER, NanInput.TO_ZERO, NanInput.TO_UPPER)


class NanBound(StrEnum):
    PROPAGATE = "propagate"  # a NaN bound makes every output NaN
    IGNORE = "ignore"  # a NaN bound leaves that side unbounded
    REJECTED = "rejected"
    UNDOCUMENTED = "undocumented"
    ZERO = "zero"  # a NaN bound is read as 0 (older WebNN web-platform-tests; webmachinelearning/webnn#874)


class State(StrEnum):
    DEFINED = "defined"
    REJECTED = "rejected"
    AMBIGUOUS = "ambiguous"


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
        return self.value != self.value  # NaN alone is unequal to itself (ints and Fractions never are)

    def to_json(self) -> dict[str, Any]:
        return {"value": wire_number(self.value), "given": wire_number(self.given), "default": self.default,
                "steps": list(self.steps)}


@dataclass(frozen=True)
class TensorBound:
    """A per-element bound: `values` (row-major, each already a value of the clip's dtype) broadcast to the input.

    `shape` broadcasts against the input's shape by NumPy's rules (PyTorch); StableHLO requires it equal (C1/C2).
    """

    shape: tuple[int, ...]
    values: tuple[Number, ...]
    given: tuple[Number, ...] | None = None  # the numbers as written, when a rule changed any of them
    steps: tuple[str, ...] = ()

    def array(self, dt: DType) -> np.ndarray:
        return np.asarray(self.values, dtype=dt.np_dtype).reshape(self.shape)

    def to_json(self) -> dict[str, Any]:
        return {"shape": list(self.shape), "values": [wire_number(v) for v in self.values],
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
    # The engine refuses the artifact (will not load or run it), rather than computing something else: a
    # translation into it is then never `exact` without a warning (drift.engine_finding).
    refuses: bool = False


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
    # The output dtype when the op promotes (PyTorch: an integer tensor with a float bound gives a float result).
    # The input is converted to it (one correctly rounded step) and clipped there. None: the output is `dtype`.
    result_dtype: DType | None = None
    # Per-element bounds. When a side is a tensor, its scalar Bound (lower/upper) is None.
    lower_tensor: TensorBound | None = None
    upper_tensor: TensorBound | None = None
    # The same op under a dialect's other readings, (reading name, meaning), when its documents and shipped
    # implementations disagree (WebNN: the W3C text vs Chromium). This meaning is the default reading's.
    alternates: tuple[tuple[str, "Meaning"], ...] = field(default=(), repr=False)
    # The reading this meaning is when it is not the dialect's default one (the specification): a spec may pin
    # another reading as its own (TensorRT `reading`: observed). None: the default. Serialized as `shows`, what a
    # spec card says it shows (issue 37); not part of equality, as the function computed is the same either way.
    reading: str | None = field(default=None, compare=False)

    def under(self, reading: str | None) -> "Meaning":
        """This meaning under the named reading (itself for the default reading or an unknown name)."""
        return dict(self.alternates).get(reading or "", self)

    @property
    def out_dtype(self) -> DType:
        """The dtype of the output (the promoted one, or the input's)."""
        return self.result_dtype or self.dtype

    @property
    def has_tensor_bounds(self) -> bool:
        return self.lower_tensor is not None or self.upper_tensor is not None

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
        if self.has_tensor_bounds:
            lo = "per-element" if self.lower_tensor else format_number(self.lo)
            hi = "per-element" if self.upper_tensor else format_number(self.hi)
            return f"{self.out_dtype.name}: clip to [{lo}, {hi}]"
        sb = ""
        if self.scale_bias:
            sb = f"x*{format_number(self.scale_bias.scale)}+{format_number(self.scale_bias.bias)} then "
        promoted = f" (result {self.result_dtype.name})" if self.result_dtype not in (None, self.dtype) else ""
        text = f"{self.dtype.name}{promoted}: {sb}clip to [{format_number(self.lo)}, {format_number(self.hi)}]"
        if self.crossed:
            text += f"; min > max: {self.order.value}"
        return text

    def to_json(self) -> dict[str, Any]:
        return {
            "dialect": self.dialect, "version": self.version, "dtype": self.dtype.name,
            "lower": self.lower.to_json() if self.lower else None,
            "upper": self.upper.to_json() if self.upper else None,
            # _value_: the member's value as a plain attribute (Enum.value is a descriptor, several times slower)
            "order": self.order._value_, "nan_input": self.nan_input._value_, "nan_bound": self.nan_bound._value_,
            "scale_bias": self.scale_bias.to_json() if self.scale_bias else None,
            "state": self.state._value_, "reason": self.reason, "readings": list(self.readings),
            "dynamic": self.dynamic, "summary": self.describe(), "rules": list(self.rules),
            "engine_notes": [{"engine": n.engine, "text": n.text} for n in self.engine_notes],
            "result_dtype": self.result_dtype.name if self.result_dtype else None,
            "lower_tensor": self.lower_tensor.to_json() if self.lower_tensor else None,
            "upper_tensor": self.upper_tensor.to_json() if self.upper_tensor else None,
            "shows": self.reading or "specification",
        }


def effective_order(m: Meaning, crossed: bool) -> Order:
    """MAX_WINS or MIN_WINS as evaluate() resolves it: REJECTED raises when crossed (the one place;
    clipbridge.core.evaluate and clipbridge.kernels.plan both use it). A dialect whose documents disagree has readings
    (Meaning.alternates), each with its own order."""
    order = m.order
    if order is Order.REJECTED:
        if crossed:
            raise RejectedSpec(m.reason or f"{m.dialect} rejects min > max")
        order = Order.MAX_WINS  # min <= max: both formulas agree
    return order


def same_outputs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise: equal values, NaN equal to NaN, -0 equal to +0."""
    if a.dtype.kind == "f" or a.dtype.kind == "V" or str(a.dtype) == "bfloat16":
        af = a.astype(np.float64)
        bf = b.astype(np.float64)
        return (af == bf) | (np.isnan(af) & np.isnan(bf))
    return a == b


_T = TypeVar("_T")
_INIT_FIELDS: dict[type, frozenset[str]] = {}


def evolve(obj: _T, **changes: Any) -> _T:
    """dataclasses.replace(obj, **changes) for a plain dataclass (no __post_init__, InitVar or __slots__): the
    instance's fields copied with the changes, without the generated __init__'s object.__setattr__ per field of
    a frozen class (about 6x faster for a Meaning's 20 fields; translate derives several per target)."""
    cls = obj.__class__
    names = _INIT_FIELDS.get(cls)
    if names is None:
        if hasattr(cls, "__post_init__") or hasattr(cls, "__slots__"):
            raise TypeError(f"evolve() copies fields; {cls.__name__} needs dataclasses.replace")
        names = _INIT_FIELDS[cls] = frozenset(f.name for f in fields(cls) if f.init)  # type: ignore[arg-type]
    if not names.issuperset(changes):
        raise TypeError(f"{cls.__name__} has no field(s) {sorted(set(changes) - names)}")
    new = object.__new__(cls)
    new.__dict__.update(obj.__dict__)
    new.__dict__.update(changes)
    return new
