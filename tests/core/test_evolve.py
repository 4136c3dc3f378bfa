"""meaning.evolve: the fast dataclasses.replace must build exactly what replace builds, and refuse what it cannot."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clipbridge.core.dtypes import FLOAT16, FLOAT32, INT8
from clipbridge.core.meaning import Bound, EngineNote, Meaning, NanBound, NanInput, Order, State, evolve

BASE = Meaning("onnx", "13", FLOAT32, Bound(0.0, 0), Bound(6.0, 6), rules=("r",))

numbers = st.one_of(st.integers(-300, 300), st.floats(allow_nan=True, allow_infinity=True))
bounds = st.builds(Bound, numbers, st.one_of(st.none(), numbers), st.lists(st.text(max_size=5), max_size=2).map(tuple),
                   st.booleans(), st.booleans())
CHANGES = {
    "dialect": st.sampled_from(["onnx", "tflite"]),
    "dtype": st.sampled_from([FLOAT32, FLOAT16, INT8]),
    "lower": st.one_of(st.none(), bounds),
    "upper": st.one_of(st.none(), bounds),
    "order": st.sampled_from(list(Order)),
    "nan_input": st.sampled_from(list(NanInput)),
    "nan_bound": st.sampled_from(list(NanBound)),
    "state": st.sampled_from(list(State)),
    "engine_notes": st.lists(st.builds(EngineNote, st.text(max_size=4), st.text(max_size=4)), max_size=2).map(tuple),
    "alternates": st.just((("other", BASE),)),
}


def _same(a: object, b: object) -> bool:
    """Field by field, a NaN equal to itself (== on a Bound holding NaN is False for replace's copy too)."""
    return type(a) is type(b) and vars(a).keys() == vars(b).keys() and all(
        x is y or x == y or (isinstance(x, float) and math.isnan(x) and math.isnan(y))
        for x, y in zip(vars(a).values(), vars(b).values()))


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.fixed_dictionaries({}, optional=CHANGES))
def test_evolve_builds_what_replace_builds(changes: dict) -> None:
    new = evolve(BASE, **changes)
    assert _same(new, dataclasses.replace(BASE, **changes))
    assert new is not BASE and _same(BASE, Meaning("onnx", "13", FLOAT32, Bound(0.0, 0), Bound(6.0, 6), rules=("r",)))
    assert hash(new) == hash(dataclasses.replace(BASE, **changes)) or any(
        b is not None and b.is_nan for b in (new.lower, new.upper))


@settings(max_examples=200, derandomize=True, deadline=None)
@given(bounds, st.fixed_dictionaries({}, optional={"value": numbers, "steps": st.just(("x",)), "rounded": st.booleans()}))
def test_evolve_bound(b: Bound, changes: dict) -> None:
    assert _same(evolve(b, **changes), dataclasses.replace(b, **changes))


def test_frozen_after_evolve() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        evolve(BASE, dialect="x").dialect = "y"  # type: ignore[misc]


@pytest.mark.parametrize("changes", [{"nope": 1}, {"out_dtype": FLOAT32}], ids=["unknown", "property"])
def test_unknown_field_is_refused(changes: dict) -> None:
    with pytest.raises(TypeError, match="no field"):
        evolve(BASE, **changes)


def test_post_init_class_is_refused() -> None:
    @dataclasses.dataclass(frozen=True)
    class Checked:
        x: int

        def __post_init__(self) -> None:
            assert self.x >= 0

    with pytest.raises(TypeError, match="needs dataclasses.replace"):
        evolve(Checked(1), x=-1)
