"""app/clipbridge/kernels/numpy.py and app/clipbridge/kernels/array_api.py: the chunked NumPy kernel and the numba fused kernel compute
what the oracle computes.

Every expected output comes from the oracle (`tests.oracle_meaning.expected`: the Meaning's declared fields,
computed with float64 widening, exact Fractions and the spec's comparisons), never from clipbridge.core.evaluate.evaluate().
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clipbridge.kernels import numpy as kernels
from clipbridge.kernels.array_api import clip_xp
from clipbridge.kernels.plan import reference_only
from clipbridge.core.dtypes import BY_NAME, FLOAT16, FLOAT32, FLOAT64, INT8, INT32, INT64, UINT8, UINT16
from clipbridge.core.errors import BackendUnavailable, RejectedSpec
from clipbridge.core.evaluate import evaluate
from clipbridge.core.meaning import Bound, Meaning, NanBound, NanInput, Order, ScaleBias, TensorBound
from tests import oracle
from tests.oracle import same as same_outputs
from tests.oracle_meaning import expected as evaluate_oracle

N = (1 << 18) + 7  # past CHUNK_FUSED, not a multiple of it: the numba path and the chunk tails both run


def _x(dt, n: int = N) -> np.ndarray:
    rng = np.random.default_rng(7)
    if dt.is_float:
        x = rng.normal(0, 8, n).astype(dt.np_dtype)
        x[:8] = [np.nan, np.inf, -np.inf, -0.0, 0.0, 6.0, -1.0, 1e30 if dt is FLOAT32 else 60000]
        return x
    return rng.integers(int(dt.lowest()), int(dt.highest()) + 1, n).astype(dt.np_dtype)


CASES = [
    pytest.param(Meaning("onnx", "Clip-13", FLOAT32, Bound(0.0), Bound(6.0)), id="f32-plain"),
    pytest.param(Meaning("directml", "CLIP", FLOAT32, Bound(0.0), Bound(6.0), scale_bias=ScaleBias(0.5, 1.0)),
                 id="f32-scale-bias"),
    pytest.param(Meaning("directml", "CLIP", FLOAT32, Bound(-1.5), Bound(2.25),
                         scale_bias=ScaleBias(3.0000001, -0.1)), id="f32-scale-bias-inexact"),
    pytest.param(Meaning("directml", "CLIP", FLOAT32, Bound(5.0), Bound(1.0), order=Order.MAX_WINS,
                         scale_bias=ScaleBias(2.0, 0.0)), id="f32-scale-bias-crossed-max-wins"),
    pytest.param(Meaning("directml", "CLIP", FLOAT32, Bound(5.0), Bound(1.0), order=Order.MIN_WINS,
                         scale_bias=ScaleBias(2.0, 0.0)), id="f32-scale-bias-crossed-min-wins"),
    pytest.param(Meaning("onnx", "Clip-13", FLOAT32, Bound(math.nan), Bound(6.0), nan_bound=NanBound.PROPAGATE,
                         scale_bias=ScaleBias(2.0, 1.0)), id="f32-nan-bound"),
    pytest.param(Meaning("directml", "CLIP", FLOAT32, Bound(-math.inf), Bound(math.inf),
                         scale_bias=ScaleBias(-1.0, 0.5)), id="f32-scale-bias-unbounded"),
    pytest.param(Meaning("directml", "CLIP", FLOAT16, Bound(0.0), Bound(6.0), scale_bias=ScaleBias(0.5, 1.0)),
                 id="f16-scale-bias"),
    pytest.param(Meaning("directml", "CLIP", INT8, Bound(-3), Bound(100), scale_bias=ScaleBias(1.5, 0.25)),
                 id="i8-scale-bias"),
    pytest.param(Meaning("onnx", "Clip-13", INT8, Bound(-3), Bound(100)), id="i8-plain"),
    pytest.param(Meaning("onnx", "Clip-13", INT8, Bound(9), Bound(-9)), id="i8-crossed-max-wins"),
    pytest.param(Meaning("onnx", "Clip-13", UINT16, Bound(7), Bound(60000)), id="u16-plain"),
    pytest.param(Meaning("onnx", "Clip-13", INT64, Bound(-(2**62) - 1), Bound(2**53 + 1)), id="i64-beyond-2^53"),
    pytest.param(Meaning("onnx", "Clip-13", FLOAT64, Bound(-1e300), Bound(5e-324)), id="f64-plain"),
    pytest.param(Meaning("onnx", "Clip-13", FLOAT16, Bound(-2.0), Bound(65504.0)), id="f16-plain"),
]


@pytest.mark.parametrize("numba", [True, False], ids=["numba-if-installed", "numpy-only"])
@pytest.mark.parametrize("m", CASES)
def test_clip_numpy_equals_the_oracle(m: Meaning, numba: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if not numba:
        monkeypatch.setattr(kernels, "fused_kernel_numba", lambda: None)
        monkeypatch.setattr(kernels, "clip_kernel_numba", lambda: None)
    x = _x(m.dtype)
    want = evaluate_oracle(m, x.copy())
    got = kernels.clip_numpy(m, x)
    assert got.dtype == want.dtype
    # The project's equality (clipbridge.core.meaning.same_outputs): equal values, NaN == NaN; the sign of a zero is not
    # a clip semantic (IEEE max(-0, +0) may return either), so -0.0 == 0.0 here as everywhere else.
    assert same_outputs(got, want).all()
    inplace = x.copy()
    assert kernels.clip_numpy(m, inplace, out=inplace) is inplace
    assert same_outputs(inplace, want).all()


def test_numba_kernel_is_installed_for_dev() -> None:
    """The [dev] extra installs numba, so the suite above really runs the compiled kernels."""
    assert kernels.fused_kernel_numba() is not None
    assert kernels.clip_kernel_numba() is not None


def test_concurrent_launches_are_safe() -> None:
    """Execution slots run kernels from several threads at once; every result stays exact."""
    from concurrent.futures import ThreadPoolExecutor
    m = Meaning("directml", "CLIP", FLOAT32, Bound(0.0), Bound(6.0), scale_bias=ScaleBias(0.5, 1.0))
    plain = Meaning("onnx", "Clip-13", FLOAT32, Bound(0.0), Bound(6.0))
    x = _x(FLOAT32)
    with ThreadPoolExecutor(4) as pool:
        outs = list(pool.map(lambda i: kernels.clip_numpy(m if i % 2 else plain, x), range(16)))
    for i, y in enumerate(outs):
        assert same_outputs(y, evaluate_oracle(m if i % 2 else plain, x.copy())).all()


# --- Meaning variants on the fast paths: NaN-input rules, NaN bound as 0, rejected order, promotion, tensor bounds.

BIG = kernels.CHUNK_FUSED + 5  # the compiled kernels run from CHUNK_FUSED elements on


def _no_numba(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kernels, "fused_kernel_numba", lambda: None)
    monkeypatch.setattr(kernels, "clip_kernel_numba", lambda: None)
    monkeypatch.setattr(kernels, "variant_kernel", lambda *a: None)


def _same_bits(got: np.ndarray, want: np.ndarray) -> bool:
    """Equal bit for bit, NaN equal to NaN whatever its payload, and a zero equal to a zero: which sign a clip
    returns when x and a bound are zeros of both signs is no clip semantic (IEEE max(-0, +0) may give either)."""
    assert got.dtype == want.dtype and got.shape == want.shape
    if got.dtype.kind != "f":
        return bool(np.array_equal(got, want))
    nan, zero = np.isnan(want), want == 0
    u = np.dtype(f"uint{got.dtype.itemsize * 8}")
    rest = ~nan & ~zero
    return bool(np.array_equal(np.isnan(got), nan) and np.array_equal(got == 0, zero)
                and np.array_equal(got[rest].view(u), want[rest].view(u)))


def _specials(dt) -> list[float]:
    fi = np.finfo(dt.np_dtype)
    return [math.nan, math.inf, -math.inf, 0.0, -0.0, float(fi.smallest_subnormal), -float(fi.smallest_subnormal),
            float(fi.max), -float(fi.max), 1.0, -2.5, 6.0]


def _float_bound(dt):
    return st.one_of(st.sampled_from(_specials(dt)),
                     st.floats(width=dt.bits, allow_nan=False)).map(float)


@pytest.mark.parametrize("numba", [True, False], ids=["numba-if-installed", "numpy-only"])
@pytest.mark.parametrize("dt", [FLOAT32, FLOAT64], ids=["f32", "f64"])
def test_float_variants_property(dt, numba: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Any bounds (NaN, infinities, zeros, subnormals, crossed), any rule and order: the kernel is the oracle."""
    if not numba:
        _no_numba(monkeypatch)
    base = np.concatenate([np.asarray(_specials(dt), dt.np_dtype), _x(dt, BIG)])

    @settings(derandomize=True, max_examples=40, deadline=None)
    @given(lo=_float_bound(dt), hi=_float_bound(dt),
           order=st.sampled_from([Order.MAX_WINS, Order.MIN_WINS, Order.REJECTED]),
           nan_input=st.sampled_from([NanInput.PROPAGATE, NanInput.TO_LOWER, NanInput.TO_ZERO, NanInput.TO_UPPER]),
           nan_bound=st.sampled_from([NanBound.PROPAGATE, NanBound.IGNORE, NanBound.ZERO]))
    def check(lo, hi, order, nan_input, nan_bound) -> None:
        m = Meaning("test", "1", dt, Bound(lo), Bound(hi), order=order, nan_input=nan_input, nan_bound=nan_bound)
        try:
            want = evaluate_oracle(m, base.copy())
        except oracle.Refused:
            with pytest.raises(RejectedSpec):
                kernels.clip_numpy(m, base)
            return
        got = kernels.clip_numpy(m, base)
        assert _same_bits(got, want), m
    check()


@pytest.mark.parametrize("numba", [True, False], ids=["numba-if-installed", "numpy-only"])
@pytest.mark.parametrize("dt", [INT8, UINT16, INT64], ids=["i8", "u16", "i64"])
def test_int_orders_property(dt, numba: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if not numba:
        _no_numba(monkeypatch)
    x = _x(dt, BIG)
    ints = st.integers(int(dt.lowest()), int(dt.highest()))

    @settings(derandomize=True, max_examples=25, deadline=None)
    @given(lo=ints, hi=ints, order=st.sampled_from([Order.MAX_WINS, Order.MIN_WINS, Order.REJECTED]),
           nan_input=st.sampled_from([NanInput.PROPAGATE, NanInput.TO_LOWER]))
    def check(lo, hi, order, nan_input) -> None:
        m = Meaning("test", "1", dt, Bound(lo), Bound(hi), order=order, nan_input=nan_input)
        if order is Order.REJECTED and lo > hi:
            with pytest.raises(RejectedSpec):
                kernels.clip_numpy(m, x)
            return
        assert np.array_equal(kernels.clip_numpy(m, x), evaluate_oracle(m, x.copy()))
    check()


def _ints(dt, n: int) -> np.ndarray:
    """Random integers of dt, with the extremes and values just past float32's exact range (rounding ties)."""
    x = np.random.default_rng(5).integers(int(dt.lowest()), int(dt.highest()), n, dtype=dt.np_dtype, endpoint=True)
    edge = [int(dt.lowest()), int(dt.highest()), 0, 1]
    if dt.bits > 24:
        edge += [2**24 + 1, 2**24 + 3, 2**25 + 2, 2**31 - 1]
    if dt.bits == 64:
        edge += [2**53 + 1, 2**62 + 2**38 + 1]
    edge = [v for v in edge if dt.lowest() <= v <= dt.highest()]
    x[:len(edge)] = edge
    return x


@pytest.mark.parametrize("numba", [True, False], ids=["numba-if-installed", "numpy-only"])
@pytest.mark.parametrize("src, res", [("int32", "float32"), ("int8", "float32"), ("uint64", "float32"),
                                      ("int64", "float64"), ("uint8", "float16"), ("float16", "float32"),
                                      ("float32", "float64"), ("int16", "int32")])
def test_promotion_property(src: str, res: str, numba: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The input converted to the result dtype (astype: one correctly rounded step) and clipped there."""
    if not numba:
        _no_numba(monkeypatch)
    dt, rd = BY_NAME[src], BY_NAME[res]
    x = _ints(dt, BIG) if not dt.is_float else np.concatenate([np.asarray(_specials(dt), dt.np_dtype), _x(dt, BIG)])
    bound = _float_bound(rd) if rd.is_float else st.integers(int(rd.lowest()), int(rd.highest()))

    @settings(derandomize=True, max_examples=15, deadline=None)
    @given(lo=bound, hi=bound, order=st.sampled_from([Order.MAX_WINS, Order.MIN_WINS]),
           nan_input=st.sampled_from([NanInput.PROPAGATE, NanInput.TO_LOWER, NanInput.TO_ZERO, NanInput.TO_UPPER]),
           nan_bound=st.sampled_from([NanBound.PROPAGATE, NanBound.IGNORE, NanBound.ZERO]))
    def check(lo, hi, order, nan_input, nan_bound) -> None:
        m = Meaning("pytorch", "clamp", dt, Bound(lo), Bound(hi), order=order, nan_input=nan_input,
                    nan_bound=nan_bound, result_dtype=rd)
        with np.errstate(all="ignore"):
            want = evaluate_oracle(m, x.copy())
        got = kernels.clip_numpy(m, x)
        assert got.dtype == rd.np_dtype
        assert _same_bits(got, want), m
    check()


def _tb(shape: tuple[int, ...], values) -> TensorBound:
    return TensorBound(shape, tuple(float(v) if isinstance(v, (float, np.floating)) else int(v) for v in values))


def _tensor_cases() -> list:
    rng = np.random.default_rng(3)
    n = BIG
    lo_same = rng.normal(-2, 3, n).astype(np.float32)
    lo_same[:6] = [math.nan, -0.0, 0.0, math.inf, -math.inf, 5.0]
    hi_same = rng.normal(2, 3, n).astype(np.float32)  # some elements crossed
    hi_same[:6] = [1.0, 0.0, -0.0, math.nan, math.inf, -5.0]
    i_lo = rng.integers(-100, 50, n).astype(np.int32)
    return [
        pytest.param(FLOAT32, (n,), _tb((n,), lo_same), _tb((n,), hi_same), None, id="f32-same-shape-both"),
        pytest.param(FLOAT32, (n,), _tb((n,), lo_same), None, None, id="f32-same-shape-lower-only"),
        pytest.param(FLOAT32, (n,), None, _tb((n,), hi_same), None, id="f32-same-shape-upper-only"),
        pytest.param(FLOAT32, (n // 5, 5), _tb((5,), [math.nan, -0.0, 0.0, 1.0, 9.0]), _tb((n // 5, 1), hi_same[:n // 5]),
                     None, id="f32-broadcast-row-and-column"),
        pytest.param(FLOAT32, (3,), _tb((2, 3), [0.0, 1.0, 2.0, -1.0, -0.0, 5.0]), None, None,
                     id="f32-bound-broadcasts-the-output-up"),
        pytest.param(INT32, (n,), _tb((n,), i_lo), _tb((), [20]), None, id="i32-same-shape-and-scalar-tensor"),
        pytest.param(INT32, (n,), _tb((n,), i_lo.astype(np.float32)), None, FLOAT32, id="i32-promoted-to-f32"),
        pytest.param(FLOAT64, (n,), _tb((n,), lo_same.astype(np.float64)), _tb((n,), hi_same.astype(np.float64)),
                     None, id="f64-same-shape"),
    ]


@pytest.mark.parametrize("numba", [True, False], ids=["numba-if-installed", "numpy-only"])
@pytest.mark.parametrize("order", [Order.MAX_WINS, Order.MIN_WINS, Order.REJECTED])
@pytest.mark.parametrize("nan_input", [NanInput.PROPAGATE, NanInput.TO_LOWER, NanInput.TO_ZERO, NanInput.TO_UPPER],
                         ids=["nan-propagates", "nan-to-lower", "nan-to-zero", "nan-to-upper"])
@pytest.mark.parametrize("dt, shape, lo, hi, rd", _tensor_cases())
def test_tensor_bounds_equal_the_oracle(dt, shape, lo, hi, rd, nan_input, order, numba: bool,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    if not numba:
        _no_numba(monkeypatch)
    out_dt = rd or dt
    x = _x(dt, max(8, math.prod(shape)))[:math.prod(shape)].reshape(shape)
    m = Meaning("pytorch", "clamp", dt, None if lo else Bound(-1.0 if out_dt.is_float else -1),
                None if hi else Bound(math.inf if out_dt.is_float else int(out_dt.highest()), default=True),
                order=order, nan_input=nan_input, lower_tensor=lo, upper_tensor=hi, result_dtype=rd)
    try:
        want = evaluate_oracle(m, x.copy())
    except oracle.Refused:
        with pytest.raises(RejectedSpec):
            kernels.clip_numpy(m, x)
        return
    assert _same_bits(kernels.clip_numpy(m, x), want)
    if want.shape == x.shape and want.dtype == x.dtype:  # in place
        y = x.copy()
        assert _same_bits(kernels.clip_numpy(m, y, out=y), want)
    f = np.asfortranarray(x)  # not C-contiguous: the chunked ufunc path
    assert _same_bits(kernels.clip_numpy(m, f), evaluate_oracle(m, f.copy()))


@pytest.mark.parametrize("m", [
    pytest.param(Meaning("t", "1", FLOAT32, Bound(0.0), Bound(6.0), nan_input=NanInput.TO_LOWER), id="nan-to-lower"),
    pytest.param(Meaning("t", "1", FLOAT32, Bound(2.0), Bound(-1.0), nan_input=NanInput.TO_ZERO, order=Order.MIN_WINS),
                 id="nan-to-zero-crossed"),
    pytest.param(Meaning("t", "1", FLOAT32, Bound(math.nan), Bound(6.0), nan_bound=NanBound.ZERO), id="nan-bound-zero"),
    pytest.param(Meaning("t", "1", INT32, Bound(1.5), Bound(math.inf), result_dtype=FLOAT32), id="promotion"),
    pytest.param(Meaning("t", "1", FLOAT32, None, Bound(6.0), nan_input=NanInput.TO_LOWER,
                         lower_tensor=_tb((2, 1), [math.nan, -1.0])), id="tensor-lower-nan-to-lower"),
    pytest.param(Meaning("t", "1", UINT8, None, None, lower_tensor=_tb((3,), [1, 2, 3]),
                         upper_tensor=_tb((3,), [2, 2, 2]), order=Order.MIN_WINS), id="tensor-u8-crossed-min-wins"),
])
@pytest.mark.parametrize("xp_name", ["numpy", "array_api_strict"])
def test_clip_xp_variants(m: Meaning, xp_name: str) -> None:
    """The array-API kernel (CuPy's path) computes the variants as the oracle does."""
    xp = pytest.importorskip(xp_name)
    raw = [[math.nan, -0.0, 7.0], [-3.0, 0.5, 2.0]] if m.dtype.is_float else [[0, 5, 1], [3, 2, 200]]
    x = np.asarray(raw, dtype=m.dtype.np_dtype)
    want = evaluate_oracle(m, x.copy())
    got = np.asarray(clip_xp(xp, m, xp.asarray(x.tolist(), dtype=getattr(xp, m.dtype.np_dtype.name))))
    assert _same_bits(got.astype(want.dtype), want)


def test_variant_kernel_is_installed_for_dev() -> None:
    assert kernels.variant_kernel("float32", False, True, True, 0) is not None


def test_scale_bias_with_tensor_bounds_is_refused_by_the_kernels() -> None:
    """ScaleBias with per-element bounds or promotion (no dialect builds it): the kernels refuse it, naming the
    backend, rather than hand the work to evaluate()."""
    m = Meaning("t", "1", FLOAT32, None, Bound(6.0), lower_tensor=_tb((1,), [0.0]), scale_bias=ScaleBias(2.0, 0.0))
    assert reference_only(m)
    assert not reference_only(Meaning("t", "1", FLOAT32, None, Bound(6.0), lower_tensor=_tb((1,), [0.0])))


def test_scale_bias_with_tensor_bounds_applies_the_scale_bias() -> None:
    """Regression (found by the independent oracle): evaluate() dropped the ScaleBias when a bound was per-element:
    g(x) = 2x must give [0, 6, 6] for x = [-1, 3, 9], not [0, 3, 6]."""
    m = Meaning("t", "1", FLOAT32, None, Bound(6.0), lower_tensor=_tb((1,), [0.0]), scale_bias=ScaleBias(2.0, 0.0))
    x = np.asarray([-1.0, 3.0, 9.0], np.float32)
    assert same_outputs(evaluate(m, x), evaluate_oracle(m, x)).all()


def test_scale_bias_with_tensor_bounds_kernels_refuse_naming_the_backend() -> None:
    m = Meaning("t", "1", FLOAT32, None, Bound(6.0), lower_tensor=_tb((1,), [0.0]), scale_bias=ScaleBias(2.0, 0.0))
    x = np.asarray([-1.0, 3.0, 9.0], np.float32)
    for run in (lambda: kernels.clip_numpy(m, x), lambda: clip_xp(np, m, x)):
        with pytest.raises(BackendUnavailable) as exc:
            run()
        assert exc.value.loc == "backend"
