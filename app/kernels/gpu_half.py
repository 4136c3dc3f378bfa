"""float16/bfloat16 clip on CuPy: the plan from app.kernels.cpu, the 16-bit kernels from app.kernels.half.

A module of its own because it needs both: app.kernels.cpu imports app.kernels.half, so the one function that
joins them lives above the two (imported by app.service.execute, the GPU tests and bench/gpu_kernel.py)."""

from __future__ import annotations

from typing import Any

from app.core.errors import BackendUnavailable
from app.kernels.cpu import plan
from app.kernels.half import _device_table, _sb_key, clip_half_cupy, half_plan


def clip_cupy_half(m: Any, x: Any, reading: str | None = None) -> Any:
    """float16/bfloat16 on CuPy: `x` a device uint16 array of m's patterns; returns the output patterns."""
    if m.has_tensor_bounds or m.out_dtype != m.dtype:
        raise BackendUnavailable("backend 'cupy' does not run per-element bounds or promotion of 16-bit floats "
                                 "yet; use backend 'numpy'", "backend")
    import cupy as cp  # type: ignore[import-not-found]

    p = plan(m, reading)
    hp = half_plan(m.dtype.np_dtype, p.lo, p.hi, p.max_wins, p.all_nan, p.nan_out)
    lut = None if m.scale_bias is None else _device_table(hp, m.dtype.name, _sb_key(m.scale_bias),
                                                          cp.cuda.Device().id)
    return clip_half_cupy(hp, lut, x)
