"""clipbridge.dialects.kit.crossed: min > max written as the one value the source gives, the same for every emitter."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clipbridge.core.dtypes import FLOAT32, INT32, DType
from clipbridge.core.evaluate import evaluate
from clipbridge.core.findings import Code, Notes, Severity
from clipbridge.core.meaning import Bound, Meaning, NanBound, Order, same_outputs
from clipbridge.dialects.kit.crossed import collapse_crossed, values_cross

MIN, MAX, REJ = Order.MIN_WINS, Order.MAX_WINS, Order.REJECTED


def clip(lo: float | int, hi: float | int, order: Order, dt: DType = FLOAT32, **kw) -> Meaning:
    return Meaning("test", "1", dt, Bound(lo, lo), Bound(hi, hi), order=order, **kw)


@pytest.mark.parametrize("order, target_gives, lo, hi, want, noted", [
    pytest.param(MIN, MAX, 6.0, 4.0, [6.0, 6.0], True, id="min-wins-into-max-wins"),
    pytest.param(MAX, MIN, 6.0, 4.0, [4.0, 4.0], True, id="max-wins-into-min-wins"),
    pytest.param(MIN, None, 6.0, 4.0, [6.0, 6.0], True, id="min-wins-into-rejecting"),
    pytest.param(MAX, None, 6.0, 4.0, [4.0, 4.0], True, id="max-wins-into-rejecting"),
    pytest.param(MIN, MIN, 6.0, 4.0, [6.0, 4.0], False, id="same-rule-min"),
    pytest.param(MAX, MAX, 6.0, 4.0, [6.0, 4.0], False, id="same-rule-max"),
    pytest.param(MIN, MAX, 4.0, 6.0, [4.0, 6.0], False, id="not-crossed"),
    pytest.param(MIN, None, 5.0, 5.0, [5.0, 5.0], False, id="equal-is-not-crossed"),
    pytest.param(REJ, None, 6.0, 4.0, [6.0, 4.0], False, id="rejected-order-left-alone"),
    pytest.param(MAX, None, 2**63 - 1, 2**63 - 2, [2**63 - 2, 2**63 - 2], True, id="big-ints-exact"),
])
def test_collapse_table(order, target_gives, lo, hi, want, noted):
    notes = Notes()
    got = collapse_crossed(clip(lo, hi, order), [lo, hi], notes, target_gives, "msg")
    assert got == want
    assert [(f.code, f.severity, f.message) for f in notes.items] == (
        [(Code.MIN_GREATER_THAN_MAX, Severity.INFO, "msg")] if noted else [])


def test_message_made_from_the_value_written():
    notes = Notes()
    collapse_crossed(clip(6.0, 4.0, MAX), [6.0, 4.0], notes, None, lambda v: f"wrote {v}")
    assert [(f.severity, f.message) for f in notes.items] == [(Severity.INFO, "wrote 4.0")]


@pytest.mark.parametrize("values", [
    pytest.param([None, 4.0], id="open-min"), pytest.param([6.0, None], id="open-max"),
    pytest.param([math.nan, 4.0], id="nan"), pytest.param([[6.0, 7.0], [4.0, 5.0]], id="tensor-sides"),
])
def test_values_that_never_cross(values):
    assert not values_cross(values)
    notes = Notes()
    src = Meaning("test", "1", FLOAT32, None, None, order=MIN)
    assert collapse_crossed(src, values, notes, MAX, "msg") == values and not notes.items


def test_values_written_for_a_nan_bound_read_as_zero_can_cross():
    """min NaN read as 0 and max -1: Meaning.crossed is False (NaN), but the source computes 0 > -1 crossed."""
    src = clip(math.nan, -1.0, MIN, nan_bound=NanBound.ZERO)
    assert not src.crossed
    notes = Notes()
    assert collapse_crossed(src, [0.0, -1.0], notes, MAX, "msg") == [0.0, 0.0] and notes.items


def test_source_crossed_with_values_that_rounded_together():
    """An ONNX carrier pair can round to one float32 while the source's bounds cross: still collapsed."""
    notes = Notes()
    assert collapse_crossed(clip(1.0000001, 1.0, MAX, dt=FLOAT32), [1.0, 1.0], notes, None, "m") == [1.0, 1.0]
    assert notes.items


def _inputs(dt: DType, lo: float | int, hi: float | int, extra: list) -> np.ndarray:
    pts = [lo, hi, *extra]
    if dt.is_float:
        pts += [math.nan, math.inf, -math.inf, -0.0]
    return np.asarray(pts, dtype=dt.np_dtype)


FLOATS = st.floats(width=32, allow_nan=False, allow_infinity=False)
INTS = st.integers(-(2**31), 2**31 - 1)


@settings(max_examples=200, deadline=None)
@given(dt=st.sampled_from([FLOAT32, INT32]), data=st.data(),
       order=st.sampled_from([MIN, MAX]), target_gives=st.sampled_from([MIN, MAX, None]))
def test_collapsed_pair_computes_the_source_on_every_input(dt, data, order, target_gives):
    """Property: the target, clipping with what collapse_crossed returns under its own rule (a rejecting target
    as Order.REJECTED, which raises on min > max), computes the source's output on every input."""
    num = FLOATS if dt.is_float else INTS
    lo, hi = data.draw(num), data.draw(num)
    src = clip(lo, hi, order, dt)
    vals = collapse_crossed(src, [lo, hi], Notes(), target_gives, "m")
    tgt = replace(src, lower=Bound(vals[0], vals[0]), upper=Bound(vals[1], vals[1]), order=target_gives or REJ)
    x = _inputs(dt, lo, hi, data.draw(st.lists(num, max_size=8)))
    assert same_outputs(evaluate(src, x), evaluate(tgt, x)).all()
