"""The compiled float16/bfloat16 ScaleBias + clip (numba, optional: `[fast]`): clipbridge.kernels.scale_bias16's rules
in one pass, with the 16-bit conversions as integer code or, where clipbridge.kernels.scale_bias16.hardware_half() found
them identical on this host, as the hardware's."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np


@lru_cache(maxsize=1)
def bitcasts() -> tuple[Any, Any, Any, Any] | None:
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


@lru_cache(maxsize=1)
def _integer_conversions() -> tuple[Any, Any, Any]:
    """(float16 pattern -> float32, float32 -> float16 pattern, float32 rounded to bfloat16) as numba functions
    inlined into the kernels: the integer code of the module docstring's rules. Only called with numba present."""
    from numba import njit  # type: ignore[import-not-found]

    casts = bitcasts()
    assert casts is not None
    as_f32, as_i32 = casts[0], casts[1]
    i32, f32 = np.int32, np.float32

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

    return f32_of_f16, f16_of_f32, bf16_round


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
    casts = bitcasts()
    if casts is None:
        return None
    from numba import njit, prange  # type: ignore[import-not-found]

    as_f32, as_i32, hw_f32_of_f16, hw_f16_of_f32 = casts
    i32, f32, f64 = np.int32, np.float32, np.float64
    half_in = not bf16

    f32_of_f16, f16_of_f32, bf16_round = _integer_conversions()
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
