"""float16/bfloat16 kernels (app/clipbridge/kernels/half.py): every one of the 65,536 bit patterns against the oracle.

The expected outputs come from the oracle (`tests.oracle_meaning.expected`), never from clipbridge.core.evaluate.evaluate().
Outputs are compared bit for bit, except that a NaN may carry any payload and a zero may carry either sign
where the clip chose between a zero input and a zero bound (IEEE max(-0, +0) may give either; no clip
semantic). Where no bound decides, as in the ScaleBias tables (bounds -inf/+inf), zero signs are compared too.
Each case runs the numba kernel (when installed) and the NumPy table path.
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pytest

from clipbridge.kernels import numpy as kernels
from clipbridge.core.dtypes import BFLOAT16, FLOAT16, FLOAT32, DType
from clipbridge.core.errors import RejectedSpec
from clipbridge.core.meaning import Bound, Meaning, NanBound, NanInput, Order, ScaleBias, TensorBound
from clipbridge.dialects.directml import meaning as dml_meaning
from clipbridge.dialects.directml.spec import DirectMLSpec
from tests import oracle_meaning

PATTERNS = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
# Past kernels.CHUNK_FUSED so the compiled kernel runs (smaller arrays take the NumPy path), with a ragged tail.
REPS = 2


def _grid(dt: DType) -> list[float]:
    """Bounds: NaN, both infinities, both zeros, the smallest subnormals, ordinary values, the largest finite."""
    x = PATTERNS.view(dt.np_dtype)
    tiny = float(x[1])
    big = float(np.asarray(65504.0 if dt is FLOAT16 else 3.3895313892515355e38, dtype=dt.np_dtype))
    return [math.nan, math.inf, -math.inf, 0.0, -0.0, tiny, -tiny, 6.0, -2.0, big]


@functools.lru_cache(maxsize=None)
def _want(m: Meaning, zero_signs: str) -> np.ndarray:
    """The oracle on every pattern, once per meaning (both paths compare against it); -0.0 == 0.0 in a Meaning, so
    the key also spells the bounds and the bias out."""
    with np.errstate(all="ignore"):
        return oracle_meaning.expected(m, PATTERNS.view(m.dtype.np_dtype).copy()).view(np.uint16)


def _agrees(got: np.ndarray, want: np.ndarray, dt: DType, strict_zero: bool = False) -> np.ndarray:
    """Per pattern: the same bits; any NaN for a NaN; any zero for a zero unless strict_zero."""
    g, w = got.view(dt.np_dtype).astype(np.float32), want.view(dt.np_dtype).astype(np.float32)
    ok = got == want
    ok |= np.isnan(g) & np.isnan(w)
    if not strict_zero:
        ok |= (g == 0) & (w == 0)
    return ok


def _check(m: Meaning, strict_zero: bool = False) -> None:
    x = PATTERNS.view(m.dtype.np_dtype)
    want = _want(m, repr((m.lo, m.hi, m.scale_bias and m.scale_bias.bias)))
    big = np.concatenate([x] * REPS + [x[:7]])
    got = kernels.clip_numpy(m, big).view(np.uint16)
    for r in range(REPS):
        bad = np.nonzero(~_agrees(got[r << 16:(r + 1) << 16], want, m.dtype, strict_zero))[0]
        assert bad.size == 0, (f"{m.describe()} order={m.order} nan_bound={m.nan_bound}: {bad.size} patterns differ, "
                               f"first {bad[0]:#06x} -> {got[bad[0]]:#06x}, oracle {want[bad[0]]:#06x}")
    assert _agrees(got[-7:], want[:7], m.dtype, strict_zero).all()
    small = kernels.clip_numpy(m, x[:1000].copy()).view(np.uint16)  # below the numba threshold
    assert _agrees(small, want[:1000], m.dtype, strict_zero).all()


@pytest.fixture(params=["numba-if-installed", "numpy-only"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "numpy-only":
        monkeypatch.setattr(kernels, "half_kernel_numba", lambda: None)
        monkeypatch.setattr(kernels, "variant_kernel", lambda *a: None)
    return str(request.param)


@pytest.mark.parametrize("nan_bound", [NanBound.PROPAGATE, NanBound.IGNORE, NanBound.UNDOCUMENTED])
@pytest.mark.parametrize("order", [Order.MAX_WINS, Order.MIN_WINS])
@pytest.mark.parametrize("dt", [FLOAT16, BFLOAT16], ids=["f16", "bf16"])
def test_plain_clip_every_pattern(dt: DType, order: Order, nan_bound: NanBound, path: str) -> None:
    for lo, hi in itertools.product(_grid(dt), repeat=2):
        _check(Meaning("onnx", "Clip-13", dt, Bound(lo), Bound(hi), order=order, nan_bound=nan_bound))


@pytest.mark.parametrize("reading", ["current-doc", "2022-doc"])
def test_directml_crossed_clip_under_each_reading(reading: str, path: str) -> None:
    """DirectML CLIP's min > max on float16: the current doc's meaning (Min) and its 2022-doc alternate (Max). No
    DirectML tensor is bfloat16; both orders on crossed bfloat16 bounds are in test_plain_clip_every_pattern."""
    t = {"DataType": "FLOAT16", "Sizes": [1, 1, 1, 4]}
    for lo, hi in [(6.0, -2.0), (0.0, -0.0), (-0.0, 0.0), (math.inf, -math.inf), (-2.0, 6.0)]:
        spec = DirectMLSpec(dialect="directml", desc={"InputTensor": t, "OutputTensor": t, "Min": lo, "Max": hi})
        m = dml_meaning.resolve(spec).under(reading)
        assert m.order is (Order.MAX_WINS if reading == "2022-doc" and lo > hi else Order.MIN_WINS)
        _check(m)


SCALE_BIAS = [
    pytest.param(ScaleBias(0.5, 1.0), id="exact"),
    pytest.param(ScaleBias(3.0000001, -0.1), id="inexact-two-roundings"),
    pytest.param(ScaleBias(-3.0, 0.25, fused=True), id="fused-one-rounding"),
    pytest.param(ScaleBias(1e-3, 70000.0), id="overflow-to-inf"),
    pytest.param(ScaleBias(0.1, -0.0, precision=FLOAT16), id="float16-precision"),
]


@pytest.mark.parametrize("sb", SCALE_BIAS)
@pytest.mark.parametrize("order", [Order.MAX_WINS, Order.MIN_WINS])
@pytest.mark.parametrize("dt", [FLOAT16, BFLOAT16], ids=["f16", "bf16"])
def test_scale_bias_every_pattern(dt: DType, order: Order, sb: ScaleBias, path: str) -> None:
    grid = [math.nan, -math.inf, 0.0, -0.0, 6.0]
    for lo, hi in itertools.product(grid, repeat=2):
        for nb in (NanBound.PROPAGATE, NanBound.IGNORE):
            _check(Meaning("directml", "CLIP", dt, Bound(lo), Bound(hi), order=order, nan_bound=nb, scale_bias=sb))


@pytest.mark.parametrize("dt", [FLOAT16, BFLOAT16], ids=["f16", "bf16"])
def test_in_place_and_fortran_order(dt: DType, path: str) -> None:
    m = Meaning("onnx", "Clip-13", dt, Bound(-2.0), Bound(6.0))
    x = np.asfortranarray(np.concatenate([PATTERNS] * 4).view(dt.np_dtype).reshape(512, 512))
    with np.errstate(all="ignore"):
        want = oracle_meaning.expected(m, x.copy()).view(np.uint16)
    assert kernels.clip_numpy(m, x, out=x) is x
    assert _agrees(x.view(np.uint16), want, dt).all()


@pytest.mark.parametrize("dt", [FLOAT16, BFLOAT16], ids=["f16", "bf16"])
def test_rejected_nan_bound_is_rejected(dt: DType) -> None:
    m = Meaning("openvino", "Clamp-1", dt, Bound(math.nan), Bound(6.0), nan_bound=NanBound.REJECTED)
    with pytest.raises(RejectedSpec):
        kernels.clip_numpy(m, PATTERNS.view(dt.np_dtype))


def test_numba_half_kernel_is_installed_for_dev() -> None:
    """The [dev] extra installs numba, so the numba-if-installed cases above really run the compiled kernel."""
    assert kernels.half_kernel_numba() is not None


@pytest.mark.parametrize("dt", [FLOAT16, BFLOAT16], ids=["f16", "bf16"])
def test_bias_of_either_zero_sign_gets_its_own_table(dt: DType, path: str) -> None:
    """ScaleBias(s, -0.0) == ScaleBias(s, 0.0) as dataclasses, yet -0*s + -0 is -0 and -0*s + 0 is +0."""
    for bias in (0.0, -0.0, 0.0):
        _check(Meaning("directml", "CLIP", dt, Bound(-math.inf), Bound(math.inf), scale_bias=ScaleBias(2.0, bias)),
               strict_zero=True)


@pytest.mark.parametrize("sb", SCALE_BIAS)
@pytest.mark.parametrize("dt", [FLOAT16, BFLOAT16], ids=["f16", "bf16"])
def test_every_scale_bias_table_entry(dt: DType, sb: ScaleBias, path: str) -> None:
    """Bounds -inf/+inf clip nothing, so the output is the ScaleBias table entry g(x) of every pattern: each one
    equals the oracle's x*scale+bias (float64 widening, or one Fraction rounding when fused), zero signs too."""
    _check(Meaning("directml", "CLIP", dt, Bound(-math.inf), Bound(math.inf), nan_bound=NanBound.PROPAGATE,
                   scale_bias=sb), strict_zero=True)


@pytest.mark.parametrize("dt", [FLOAT16, BFLOAT16], ids=["f16", "bf16"])
def test_cupy_kernel_every_pattern(dt: DType) -> None:
    """The CuPy kernels (8 patterns per thread, and one per thread for the ragged/unaligned part) match the oracle."""
    cp = pytest.importorskip("cupy")
    if cp.cuda.runtime.getDeviceCount() < 1:
        pytest.skip("no CUDA device")
    from clipbridge.kernels.cupy import clip_cupy_half
    xd = cp.asarray(PATTERNS)
    for lo, hi, order, sb in itertools.product([math.nan, -0.0, 6.0, -math.inf], [math.nan, 0.0, -2.0, math.inf],
                                               [Order.MAX_WINS, Order.MIN_WINS], [None, ScaleBias(0.5, 1.0)]):
        m = Meaning("directml", "CLIP", dt, Bound(lo), Bound(hi), order=order, scale_bias=sb)
        want = _want(m, repr((lo, hi, sb and sb.bias)))
        assert _agrees(cp.asnumpy(clip_cupy_half(m, xd)), want, dt).all(), m.describe()
        assert _agrees(cp.asnumpy(clip_cupy_half(m, xd[3:4000])), want[3:4000], dt).all(), m.describe()


@pytest.mark.parametrize("order", [Order.MAX_WINS, Order.MIN_WINS])
@pytest.mark.parametrize("rule", [NanInput.TO_LOWER, NanInput.TO_ZERO, NanInput.TO_UPPER],
                         ids=["nan-to-lower", "nan-to-zero", "nan-to-upper"])
@pytest.mark.parametrize("dt", [FLOAT16, BFLOAT16], ids=["f16", "bf16"])
def test_nan_input_rules_every_pattern(dt: DType, rule: NanInput, order: Order, path: str) -> None:
    """A NaN input is replaced (lower bound or +0) then clipped: crossed bounds and NaN bounds included."""
    for lo, hi in itertools.product(_grid(dt), repeat=2):
        for nb in (NanBound.PROPAGATE, NanBound.IGNORE):
            _check(Meaning("tosa", "CLAMP", dt, Bound(lo), Bound(hi), order=order, nan_input=rule, nan_bound=nb))


@pytest.mark.parametrize("rule", [NanInput.TO_LOWER, NanInput.TO_ZERO, NanInput.TO_UPPER],
                         ids=["nan-to-lower", "nan-to-zero", "nan-to-upper"])
@pytest.mark.parametrize("dt", [FLOAT16, BFLOAT16], ids=["f16", "bf16"])
def test_nan_input_rules_with_scale_bias_every_pattern(dt: DType, rule: NanInput, path: str) -> None:
    """With a ScaleBias the rule applies to x*scale+bias (inf*0 is a NaN too): the table carries it."""
    for lo, hi in [(0.0, 6.0), (-0.0, 0.0), (6.0, -2.0), (-math.inf, math.inf)]:
        _check(Meaning("directml", "CLIP", dt, Bound(lo), Bound(hi), nan_input=rule,
                       scale_bias=ScaleBias(0.0, -0.0)))
        _check(Meaning("directml", "CLIP", dt, Bound(lo), Bound(hi), nan_input=rule,
                       scale_bias=ScaleBias(1e-3, 70000.0)))


@pytest.mark.parametrize("order", [Order.MAX_WINS, Order.MIN_WINS])
@pytest.mark.parametrize("dt", [FLOAT16, BFLOAT16], ids=["f16", "bf16"])
def test_nan_bound_zero_every_pattern(dt: DType, order: Order, path: str) -> None:
    """NanBound.ZERO: a NaN bound reads as 0 (then a crossed pair follows the order)."""
    for lo, hi in itertools.product(_grid(dt), repeat=2):
        _check(Meaning("webnn", "clamp", dt, Bound(lo), Bound(hi), order=order, nan_bound=NanBound.ZERO))


@pytest.mark.parametrize("dt", [FLOAT16, BFLOAT16], ids=["f16", "bf16"])
def test_order_rejected_every_pattern(dt: DType, path: str) -> None:
    """Order.REJECTED: min <= max clips (as max-wins); min > max raises (the oracle refuses it too)."""
    for lo, hi in itertools.product(_grid(dt), repeat=2):
        for rule in (NanInput.PROPAGATE, NanInput.TO_LOWER):
            m = Meaning("tosa", "CLAMP", dt, Bound(lo), Bound(hi), order=Order.REJECTED, nan_bound=NanBound.IGNORE,
                        nan_input=rule)
            lo_e = -math.inf if math.isnan(lo) else lo
            hi_e = math.inf if math.isnan(hi) else hi
            if lo_e > hi_e:
                with pytest.raises(RejectedSpec):
                    kernels.clip_numpy(m, PATTERNS.view(dt.np_dtype))
                continue
            _check(m)


@pytest.mark.parametrize("dt", [FLOAT16, BFLOAT16], ids=["f16", "bf16"])
def test_tensor_bounds_every_pattern(dt: DType, path: str) -> None:
    """Per-element bounds on half types: every pattern against a row of bounds and against itself (NaN, zeros)."""
    x = PATTERNS.view(dt.np_dtype).reshape(256, 256)
    grid = _grid(dt)
    lo_vals = tuple(grid[i % len(grid)] for i in range(256))
    hi_vals = tuple(grid[(i * 7 + 3) % len(grid)] for i in range(256))
    for order in (Order.MAX_WINS, Order.MIN_WINS):
        for rule in (NanInput.PROPAGATE, NanInput.TO_LOWER, NanInput.TO_ZERO, NanInput.TO_UPPER):
            m = Meaning("stablehlo", "clamp", dt, None, None, order=order, nan_input=rule,
                        lower_tensor=TensorBound((256,), lo_vals), upper_tensor=TensorBound((256, 1), hi_vals))
            with np.errstate(all="ignore"):
                want = oracle_meaning.expected(m, x.copy()).view(np.uint16)
            got = kernels.clip_numpy(m, x.copy()).view(np.uint16)
            assert _agrees(got, want, dt).all(), (order, rule)
            same = Meaning("stablehlo", "clamp", dt, None, None, order=order, nan_input=rule,
                           lower_tensor=TensorBound((256, 256), tuple(float(v) for v in x.ravel())),
                           upper_tensor=TensorBound((256, 256), tuple(float(v) for v in x.ravel()[::-1])))
            with np.errstate(all="ignore"):
                want = oracle_meaning.expected(same, x.copy()).view(np.uint16)
            assert _agrees(kernels.clip_numpy(same, x.copy()).view(np.uint16), want, dt).all(), (order, rule)


@pytest.mark.parametrize("m", [
    pytest.param(Meaning("stablehlo", "clamp", FLOAT16, None, Bound(6.0), lower_tensor=TensorBound((1,), (0.0,))),
                 id="per-element-bounds"),
    pytest.param(Meaning("pytorch", "clamp", FLOAT16, Bound(0.0), Bound(6.0), result_dtype=FLOAT32), id="promotion"),
])
def test_cupy_half_refuses_what_it_does_not_run(m: Meaning) -> None:
    """The 16-bit CuPy kernel has no per-element bounds or promotion: a 422 naming the numpy backend, not a guess."""
    from clipbridge.core.errors import BackendUnavailable
    from clipbridge.kernels.cupy import clip_cupy_half
    with pytest.raises(BackendUnavailable, match="numpy"):
        clip_cupy_half(m, None)
