"""StableHLO's engine: jax.lax.clamp on XLA's CPU backend ("jax"), and the emitted MLIR text compiled and run by
XLA (run_mlir, a check that the artifact runs). jax is optional: imported inside the functions."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from clipbridge.core.dtypes import DType
from clipbridge.engines import config as engine_config, extras as engines


def run_jax(sem: Any, x: np.ndarray) -> np.ndarray:
    """jax.lax.clamp (XLA CPU) on the meaning's bounds: StableHLO's own engine."""
    try:
        import jax  # noqa: F401
    except ImportError:
        raise engines.missing("jax") from None
    m = sem.meaning
    if m.has_tensor_bounds:
        # clamp takes min/max of rank 0 or x's shape: the probes and the bounds are broadcast to one shape first.
        lo = m.lower_tensor.array(m.dtype) if m.lower_tensor else m.dtype.array([m.lo])[0]
        hi = m.upper_tensor.array(m.dtype) if m.upper_tensor else m.dtype.array([m.hi])[0]
        full = np.broadcast_shapes(np.shape(lo), np.shape(x), np.shape(hi))
        lo, hi = (np.broadcast_to(b, full) if np.ndim(b) else b for b in (lo, hi))
        y = _jax_clamp(m.dtype)(lo, np.broadcast_to(x, full), hi)
    else:
        y = _jax_clamp(m.dtype)(m.dtype.array([m.lo])[0], x, m.dtype.array([m.hi])[0])
    # XLA CPU flushes subnormals and has no flag to stop it: reported with the run (NOTE_FTZ says what it changes).
    engine_config.record_run(engine_config.jax_settings(getattr(sem, "precision", "model")))
    return y


@lru_cache(maxsize=16)
def _jax_clamp(dt: DType) -> Any:
    """A jitted clamp for one element type on the CPU (64-bit types need jax's x64 mode)."""
    import jax
    if dt.bits == 64:
        jax.config.update("jax_enable_x64", True)  # else jax silently computes f64/i64/u64 in 32 bits
    cpu = jax.devices("cpu")[0]
    fn = jax.jit(jax.lax.clamp)

    def clamp(lo: Any, x: Any, hi: Any) -> np.ndarray:
        args = [jax.device_put(np.asarray(a, dtype=dt.np_dtype), cpu) for a in (lo, x, hi)]
        return np.asarray(fn(*args))
    return clamp


def run_mlir(text: str, x: np.ndarray) -> np.ndarray:
    """The emitted MLIR text itself compiled by XLA's CPU backend and run on `x` (its shape must be static).

    Uses jax's internal backend API (jax._src): a check that the artifact runs, not a public backend."""
    import jax
    from jax._src import xla_bridge
    from jax._src.lib import xla_client as xc
    if x.dtype.itemsize == 8:
        jax.config.update("jax_enable_x64", True)
    backend = xla_bridge.get_backend("cpu")
    devices = backend.local_devices()[:1]
    exe = backend.compile_and_load(text, xc.DeviceList(tuple(devices)), xc.CompileOptions())
    return np.asarray(exe.execute([jax.device_put(x, devices[0])])[0])
