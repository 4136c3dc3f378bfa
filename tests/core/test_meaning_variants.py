"""The Meaning variants the newer dialects need, each against a hand-computed table (named cases)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from clipbridge.core.dtypes import FLOAT16, FLOAT32, INT32
from clipbridge.core.errors import RejectedSpec
from clipbridge.kernels.array_api import clip_xp
from clipbridge.kernels.numpy import clip_numpy
from clipbridge.core.evaluate import evaluate
from clipbridge.core.meaning import Bound, Meaning, NanBound, NanInput, Order, TensorBound, same_outputs

NAN, INF = math.nan, math.inf


def m(lo, hi, dt=FLOAT32, **kw) -> Meaning:
    return Meaning("test", "1", dt, Bound(lo, lo), Bound(hi, hi), **kw)


CASES = {
    # name: (meaning, input, expected)
    "nan-input-to-lower": (m(0.0, 6.0, nan_input=NanInput.TO_LOWER), [NAN, -1.0, 7.0, 3.0], [0.0, 0.0, 6.0, 3.0]),
    "nan-input-to-lower-min-wins-crossed": (m(3.0, 1.0, nan_input=NanInput.TO_LOWER, order=Order.MIN_WINS),
                                            [NAN, 0.0, 5.0], [3.0, 3.0, 3.0]),
    "nan-input-to-lower-max-wins-crossed": (m(3.0, 1.0, nan_input=NanInput.TO_LOWER), [NAN, 0.0], [1.0, 1.0]),
    "nan-input-to-zero": (m(-1.0, 1.0, nan_input=NanInput.TO_ZERO), [NAN, -2.0, 0.5], [0.0, -1.0, 0.5]),
    "nan-input-to-zero-above-zero": (m(2.0, 6.0, nan_input=NanInput.TO_ZERO), [NAN], [2.0]),
    "nan-input-to-upper": (m(0.0, 5.0, nan_input=NanInput.TO_UPPER), [NAN, -1.0, 9.0], [5.0, 0.0, 5.0]),
    "nan-input-to-upper-min-wins-crossed": (m(6.0, 4.0, nan_input=NanInput.TO_UPPER, order=Order.MIN_WINS),
                                            [NAN, 5.0], [6.0, 6.0]),
    "nan-input-propagate": (m(0.0, 6.0), [NAN, 7.0], [NAN, 6.0]),
    "nan-bound-zero": (m(NAN, 6.0, nan_bound=NanBound.ZERO), [-2.0, 3.0, 9.0], [0.0, 3.0, 6.0]),
    "nan-bound-ignore": (m(NAN, 6.0, nan_bound=NanBound.IGNORE), [-2.0, 9.0], [-2.0, 6.0]),
    "nan-bound-propagate": (m(NAN, 6.0), [-2.0, 9.0], [NAN, NAN]),
    "order-rejected-not-crossed": (m(0.0, 6.0, order=Order.REJECTED), [-1.0, 7.0], [0.0, 6.0]),
    "order-rejected-equal": (m(2.0, 2.0, order=Order.REJECTED), [-1.0, 7.0], [2.0, 2.0]),
    "promotion-int32-to-float32": (Meaning("test", "1", INT32, Bound(1.5, 1.5), Bound(INF, None, default=True),
                                           result_dtype=FLOAT32), [1, 2, 3], [1.5, 2.0, 3.0]),
    "float16-nan-to-lower": (m(0.0, 6.0, FLOAT16, nan_input=NanInput.TO_LOWER), [NAN, -INF, INF], [0.0, 0.0, 6.0]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_variant(name: str) -> None:
    meaning, x, want = CASES[name]
    xa = np.asarray(x, dtype=meaning.dtype.np_dtype)
    got = evaluate(meaning, xa)
    assert got.dtype == meaning.out_dtype.np_dtype
    assert same_outputs(got, np.asarray(want, dtype=got.dtype)).all(), (got, want)
    # The execute kernels agree with evaluate() on every variant.
    assert same_outputs(clip_numpy(meaning, xa), got).all()


def test_order_rejected_crossed_raises() -> None:
    with pytest.raises(RejectedSpec):
        evaluate(m(3.0, 1.0, order=Order.REJECTED), np.zeros(2, np.float32))


TENSOR_CASES = {
    # StableHLO's spec example: min [5, 10, 15], operand [3, 13, 23], max [10, 15, 20] (i32) -> [5, 13, 20]
    "stablehlo-spec-example": (TensorBound((3,), (5, 10, 15)), TensorBound((3,), (10, 15, 20)), INT32,
                               [3, 13, 23], [5, 13, 20]),
    "broadcast-row": (TensorBound((1, 2), (0.0, 1.0)), None, FLOAT32, [[-1.0, -1.0], [2.0, 0.5]],
                      [[0.0, 1.0], [2.0, 1.0]]),
    "nan-element-propagates": (TensorBound((2,), (NAN, 0.0)), None, FLOAT32, [1.0, -1.0], [NAN, 0.0]),
    "crossed-element-max-wins": (TensorBound((2,), (5.0, 0.0)), TensorBound((2,), (1.0, 1.0)), FLOAT32,
                                 [0.0, 3.0], [1.0, 1.0]),
}


@pytest.mark.parametrize("name", list(TENSOR_CASES))
def test_tensor_bounds(name: str) -> None:
    lo, hi, dt, x, want = TENSOR_CASES[name]
    meaning = Meaning("test", "1", dt, None, None if hi else Bound(INF if dt.is_float else dt.highest(), None,
                                                                   default=True),
                      lower_tensor=lo, upper_tensor=hi)
    got = evaluate(meaning, np.asarray(x, dtype=dt.np_dtype))
    assert same_outputs(got, np.asarray(want, dtype=dt.np_dtype)).all(), (got, want)
    assert "per-element" in meaning.describe()
    # The execute kernels (chunked NumPy / numba, and the array-API kernel CuPy runs) agree with evaluate().
    assert same_outputs(clip_numpy(meaning, np.asarray(x, dtype=dt.np_dtype)), got).all()
    assert same_outputs(clip_xp(np, meaning, np.asarray(x, dtype=dt.np_dtype)), got).all()


@pytest.mark.parametrize("name", list(CASES))
def test_variant_on_the_array_api_kernel(name: str) -> None:
    """clip_xp (the CuPy path) computes each variant as evaluate() does, on numpy and on array_api_strict."""
    meaning, x, want = CASES[name]
    want_a = evaluate(meaning, np.asarray(x, dtype=meaning.dtype.np_dtype))
    assert same_outputs(clip_xp(np, meaning, np.asarray(x, dtype=meaning.dtype.np_dtype)), want_a).all()
    xps = pytest.importorskip("array_api_strict")
    if meaning.dtype.name == "float16":
        return  # the array API has no float16
    xa = xps.asarray(x, dtype=getattr(xps, meaning.dtype.np_dtype.name))
    assert same_outputs(np.asarray(clip_xp(xps, meaning, xa)), want_a).all()
