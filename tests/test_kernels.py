"""app/kernels.py: the chunked NumPy kernel and the numba fused kernel compute exactly evaluate()."""

from __future__ import annotations

import math

import numpy as np
import pytest

from app import kernels
from app.dtypes import FLOAT16, FLOAT32, FLOAT64, INT8, INT64, UINT16
from app.meaning import Bound, Meaning, NanBound, Order, ScaleBias, evaluate, same_outputs

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
def test_clip_numpy_equals_evaluate(m: Meaning, numba: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if not numba:
        monkeypatch.setattr(kernels, "fused_kernel_numba", lambda: None)
        monkeypatch.setattr(kernels, "clip_kernel_numba", lambda: None)
    x = _x(m.dtype)
    want = evaluate(m, x.copy())
    got = kernels.clip_numpy(m, x)
    assert got.dtype == want.dtype
    # The project's equality (app.meaning.same_outputs): equal values, NaN == NaN; the sign of a zero is not
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
        assert same_outputs(y, evaluate(m if i % 2 else plain, x.copy())).all()
