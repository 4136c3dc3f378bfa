"""GPU kernel benchmark and exactness check (CuPy, CUDA device): clip against a device-to-device copy.

The one command that prints every GPU ratio. float32 runs clipbridge.kernels.array_api.clip_xp, which on CuPy takes the
one-pass elementwise kernel of clipbridge.kernels.cupy (one per order, NaN rule and ScaleBias; it was CuPy's maximum then
minimum, two passes, 0.28x of a device copy on an H100); float16 and bfloat16 run the one-pass uint16-pattern kernel
of clipbridge.kernels.half in clipbridge.kernels.cupy. Goal (issue 28): >= 0.8x a device copy for every dtype. Each figure is a ratio to cp.copyto of the same array in the same
run (best of N, synchronized). Then every one of the 65,536 patterns of each 16-bit type is clipped on the
device under a grid of bounds, orders and NaN rules and compared bit for bit with clipbridge.core.evaluate.evaluate().
"""

from __future__ import annotations

import argparse
import itertools
import math
import time

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--elements", type=int, default=256 * 1024 * 1024 + 3)  # + 3: a ragged tail
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    try:
        import cupy as cp  # type: ignore[import-not-found]
        if cp.cuda.runtime.getDeviceCount() < 1:
            raise RuntimeError("no CUDA device")
    except Exception as exc:  # noqa: BLE001 - ImportError, or CuPy without a device
        print(f"GPU ratios: not measured (no CuPy/CUDA device here: {exc})")
        return

    from clipbridge.core.dtypes import BFLOAT16, FLOAT16, FLOAT32
    from clipbridge.kernels.array_api import clip_xp
    from clipbridge.kernels.cupy import clip_cupy_half
    from clipbridge.core.evaluate import evaluate
    from clipbridge.core.meaning import Bound, Meaning, NanBound, Order, ScaleBias

    def timed(fn) -> float:
        fn()
        cp.cuda.Device().synchronize()
        best = math.inf
        for _ in range(args.repeat):
            t = time.perf_counter()
            fn()
            cp.cuda.Device().synchronize()
            best = min(best, time.perf_counter() - t)
        return best

    n = args.elements
    print(f"GPU: {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}, {n} elements, best of {args.repeat}")
    host = np.random.default_rng(0).normal(0, 5, n).astype(np.float32)
    for dt in (FLOAT32, FLOAT16, BFLOAT16):
        m = Meaning("onnx", "Clip-13", dt, Bound(0.0), Bound(6.0))
        sb = Meaning("directml", "CLIP", dt, Bound(0.0), Bound(6.0), scale_bias=ScaleBias(0.5, 1.0))
        h = host.astype(dt.np_dtype)
        if dt is FLOAT32:
            xd = cp.asarray(h)
            clip = lambda: clip_xp(cp, m, xd)  # noqa: E731
            fused = lambda: clip_xp(cp, sb, xd)  # noqa: E731
        else:
            xd = cp.asarray(h.view(np.uint16))
            clip = lambda: clip_cupy_half(m, xd)  # noqa: E731
            fused = lambda: clip_cupy_half(sb, xd)  # noqa: E731
        yd = cp.empty_like(xd)
        t_copy = timed(lambda: cp.copyto(yd, xd))
        t_clip, t_fused = timed(clip), timed(fused)
        gbs = 2 * xd.nbytes / 1e9
        print(f"  {dt.name:9s} copy {gbs / t_copy:7.0f} GB/s | clip {gbs / t_clip:7.0f} GB/s ratio {t_copy / t_clip:.2f}"
              f" | ScaleBias+clip {gbs / t_fused:7.0f} GB/s ratio {t_copy / t_fused:.2f}")
        del xd, yd
    cp.get_default_memory_pool().free_all_blocks()

    # Exactness over every pattern.
    for dt in (FLOAT16, BFLOAT16):
        pats = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
        x = pats.view(dt.np_dtype)
        grid = [float(np.asarray(v, dtype=dt.np_dtype)) for v in
                (0.0, -0.0, 6.0, -2.0, math.inf, -math.inf, math.nan, float(x[1]))]  # x[1]: smallest subnormal
        cases = bad = 0
        for lo, hi, order, nb, s in itertools.product(grid, grid, (Order.MAX_WINS, Order.MIN_WINS),
                                                      (NanBound.PROPAGATE, NanBound.IGNORE),
                                                      (None, ScaleBias(0.5, 1.0), ScaleBias(-3.0, 0.25, fused=True))):
            m = Meaning("x", "x", dt, Bound(lo), Bound(hi), order=order, nan_bound=nb, scale_bias=s)
            with np.errstate(all="ignore"):
                want = evaluate(m, x).view(np.uint16)
            xd = cp.asarray(pats)
            got = cp.asnumpy(clip_cupy_half(m, xd))
            tail = cp.asnumpy(clip_cupy_half(m, xd[3:4000]))  # unaligned, ragged: the one-per-thread kernel
            cases += 1
            bad += int(not (np.array_equal(got, want) and np.array_equal(tail, want[3:4000])))
        print(f"  {dt.name}: {cases} meanings x 65536 patterns, bit-exact with evaluate(): {cases - bad}/{cases}")
    # For reference: CuPy's own float16 maximum/minimum (clip_xp) against evaluate(), same grid, no ScaleBias.
    x = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    diff = 0
    for lo, hi in itertools.product((0.0, -0.0, 6.0, -math.inf), repeat=2):
        m = Meaning("x", "x", FLOAT16, Bound(lo), Bound(hi))
        want = evaluate(m, x).view(np.uint16)
        got = cp.asnumpy(clip_xp(cp, m, cp.asarray(x))).view(np.uint16)
        diff += int((got != want).sum())
    print(f"  clip_xp float16 (CuPy maximum/minimum) patterns differing in bits from evaluate(): {diff}")


if __name__ == "__main__":
    main()
