"""float16/bfloat16 ScaleBias + clip in registers: x*scale+bias in float32 (or float64 when fused), rounded to
the tensor type, then clipped on its float32 image; one compiled pass at about copy speed.

The conversions between the 16-bit patterns and float32 are written out here as integer code, so each rounding
is the one its rule names on every host; float16's may instead be the hardware's where hardware_half() finds
them identical on this host:
- float16 -> float32 and bfloat16 -> float32 are exact (a bfloat16 is the top half of a float32);
- float32 -> float16 rounds to nearest even with IEEE overflow and subnormals (IEEE 754 §4.3.1), and keeps a NaN's
  top ten payload bits (NumPy's npy_floatbits_to_halfbits: a payload that would vanish becomes 1);
- float32 -> bfloat16 rounds to nearest even; a NaN becomes the quiet NaN of its sign (ml_dtypes' conversion);
- float16 arithmetic (a ScaleBias computed in float16) is float32 arithmetic rounded to float16 after each
  operation, as NumPy's float16 loops compute it; fused is x*scale+bias in float64 rounded once to float32.
The NaNs the arithmetic itself creates (inf*0) are the host's, as NumPy's are: the same instruction makes them.
`scale_bias_bits` is the same pipeline in NumPy (the path without numba, and the table for other precisions);
clipbridge.kernels.scale_bias16_jit compiles it.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import ml_dtypes
import numpy as np

from clipbridge.core.meaning import ScaleBias
from clipbridge.kernels.scale_bias16_jit import bitcasts, sb16_kernel

U16 = np.dtype(np.uint16)
BF16 = np.dtype(ml_dtypes.bfloat16)


def compiled_precision(sb: ScaleBias) -> bool:
    """True when the compiled kernel computes this ScaleBias: float32 (two roundings or fused) or float16 (two)."""
    return sb.precision.name == "float32" or (sb.precision.name == "float16" and not sb.fused)


def _f32_of_f16_bits(h: np.ndarray) -> np.ndarray:
    """float16 patterns (uint16) as float32 values, exactly."""
    h = h.astype(np.uint32)
    sign = (h & 0x8000) << 16
    e = (h >> 10) & 0x1F
    m = h & 0x3FF
    normal = sign | ((e + 112) << 23) | (m << 13)
    special = sign | 0x7F800000 | (m << 13)
    sub = (m.astype(np.float32) * np.float32(2.0 ** -24)).view(np.uint32) | sign
    return np.where(e == 31, special, np.where(e == 0, sub, normal)).astype(np.uint32).view(np.float32)


def _f16_bits_of_f32(f: np.ndarray) -> np.ndarray:
    """float32 values rounded to float16 patterns: nearest even, overflow to inf, subnormals, NaN payload kept."""
    b = np.ascontiguousarray(f, dtype=np.float32).view(np.uint32).astype(np.int64)
    sign = (b >> 16) & 0x8000
    a = b & 0x7FFFFFFF
    nan = 0x7C00 | ((a >> 13) & 0x3FF)
    nan = np.where(nan == 0x7C00, 0x7C01, nan)
    r = a - 0x38000000
    normal = (r + 0xFFF + ((r >> 13) & 1)) >> 13
    mant = (a & 0x7FFFFF) | 0x800000
    s = np.clip(126 - (a >> 23), 1, 25)
    q = mant >> s
    rem = mant & ((1 << s) - 1)
    half = 1 << (s - 1)
    sub = q + ((rem > half) | ((rem == half) & ((q & 1) == 1)))
    out = np.where(a > 0x7F800000, nan, np.where(a >= 0x477FF000, 0x7C00, np.where(a >= 0x38800000, normal, sub)))
    return (out | sign).astype(U16)


def _bf16_bits_of_f32(f: np.ndarray) -> np.ndarray:
    """float32 values rounded to bfloat16 patterns: nearest even; a NaN is the quiet NaN of its sign."""
    b = np.ascontiguousarray(f, dtype=np.float32).view(np.uint32).astype(np.int64)
    rounded = (b + 0x7FFF + ((b >> 16) & 1)) >> 16
    nan = ((b >> 16) & 0x8000) | 0x7FC0
    return np.where((b & 0x7FFFFFFF) > 0x7F800000, nan, rounded & 0xFFFF).astype(U16)


def _round16(dt_name: str, y: np.ndarray) -> np.ndarray:
    return _f16_bits_of_f32(y) if dt_name == "float16" else _bf16_bits_of_f32(y)


def _as_f32(dt_name: str, bits: np.ndarray) -> np.ndarray:
    if dt_name == "float16":
        return _f32_of_f16_bits(bits)
    return (bits.astype(np.uint32) << 16).view(np.float32)


def scale_bias_bits(dt_name: str, sb: ScaleBias, bits: np.ndarray) -> np.ndarray:
    """x*scale+bias on float16/bfloat16 patterns (uint16 in, uint16 out) by the rules in the module docstring."""
    x = _as_f32(dt_name, bits)
    p = sb.precision.name
    with np.errstate(all="ignore"):  # overflow to inf and NaN are values here
        if p == "float16":
            xp = _f32_of_f16_bits(_f16_bits_of_f32(x))
            s, b = half_constants(sb)
            if sb.fused:  # one rounding from float64 to float16, which NumPy does directly
                y = (xp.astype(np.float64) * sb.scale + sb.bias).astype(np.float16).astype(np.float32)
            else:
                y = _f32_of_f16_bits(_f16_bits_of_f32(xp * s)) + b
                y = _f32_of_f16_bits(_f16_bits_of_f32(y))
        elif p == "float32":
            if sb.fused:
                y = (x.astype(np.float64) * sb.scale + sb.bias).astype(np.float32)
            else:
                y = x * np.float32(sb.scale) + np.float32(sb.bias)
        else:  # float64 or bfloat16 (no dialect builds them): the same two steps in that precision
            pd = sb.precision.np_dtype
            xs = x.astype(pd)
            y = (xs.astype(np.float64) * sb.scale + sb.bias).astype(pd) if sb.fused else \
                (xs * pd.type(sb.scale)).astype(pd) + pd.type(sb.bias)
            return y.astype(np.float16 if dt_name == "float16" else BF16).view(U16)
    return _round16(dt_name, y)


def half_constants(sb: ScaleBias) -> tuple[np.float32, np.float32]:
    """A float16-precision ScaleBias's scale and bias: each double rounded once to float16 (as NumPy's
    np.float16(v) does), held as float32."""
    return np.float32(np.float16(sb.scale)), np.float32(np.float16(sb.bias))


def clip_scale_bias_16(dt_name: str, sb: ScaleBias, lo: float, hi: float, max_wins: bool, nan_out: float | None,
                       xb: np.ndarray, ob: np.ndarray, lock: Any) -> bool:
    """ScaleBias + clip of flat uint16 patterns `xb` into `ob` in one compiled pass; False where the compiled
    kernel does not apply (no numba, a precision it does not compute). `lock`: clipbridge.kernels.numba.NUMBA_LOCK."""
    if not compiled_precision(sb):
        return False
    precision = "f16" if sb.precision.name == "float16" else ("f32-fused" if sb.fused else "f32")
    kernel = sb16_kernel(dt_name == "bfloat16", precision, max_wins, nan_out is not None, hardware_half())
    if kernel is None:
        return False
    s, b = half_constants(sb) if precision == "f16" else (np.float32(sb.scale), np.float32(sb.bias))
    nanv = np.float32(nan_out if nan_out is not None else 0.0)
    with lock:
        kernel(xb, ob, s, b, np.float64(sb.scale), np.float64(sb.bias), np.float32(lo), np.float32(hi), nanv)
    return True


@lru_cache(maxsize=1)
def hardware_half() -> bool:
    """True when the JIT's float16 conversions compile here and agree with the integer rules on every float16
    pattern and on float32 values at each rounding boundary (ties, overflow, subnormals, NaN payloads)."""
    casts = bitcasts()
    if casts is None:
        return False
    from numba import njit  # type: ignore[import-not-found]

    to_f32, to_f16 = casts[2], casts[3]

    @njit(cache=False)
    def run(h, f, out_f, out_h):  # pragma: no cover - compiled
        for i in range(h.size):
            out_f[i] = to_f32(np.int32(h[i]))
        for i in range(f.size):
            out_h[i] = to_f16(f[i])

    pats = np.arange(1 << 16, dtype=np.uint32).astype(U16)
    f32_bits = _f32_of_f16_bits(pats).view(np.uint32).astype(np.int64)
    # float32 values at and around each float16 value and each midpoint (ties), and a spread of others.
    near = f32_bits[:, None] + np.array([-4097, -4096, -4095, -1, 0, 1, 4095, 4096, 4097])[None, :]
    spread = np.random.default_rng(0).integers(0, 1 << 32, 1 << 16)
    probe = np.unique(np.concatenate([near.ravel(), spread]) & 0xFFFFFFFF).astype(np.uint32)
    out_f, out_h = np.empty(pats.size, np.float32), np.empty(probe.size, np.int32)
    try:
        run(pats, probe.view(np.float32), out_f, out_h)
    except Exception:  # noqa: BLE001 - any compile or link failure means: use the integer code
        return False
    # Signaling NaNs are left out: the kernel's arithmetic quiets every NaN before it converts one back.
    quiet_h = ((pats & 0x7C00) != 0x7C00) | ((pats & 0x0200) != 0) | ((pats & 0x3FF) == 0)
    quiet_f = ((probe & 0x7F800000) != 0x7F800000) | ((probe & 0x400000) != 0) | ((probe & 0x7FFFFF) == 0)
    same_f = np.array_equal(out_f.view(np.uint32)[quiet_h], _f32_of_f16_bits(pats).view(np.uint32)[quiet_h])
    same_h = np.array_equal(out_h[quiet_f].astype(U16), _f16_bits_of_f32(probe.view(np.float32))[quiet_f])
    return bool(same_f and same_h)
