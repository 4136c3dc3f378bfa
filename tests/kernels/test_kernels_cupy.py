"""The one-pass CuPy clip (app/clipbridge/kernels/cupy.py): NumPy's own maximum/minimum are the oracle, bit for bit.

Where CuPy and a CUDA device exist, every variant (order x NaN rule x ScaleBias) runs on the device. Everywhere,
the CUDA body of each variant is also read line by line into NumPy (a ternary `c ? a : b` is np.where, __fmul_rn
and __fadd_rn are float32 multiply and add) and run on the same grid, so the selects are checked on every host.
"""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pytest

from clipbridge.kernels import cupy as kernels_cupy

SPECIALS = [math.nan, -math.nan, math.inf, -math.inf, 0.0, -0.0, 1e-45, -1e-45, 6.0, -2.0, 3.4e38, 0.5, 6.000001]
X32 = np.asarray(SPECIALS + list(np.linspace(-10, 10, 41)), dtype=np.float32)
VARIANTS = list(itertools.product([True, False], [True, False], [True, False]))


def _oracle(x: np.ndarray, lo: float, hi: float, max_wins: bool, nanv: float | None, sb: bool) -> np.ndarray:
    """np.maximum/np.minimum in the order (NaN propagates), the NaN-input rule as a select on the value."""
    t = x.dtype.type
    v = (x * np.float32(0.5) + np.float32(1.0)).astype(x.dtype) if sb else x
    lo_a, hi_a = t(lo), t(hi)
    r = np.minimum(hi_a, np.maximum(v, lo_a)) if max_wins else np.maximum(lo_a, np.minimum(v, hi_a))
    return np.where(np.isnan(v), t(nanv), r) if nanv is not None else r


def _emulate(source: str, x: np.ndarray, lo: float, hi: float, nanv: float, s: float, b: float) -> np.ndarray:
    """The CUDA body run as NumPy: `T n = c ? a : b;` becomes np.where, the _rn intrinsics float32 arithmetic."""
    t = x.dtype.type
    env = {"x": x, "lo": t(lo), "hi": t(hi), "nanv": t(nanv), "s": np.float32(s), "b": np.float32(b), "np": np,
           "__fmul_rn": lambda a, c: (a * c).astype(np.float32),
           "__fadd_rn": lambda a, c: (a + c).astype(np.float32)}
    for line in source.splitlines():
        m = re.fullmatch(r"(?:T )?(\w+) = \((.+)\) \? (\w+) : (\w+);", line)
        if m:
            name, cond, a, c = m.groups()
            env[name] = np.where(eval(cond, env), eval(a, env), eval(c, env))  # noqa: S307 - our own source text
            continue
        m = re.fullmatch(r"(?:T )?(\w+) = (.+);", line)
        assert m, line
        env[m.group(1)] = np.asarray(eval(m.group(2), env))  # noqa: S307
    return np.asarray(env["y"], dtype=x.dtype)


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(np.uint32 if a.dtype.itemsize == 4 else np.uint64)


BOUNDS = [(0.0, 6.0), (-0.0, 0.0), (0.0, -0.0), (6.0, -2.0), (-math.inf, math.inf), (1e-45, 1e-45)]


@pytest.mark.parametrize("max_wins,nan_fix,sb", VARIANTS)
def test_kernel_body_is_numpys_clip(max_wins: bool, nan_fix: bool, sb: bool) -> None:
    src = kernels_cupy.kernel_source(max_wins, nan_fix, sb)
    for lo, hi in BOUNDS:
        nanv = -2.0 if nan_fix else None
        want = _oracle(X32, lo, hi, max_wins, nanv, sb)
        got = _emulate(src, X32, lo, hi, nanv if nan_fix else 0.0, 0.5 if sb else 1.0, 1.0 if sb else 0.0)
        assert np.array_equal(_bits(got), _bits(want)), (lo, hi, max_wins, nan_fix, sb)  # NaN payloads too


def test_scale_bias_is_two_roundings_in_the_source() -> None:
    """x*s+b as separately rounded operations: NVRTC contracts a plain `x * s + b` into an FMA."""
    src = kernels_cupy.kernel_source(True, False, True)
    assert "__fadd_rn(__fmul_rn(x, s), b)" in src and "*" not in src


def _cupy():
    cp = pytest.importorskip("cupy")
    try:
        if cp.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("CuPy is installed but there is no CUDA device")
    except cp.cuda.runtime.CUDARuntimeError:
        pytest.skip("CuPy is installed but there is no CUDA device")
    return cp


@pytest.mark.parametrize("max_wins,nan_fix,sb", VARIANTS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_one_pass_on_the_device(dtype: type, max_wins: bool, nan_fix: bool, sb: bool) -> None:
    cp = _cupy()
    if sb and dtype is not np.float32:
        pytest.skip("a ScaleBias runs on float32 only")
    x = np.asarray(SPECIALS + list(np.linspace(-10, 10, 1001)), dtype=dtype)
    for lo, hi in BOUNDS:
        nanv = -2.0 if nan_fix else None
        got = cp.asnumpy(kernels_cupy.clip_one_pass(cp.asarray(x), lo, hi, max_wins, nanv,
                                                    0.5 if sb else None, 1.0 if sb else None))
        want = _oracle(x, lo, hi, max_wins, nanv, sb)
        fin = ~np.isnan(want)
        assert np.array_equal(np.isnan(got), ~fin) and np.array_equal(_bits(got)[fin], _bits(want)[fin])


def test_clip_xp_takes_the_one_pass_kernel_on_cupy() -> None:
    cp = _cupy()
    from clipbridge.kernels import array_api as kernels
    from clipbridge.core.dtypes import FLOAT32
    from clipbridge.core.meaning import Bound, Meaning, NanInput

    m = Meaning("onnx", "Clip-13", FLOAT32, Bound(0.0), Bound(6.0), nan_input=NanInput.TO_ZERO)
    got = cp.asnumpy(kernels.clip_xp(cp, m, cp.asarray(X32)))
    want = _oracle(X32, 0.0, 6.0, True, 0.0, False)
    assert np.array_equal(_bits(got), _bits(want))
