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
`scale_bias_bits` is the same pipeline in NumPy (the path without numba, and the table for other precisions).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import ml_dtypes
import numpy as np

from app.core.meaning import ScaleBias

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


@lru_cache(maxsize=1)
def _bitcasts() -> tuple[Any, Any, Any, Any] | None:
    """numba intrinsics: (int32 -> float32, float32 -> int32) bit casts, and the float16 pattern <-> float32
    conversions as LLVM's fpext/fptrunc of `half` (one vcvtph2ps/vcvtps2ph with F16C; elsewhere LLVM may need a
    runtime helper the JIT lacks, which hardware_half() detects); None without numba."""
    try:
        from llvmlite import ir  # type: ignore[import-not-found]
        from numba.core import types  # type: ignore[import-not-found]
        from numba.extending import intrinsic  # type: ignore[import-not-found]
    except ImportError:
        return None

    @intrinsic
    def as_f32(typingctx, x):  # pragma: no cover - compiled
        return types.float32(types.int32), lambda ctx, builder, sig, args: builder.bitcast(args[0], ir.FloatType())

    @intrinsic
    def as_i32(typingctx, x):  # pragma: no cover - compiled
        return types.int32(types.float32), lambda ctx, builder, sig, args: builder.bitcast(args[0], ir.IntType(32))

    @intrinsic
    def half_to_f32(typingctx, h):  # pragma: no cover - compiled; int32 pattern -> float32 (fpext half)
        def codegen(ctx, builder, sig, args):  # type: ignore[no-untyped-def]
            half = builder.bitcast(builder.trunc(args[0], ir.IntType(16)), ir.HalfType())
            return builder.fpext(half, ir.FloatType())
        return types.float32(types.int32), codegen

    @intrinsic
    def f32_to_half(typingctx, y):  # pragma: no cover - compiled; float32 -> int32 pattern (fptrunc, RNE)
        def codegen(ctx, builder, sig, args):  # type: ignore[no-untyped-def]
            half = builder.fptrunc(args[0], ir.HalfType())
            return builder.zext(builder.bitcast(half, ir.IntType(16)), ir.IntType(32))
        return types.int32(types.float32), codegen

    return as_f32, as_i32, half_to_f32, f32_to_half


@lru_cache(maxsize=32)
def sb16_kernel(bf16: bool, precision: str, max_wins: bool, nan_fix: bool, hw: bool = False) -> Any:
    """The compiled ScaleBias + clip for one input type, precision ("f32", "f32-fused" or "f16"), order and NaN
    rule (compile-time constants, so no select stays in the loop for them); None without numba.

    kernel(x, out, s, b, s64, b64, lo, hi, nanv) on uint16 arrays; lo, hi and nanv (the NaN-input rule's output)
    are float32 holding values of the tensor type. The clip runs on the float32 image of the rounded value with
    NumPy's maximum/minimum of that type, ties included (float16: the first argument wins; ml_dtypes' bfloat16: the
    second), so no key steps are needed; converting back is exact. `hw`: the float16 conversions are the
    hardware's (hardware_half() checked they round as the integer code does): with the integer code float16 ran at
    about 0.5x of np.copyto, with the hardware's at about 1.0x (same run, shared machine).
    Every step is a select on int32/float32 lanes, so LLVM vectorizes the loop; fastmath stays off so that x*s+b
    is two roundings (no FMA contraction).
    """
    casts = _bitcasts()
    if casts is None:
        return None
    from numba import njit, prange  # type: ignore[import-not-found]

    as_f32, as_i32, hw_f32_of_f16, hw_f16_of_f32 = casts
    i32, f32, f64 = np.int32, np.float32, np.float64
    half_in = not bf16

    # Every integer intermediate is cast back to int32: numba widens integer arithmetic to int64, which halves the
    # lanes per vector register.
    @njit(inline="always")
    def f32_of_f16(h):  # pragma: no cover - compiled
        sign = i32(i32(h & i32(0x8000)) << i32(16))
        em = i32(i32(h & i32(0x7FFF)) << i32(13))  # exponent and mantissa in float32 position
        e = i32(em & i32(0x0F800000))
        # Rebias the exponent (+112); inf/NaN get the all-ones exponent; a subnormal is normalized by the FPU:
        # its mantissa placed on 2^-14 (exponent 113) minus 2^-14 is exact.
        bits = i32(em + i32(0x38000000))
        bits = i32(bits + i32(0x38000000)) if e == i32(0x0F800000) else bits
        sub = as_f32(i32(em + i32(0x38800000))) - f32(6.103515625e-05)
        v = sub if e == i32(0) else as_f32(bits)
        return as_f32(i32(as_i32(v) | sign))

    @njit(inline="always")
    def f16_of_f32(y):  # pragma: no cover - compiled
        b = as_i32(y)
        sign = i32(i32(b >> i32(16)) & i32(0x8000))
        a = i32(b & i32(0x7FFFFFFF))
        nan = i32(i32(0x7C00) | i32(i32(a >> i32(13)) & i32(0x3FF)))
        nan = i32(0x7C01) if nan == i32(0x7C00) else nan
        r = i32(a - i32(0x38000000))
        normal = i32(i32(i32(r + i32(0xFFF)) + i32(i32(r >> i32(13)) & i32(1))) >> i32(13))
        # Below 2^-14: adding 0.5 makes the FPU round to the half's subnormal unit (2^-24), nearest even.
        sub = i32(as_i32(as_f32(a) + f32(0.5)) - i32(0x3F000000))
        o = sub if a < i32(0x38800000) else normal
        o = i32(0x7C00) if a >= i32(0x477FF000) else o
        return i32((nan if a > i32(0x7F800000) else o) | sign)

    @njit(inline="always")
    def bf16_round(y):  # pragma: no cover - compiled
        """y rounded to bfloat16 (nearest even; a NaN is the quiet NaN of its sign), as a float32. The carry of
        the rounding runs into the exponent (the largest finite values round to inf), never into the sign."""
        b = as_i32(y)
        sign = i32(b & i32(-2147483648))
        a = min(i32(b & i32(0x7FFFFFFF)), i32(0x7F800000))  # NaNs (selected away below) must not overflow
        r = i32(i32(i32(i32(a + i32(0x7FFF)) + i32(i32(a >> i32(16)) & i32(1))) & i32(-65536)) | sign)
        return as_f32(r if y == y else i32(sign | i32(0x7FC00000)))

    to_f32, to_f16 = (hw_f32_of_f16, hw_f16_of_f32) if hw else (f32_of_f16, f16_of_f32)

    @njit(parallel=True, fastmath=False, nogil=True, cache=False)
    def kernel(x, out, s, b, s64, b64, lo, hi, nanv):  # pragma: no cover - compiled
        for i in prange(x.size):
            h = i32(x[i])
            v = to_f32(h) if half_in else as_f32(i32(h << i32(16)))
            if precision == "f32":
                y = v * s + b
            elif precision == "f32-fused":
                y = f32(f64(v) * s64 + b64)
            else:  # float16 arithmetic: float32 operations, each rounded to float16
                vp = to_f32(to_f16(v))
                y = to_f32(to_f16(to_f32(to_f16(vp * s)) + b))
            # The value in the tensor type, held exactly as a float32 (a NaN here is quiet: arithmetic made it).
            w = to_f32(to_f16(y)) if half_in else bf16_round(y)
            if max_wins:  # minimum(hi, maximum(w, lo))
                if half_in:  # NumPy's float16 loops: a >= b || isnan(a) ? a : b (a tie keeps the first)
                    u = w if (w >= lo or w != w) else lo
                    r = hi if hi <= u else u
                else:  # ml_dtypes: isnan(a) || a > b ? a : b (a tie takes the second)
                    u = w if (w != w or w > lo) else lo
                    r = hi if hi < u else u
            else:  # maximum(lo, minimum(w, hi))
                if half_in:
                    u = w if (w <= hi or w != w) else hi
                    r = lo if lo >= u else u
                else:
                    u = w if (w != w or w < hi) else hi
                    r = lo if lo > u else u
            if nan_fix:
                r = nanv if w != w else r
            out[i] = to_f16(r) if half_in else i32(as_i32(r) >> i32(16))  # exact: r is a value of the type
    return kernel


def clip_scale_bias_16(dt_name: str, sb: ScaleBias, lo: float, hi: float, max_wins: bool, nan_out: float | None,
                       xb: np.ndarray, ob: np.ndarray, lock: Any) -> bool:
    """ScaleBias + clip of flat uint16 patterns `xb` into `ob` in one compiled pass; False where the compiled
    kernel does not apply (no numba, a precision it does not compute). `lock`: app.kernels.cpu' launch lock."""
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
    casts = _bitcasts()
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
