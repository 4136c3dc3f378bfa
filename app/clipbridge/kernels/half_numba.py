"""The float16/bfloat16 key steps of clipbridge.kernels.half compiled by numba (optional: `[fast]`): one pass at memory
speed, or one table gather per element for a ScaleBias the registers do not compute."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from clipbridge.kernels.half import HalfPlan, key


@lru_cache(maxsize=1)
def numba_kernels() -> tuple[Any, Any] | None:
    """(key-step clip factory, table gather) on uint16 arrays compiled by numba; None without numba.

    Branch-free selects on int16 lanes so LLVM vectorizes the loop; parallel over every core.
    """
    try:
        from numba import njit, prange  # type: ignore[import-not-found]
    except ImportError:
        return None

    block = 1 << 14

    @njit(parallel=True, fastmath=False, nogil=True, cache=False)
    def gather16(x, out, lut):  # pragma: no cover - compiled
        n = x.size
        for j in prange((n + block - 1) // block):
            for i in range(j * block, min(j * block + block, n)):
                out[i] = lut[x[i]]

    return _clip16, gather16


@lru_cache(maxsize=4)
def _clip16(max_wins: bool, nan_fix: bool) -> Any:
    """The key-step clip compiled for one order and NaN-input rule (both compile-time constants).

    On int16 lanes (sixteen per AVX2 register): the patterns viewed as int16, the key made signed by
    b ^ ((b >> 15) & 0x7FFF) (the unsigned key minus 0x8000). Every intermediate is cast back to int16, since numba
    widens untyped integer arithmetic to int64 (int32 lanes reached about 0.8x of np.copyto). Each step of
    half_plan keeps a range with one open end (max-wins: key >= a1, then key <= c2; min-wins: key <= a2, then
    key >= c1), so one compare per step; specializing on the order and the NaN rule took one thread from 0.69x
    to 0.94x of np.copyto (one thread, 16 Mi float16, best of 25 on the shared 2-core machine).
    """
    from numba import njit, prange  # type: ignore[import-not-found]

    i16 = np.int16

    @njit(parallel=True, fastmath=False, nogil=True, cache=False)
    def clip16(x, out, a, b1, kb1, c, b2, inf, nf):  # pragma: no cover - compiled
        for i in prange(x.size):
            b = x[i]
            k = i16(b ^ i16(i16(b >> i16(15)) & i16(0x7FFF)))
            if max_wins:
                keep = k >= a
                t = b if keep else b1
                kt = k if keep else kb1
                r = t if kt <= c else b2
            else:
                keep = k <= a
                t = b if keep else b1
                kt = k if keep else kb1
                r = t if kt >= c else b2
            # A NaN input passes through (payload included), or becomes the rule's one pattern nf.
            nv = nf if nan_fix else b
            out[i] = nv if i16(b & i16(0x7FFF)) > inf else r

    return clip16


def clip_half_numba(hp: HalfPlan, lut: np.ndarray | None, x: np.ndarray, out: np.ndarray) -> bool:
    """Run the compiled kernel on flat uint16 views; False when numba is absent (the caller falls back).

    The caller holds clipbridge.kernels.numba.NUMBA_LOCK: numba's workqueue layer aborts on concurrent launches.
    """
    k = numba_kernels()
    if k is None:
        return False
    clip16_for, gather16 = k
    if hp.all_nan:
        out.fill(hp.nan_bits)
    elif lut is not None:
        gather16(x, out, lut)
    else:
        a, c = (hp.a1, hp.c2) if hp.max_wins else (hp.a2, hp.c1)
        sk = [np.int16(v - 0x8000) for v in (a, key(hp.b1), c)]  # signed keys; bits as int16 two's complement
        sb = [np.uint16(v).view(np.int16) for v in (hp.b1, hp.b2, hp.nan_fill)]
        clip16_for(hp.max_wins, hp.nan_mask == 0)(x.view(np.int16), out.view(np.int16), sk[0], sb[0], sk[1], sk[2],
                                                 sb[1], np.int16(hp.inf), sb[2])
    return True
