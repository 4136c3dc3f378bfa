"""What the three dialect modules share: the emit result, the mode, and the preserve search."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from fractions import Fraction
from functools import lru_cache, wraps
from typing import Any

import numpy as np

from clipbridge.core.dtypes import DType
from clipbridge.core.errors import SpecError
from clipbridge.core.findings import Code, Finding, Severity
from clipbridge.core.meaning import Bound, Meaning
from clipbridge.core import critical, exact
from clipbridge.core.numbers import Number, format_number, same_value


class Mode(StrEnum):
    PRESERVE = "preserve"  # choose target numbers so the target computes what the source computes
    LITERAL = "literal"  # copy the source's numbers and report what changes


@dataclass
class Emitted:
    """A translation into one target: its spec (JSON), resolved meaning, notes and artifacts."""

    spec: dict[str, Any] | None
    meaning: Meaning | None
    notes: list[Finding] = field(default_factory=list)
    artifacts: Mapping[str, str] = field(default_factory=dict)
    unsupported: bool = False


class LazyArtifacts(Mapping[str, str]):
    """Artifacts built on their first read: a response that leaves them out (translate's include=[]) never pays
    for the ONNX model, IR XML, MIL program, ... (building them costs more than the rest of a translation)."""

    def __init__(self, build: Callable[[], dict[str, str]]) -> None:
        self._build: Callable[[], dict[str, str]] | None = build
        self._built: dict[str, str] = {}

    def _items(self) -> dict[str, str]:
        if self._build is not None:
            self._built, self._build = self._build(), None
        return self._built

    def __getitem__(self, key: str) -> str:
        return self._items()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items())

    def __len__(self) -> int:
        return len(self._items())

    def __repr__(self) -> str:
        return "LazyArtifacts(not built)" if self._build is not None else f"LazyArtifacts({self._built!r})"


def carrier_neighbours(value: Number, carrier: DType, reach: int = 2) -> Iterator[Number]:
    """The carrier-type values nearest `value`: its rounding and `reach` steps either side. Lazy: a pick
    (pick_carrier) mostly stops at the rounding, and a fresh bound's neighbours are then never computed."""
    if isinstance(value, float) and math.isnan(value):
        yield math.nan
        return
    if carrier.is_float:  # integer keys of the patterns, cached per carrier and value (clipbridge.core.critical)
        yield critical.centre(carrier, value)
        yield from critical.bound_points(carrier, value, reach).astype(np.float64).tolist()[1:]
        return
    base = value
    yield base
    up = down = base
    for _ in range(reach):
        up, down = carrier.next_up(up), carrier.next_down(down)
        yield up
        yield down


def number_key(value: Number | None) -> tuple[type, Number | None, bool]:
    """A cache key telling apart numbers that == confuses: 1, 1.0 and Fraction(1); 0.0 and -0.0 (NumPy floats
    too). A NaN equals only itself, so another NaN object misses: computed again, never confused."""
    cls = value.__class__
    if cls is not float and (value is None or isinstance(value, (int, Fraction))):
        return cls, value, False
    return cls, value, math.copysign(1.0, value) < 0


CastRule = Callable[..., Bound]


def cached_cast(rule: CastRule) -> CastRule:
    """A bound rule `rule(value, dt, side, *more)` memoized per (number_key(value), dt, side, *more): the rules are
    pure, and a translation casts the same numbers again (each carrier candidate in the pick, then the chosen one
    when the emitted spec is resolved; the common bounds 0, 6, 1 in every request). A raised error is not kept."""
    @lru_cache(maxsize=8192)
    def by_key(key: tuple[type, Number, bool], dt: DType, side: str, *more: Any) -> Bound:
        return rule(key[1], dt, side, *more)

    @wraps(rule)
    def cast(value: Number, dt: DType, side: str, *more: Any) -> Bound:
        return by_key(number_key(value), dt, side, *more)
    return cast


def pick_carrier(want: Number, candidates: Iterable[Number],
                 resolve: Callable[[Number], Bound]) -> tuple[Number, Bound, bool]:
    """The first candidate the target resolves to exactly `want`; else the nearest one (exact=False)."""
    best: tuple[Any, Number, Bound] | None = None
    for c in candidates:
        b = resolve(c)
        if same_value(b.value, want):
            return c, b, True
        dist = exact.distance(b.value, want) if not (exact.is_nan(b.value) or exact.is_nan(want)) else math.inf
        if best is None or dist < best[0]:
            best = (dist, c, b)
    assert best is not None
    return best[1], best[2], False


@dataclass(frozen=True)
class TypeWords:
    """How a dialect names an integer type in literal-cast findings ("an INT8 tensor", "a i8 constant", ...)."""

    holder: str  # what cannot hold a NaN
    into: str  # what an infinite bound is written into
    a_name: str  # "an INT8": what a fraction is not
    name: str  # what an out-of-range bound lies outside


def literal_integer_cast(given: Number, dt: DType, side: str, notes: Any, words: TypeWords) -> Number:
    """Literal mode into an integer type: a C cast of the source's number (NaN -> 0, +-inf -> the extremes,
    fractions truncated, out-of-range saturated), each step reported as a finding."""
    if exact.is_nan(given):
        notes.add(Code.NAN_BOUND, Severity.ERROR, f"{side} is NaN; {words.holder} cannot hold it: wrote 0")
        return 0
    if exact.is_inf(given):
        v = dt.lowest() if given < 0 else dt.highest()
        notes.add(Code.INFINITE_BOUND, Severity.WARNING, f"{side} {format_number(given)} written as {v} in "
                  f"{words.into}")
        return v
    if not exact.is_integral(given):
        v = exact.trunc_exact(given)
        notes.add(Code.BOUND_ROUNDING, Severity.WARNING,
                  f"{side} {format_number(given)} is not {words.a_name}: literal mode wrote trunc = {v}")
        given = v
    if not dt.contains(given):
        v = dt.saturate(int(given))
        notes.add(Code.BOUND_SATURATION, Severity.WARNING, f"{side} {format_number(given)} is outside "
                  f"{words.name}: wrote {v}")
        return v
    return int(given)


def rounded_float_bound(value: Number, dt: DType, side: str, written: str) -> Bound:
    """A number made a value of the float type `dt` in one correctly rounded step, the step recorded as
    `side <value> <written>: <out>`; overflow to inf and lost precision flagged for drift's codes."""
    out = dt.round(value)
    steps: tuple[str, ...] = ()
    if not math.isnan(out) and out != value:
        steps = (f"{side} {format_number(value)} {written}: {format_number(out)}",)
    return Bound(out, value, steps, precision_loss=bool(steps) and not math.isinf(out),
                 overflow=math.isinf(out) and not exact.is_inf(value))


def typed_scalar_bound(value: Number, dt: DType, side: str, loc: str, written: str, type_name: str,
                       why: str) -> Bound:
    """A bound that is a value of the tensor type (ONNX Clip-11+ inputs, StableHLO C3): a float literal rounds
    once to T (nearest even), recorded as `side <value> <written>: <out>`; an integer must be exactly one of T's."""
    if dt.is_float:
        return rounded_float_bound(value, dt, side, written)
    if not exact.is_integral(value):
        raise SpecError(f"{format_number(value)} is not a value of {type_name}: {why}", loc)
    if not dt.contains(value):
        raise SpecError(f"{format_number(value)} is outside {type_name} [{dt.lowest()}, {dt.highest()}]", loc)
    return Bound(int(value), value)


def default_made_explicit(bound: Bound, side: str, op: str, notes: Any) -> bool:
    """Literal mode into a dialect without default bounds: True (and an info finding) when the source's bound was
    a default, so the target writes the source's effective value instead of a number the source never gave."""
    if not (bound.default or bound.given is None):
        return False
    notes.add(Code.DEFAULT_BOUND, Severity.INFO, f"{op} has no default {side}: wrote the source's effective "
              f"{format_number(bound.value)}")
    return True
