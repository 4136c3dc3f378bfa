"""float16/bfloat16 ScaleBias + clip in registers (app/clipbridge/kernels/scale_bias16.py): every one of the 65,536 patterns, bit for
bit, against a widening oracle that shares no code with the kernel or with evaluate().

The oracle (`_oracle`) reads each pattern as a Python float (exact), computes x*scale+bias with each rounding
the rule names done by exact rational arithmetic (clipbridge.core.exact.round_to_format: nearest even, IEEE overflow), and
writes the result back as a pattern with NumPy's/ml_dtypes' own conversion of a representable value. NaN outputs
are compared as patterns where the rules fix them (a NaN input keeps its sign and its payload, quieted; float16
keeps the top ten payload bits, bfloat16 only the sign) and as "some NaN" where the arithmetic creates one (its
pattern is the FPU's). Each case runs the compiled kernel with the hardware float16 conversions (where
hardware_half() accepted them), with the integer conversions, and the NumPy pipeline the table path uses.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np
import pytest

from clipbridge.core import exact
from clipbridge.kernels import numpy as kernels, scale_bias16 as kernels_sb16
from clipbridge.core.dtypes import BFLOAT16, FLOAT16, DType
from clipbridge.kernels.half import half_plan, steps_numpy
from clipbridge.core.meaning import Bound, Meaning, NanInput, Order, ScaleBias

PATTERNS = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
FMT = {"float16": exact.FLOAT16, "bfloat16": exact.BFLOAT16, "float32": exact.FLOAT32, "float64": exact.FLOAT64}

SCALE_BIAS = [
    pytest.param(ScaleBias(0.5, 1.0), id="exact"),
    pytest.param(ScaleBias(3.0000001, -0.1), id="inexact-two-roundings"),
    pytest.param(ScaleBias(-3.0, 0.25, fused=True), id="fused-one-rounding"),
    pytest.param(ScaleBias(0.1, 0.3, fused=True), id="fused-inexact"),
    pytest.param(ScaleBias(1e-3, 70000.0), id="overflow-to-inf"),
    pytest.param(ScaleBias(7.1e-6, -6.2e-8), id="into-subnormals"),
    pytest.param(ScaleBias(0.0, -0.0), id="zero-scale-negative-zero-bias"),
    pytest.param(ScaleBias(0.1, -0.0, precision=FLOAT16), id="float16-precision"),
    pytest.param(ScaleBias(1.7, 3.3e-3, precision=FLOAT16), id="float16-precision-inexact"),
]


def _value(dt: DType, bits: int) -> float:
    return float(np.asarray(bits, dtype=np.uint16).view(dt.np_dtype))


def _round(v: Fraction | float, fmt: str) -> float:
    """The exact value rounded once to `fmt` (clipbridge.core.exact: not the code under test); zeros keep their sign."""
    if isinstance(v, float) and not math.isfinite(v):
        return v
    r = exact.round_to_format(v, FMT[fmt])
    return math.copysign(0.0, v) if r == 0 and isinstance(v, float) else r


def _finite(*vs: float) -> bool:
    return all(math.isfinite(v) for v in vs)


def _mul(x: float, s: float, fmt: str) -> float:
    """x*s rounded once to `fmt`; a zero product has the sign of the signs' product (IEEE 754 §6.3)."""
    if not _finite(x, s):
        with np.errstate(all="ignore"):
            return float(np.float64(x) * np.float64(s))  # inf*0 is NaN, inf*y is +-inf
    r = _round(Fraction(x) * Fraction(s), fmt)
    return math.copysign(0.0, math.copysign(1.0, x) * math.copysign(1.0, s)) if r == 0 else r


def _add(p: float, b: float, fmt: str) -> float:
    """p+b rounded once to `fmt`; two zeros add as IEEE says (-0 only from -0 + -0), an exact zero sum is +0."""
    if not _finite(p, b) or (p == 0 and b == 0):
        with np.errstate(all="ignore"):
            return float(np.float64(p) + np.float64(b))
    return _round(Fraction(p) + Fraction(b), fmt)


@functools.lru_cache(maxsize=None)
def _oracle(dt_name: str, sb: ScaleBias) -> np.ndarray:
    """The ScaleBias output pattern of every input pattern; -1 where any NaN is right (the FPU makes it)."""
    dt = FLOAT16 if dt_name == "float16" else BFLOAT16
    prec = sb.precision.name
    s = _round(sb.scale, prec) if not sb.fused else sb.scale
    b = _round(sb.bias, prec) if not sb.fused else sb.bias
    out = np.empty(1 << 16, dtype=np.int64)
    for bits in range(1 << 16):
        x = _value(dt, bits)
        if math.isnan(x):  # NaN input: its sign and payload, quieted, through the output type
            f32 = (0x7F800000 | 0x400000 | ((bits & 0x3FF) << 13)) if dt_name == "float16" else \
                ((bits & 0x7FFF) << 16) | 0x400000
            sign = bits & 0x8000
            out[bits] = sign | (0x7C00 | ((f32 >> 13) & 0x3FF) if dt_name == "float16" else 0x7FC0)
            continue
        xp = _round(x, prec)
        if sb.fused:  # NumPy's fused step: x*s+b in doubles (two double roundings), then rounded once to prec
            y = _round(_add(_mul(xp, s, "float64"), b, "float64"), prec)
        else:
            y = _add(_mul(xp, s, prec), b, prec)
        if math.isnan(y):
            out[bits] = -1
            continue
        y = _round(y, dt_name)
        out[bits] = int(np.asarray(y, dtype=dt.np_dtype).view(np.uint16))
    return out


def _agree(got: np.ndarray, want: np.ndarray, dt: DType) -> np.ndarray:
    """Pattern equality; where the oracle says "any NaN" (-1), any NaN pattern."""
    anynan = want < 0
    isnan = (got & 0x7FFF) > (0x7C00 if dt is FLOAT16 else 0x7F80)
    return np.where(anynan, isnan, got.astype(np.int64) == want)


@pytest.fixture(params=["hardware-half", "integer-half"])
def conversions(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "integer-half":
        monkeypatch.setattr(kernels_sb16, "hardware_half", lambda: False)
    elif not kernels_sb16.hardware_half():
        pytest.skip("the JIT's float16 conversions were not accepted on this host (hardware_half() is False)")
    return str(request.param)


@pytest.mark.parametrize("sb", SCALE_BIAS)
@pytest.mark.parametrize("dt", [FLOAT16, BFLOAT16], ids=["f16", "bf16"])
def test_scale_bias_pipeline_every_pattern(dt: DType, sb: ScaleBias) -> None:
    """The NumPy pipeline (tables, arrays without numba) against the exact oracle."""
    got = kernels_sb16.scale_bias_bits(dt.name, sb, PATTERNS)
    ok = _agree(got, _oracle(dt.name, sb), dt)
    assert ok.all(), f"{(~ok).sum()} patterns differ, first {np.flatnonzero(~ok)[0]:#06x}"


@pytest.mark.parametrize("order", [Order.MAX_WINS, Order.MIN_WINS])
@pytest.mark.parametrize("sb", SCALE_BIAS)
@pytest.mark.parametrize("dt", [FLOAT16, BFLOAT16], ids=["f16", "bf16"])
def test_compiled_scale_bias_clip_every_pattern(dt: DType, sb: ScaleBias, order: Order, conversions: str) -> None:
    """kernels.clip_numpy on a ScaleBias meaning, past the compiled threshold: the oracle's ScaleBias, then the
    key steps (clipbridge.kernels.half.steps_numpy, checked on every pattern by tests/kernels/test_kernels_half.py)."""
    if kernels.half_kernel_numba() is None:
        pytest.skip("numba is not installed")
    for lo, hi in [(-math.inf, math.inf), (0.0, 6.0), (-0.0, 0.0), (6.0, -2.0), (math.nan, 1.0)]:
        m = Meaning("directml", "CLIP", dt, Bound(lo), Bound(hi), order=order, scale_bias=sb)
        x = np.concatenate([PATTERNS] * 2 + [PATTERNS[:5]]).view(dt.np_dtype)
        got = kernels.clip_numpy(m, x).view(np.uint16)
        p = kernels.plan(m)
        hp = half_plan(dt.np_dtype, p.lo, p.hi, p.max_wins, p.all_nan, p.nan_out)
        sbo = _oracle(dt.name, sb)
        want = steps_numpy(hp, np.where(sbo < 0, 0x7E00 if dt is FLOAT16 else 0x7FC0, sbo).astype(np.uint16))
        want = np.where(sbo < 0, -1, want.astype(np.int64))
        for r in range(2):
            ok = _agree(got[r << 16:(r + 1) << 16], want, dt)
            assert ok.all(), f"{m.describe()}: {(~ok).sum()} differ, first {np.flatnonzero(~ok)[0]:#06x}"


@pytest.mark.parametrize("rule", [NanInput.TO_LOWER, NanInput.TO_ZERO, NanInput.TO_UPPER])
@pytest.mark.parametrize("dt", [FLOAT16, BFLOAT16], ids=["f16", "bf16"])
def test_compiled_nan_input_rules(dt: DType, rule: NanInput, conversions: str) -> None:
    """A NaN made by x*scale+bias (inf*0) or given becomes the rule's one output, computed without evaluate()."""
    if kernels.half_kernel_numba() is None:
        pytest.skip("numba is not installed")
    m = Meaning("directml", "CLIP", dt, Bound(-2.0), Bound(6.0), nan_input=rule, scale_bias=ScaleBias(0.0, -0.0))
    x = np.concatenate([PATTERNS] * 3).view(dt.np_dtype)
    got = kernels.clip_numpy(m, x).view(np.uint16)
    fill = {NanInput.TO_LOWER: -2.0, NanInput.TO_UPPER: 6.0, NanInput.TO_ZERO: 0.0}[rule]
    v = x.astype(np.float64)
    nan = np.isnan(v * 0.0)  # inf*0 and NaN inputs: the fill
    # 0*x - 0 is a zero with x's sign (x*0 carries it, and -0 + -0 is -0); the fill keeps its own.
    want = np.where(nan, fill, np.copysign(0.0, v))
    out = got.view(dt.np_dtype).astype(np.float64)
    assert np.array_equal(out, want)
    assert np.array_equal(np.signbit(out), np.signbit(want))


def test_integer_float16_rounding_on_every_midpoint() -> None:
    """The integer float32 -> float16 rounding (the kernel without hardware conversions, and what hardware_half()
    holds the hardware to) against NumPy's own cast at every tie between neighbouring float16 values, one float32
    ulp either side of it, and past the overflow threshold."""
    f = PATTERNS.view(np.float16).astype(np.float64)
    f = np.sort(f[np.isfinite(f)])
    mids = ((f[:-1] + f[1:]) / 2).astype(np.float32)  # exact: float32 holds every float16 midpoint
    u = mids.view(np.uint32)
    probe = np.concatenate([u, u + 1, u - 1]).view(np.float32)
    probe = np.concatenate([probe, np.float32([65519.996, 65520.0, 65520.004, 1e38, -1e38, 2.0 ** -25, -2.0 ** -25])])
    with np.errstate(all="ignore"):
        assert np.array_equal(kernels_sb16._f16_bits_of_f32(probe), probe.astype(np.float16).view(np.uint16))
