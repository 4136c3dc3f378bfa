"""Kernel benchmark, in process: clipbridge's NumPy kernel against onnxruntime's Clip on the same array.

64 Mi float32 elements. Targets (issue: execute): clip only >= 1.0x onnxruntime's Clip; clip with
ScaleBias >= 0.8x onnxruntime's plain Clip. Both sides write into a preallocated output (onnxruntime via
IO binding), best of N runs; the ratio is the figure to record. Also prints np.clip for reference and, where
a CUDA device and CuPy are present, the GPU kernel against a device-to-device copy of the same bytes.

Then the float16/bfloat16 rows (against np.copyto and onnxruntime's float16 Clip) and one row per Meaning variant
(NaN input to the lower bound / to +0, NaN bound read as 0 / as absent, per-element bounds of the input's shape,
promotion int32 -> float32) against onnxruntime's plain Clip of the same array. Each ratio is printed twice: best
time against best time, and the median over rounds of the paired ratio (steadier on a shared machine).
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def best(fn, repeat: int) -> float:
    out = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out = min(out, time.perf_counter() - t)
    return out


ROUNDS: list[list[float]] = []  # every time of the last interleaved() call, per function


def interleaved(fns, repeat: int) -> list[float]:
    """Best time of each function over `repeat` rounds, each round running every function once."""
    out = [float("inf")] * len(fns)
    ROUNDS[:] = [[] for _ in fns]
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            t = time.perf_counter()
            fn()
            d = time.perf_counter() - t
            ROUNDS[i].append(d)
            out[i] = min(out[i], d)
    return out


def paired(anchor: int, i: int) -> float:
    """The median over rounds of anchor time / contender time, each pair timed back to back in one round: on a
    machine whose load swings, steadier than the ratio of the two best times."""
    return float(np.median(np.asarray(ROUNDS[anchor]) / np.asarray(ROUNDS[i])))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--elements", type=int, default=64 * 1024 * 1024)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--only-half", action="store_true", help="only the float16/bfloat16 rows")
    ap.add_argument("--only-variants", action="store_true", help="only the Meaning-variant rows")
    args = ap.parse_args()
    if args.only_half:
        half_rows(args.elements, args.repeat)
        return
    if args.only_variants:
        variant_rows(args.elements, args.repeat)
        return
    import onnxruntime as ort
    from onnx import helper, numpy_helper

    from clipbridge.core.dtypes import FLOAT32
    from clipbridge.kernels.numpy import clip_numpy
    from clipbridge.core.meaning import Bound, Meaning, ScaleBias

    n = args.elements
    x = np.random.default_rng(0).normal(0, 5, n).astype(np.float32)
    out = np.empty_like(x)
    out.fill(0)
    moved = 2 * x.nbytes  # read + write

    g = helper.make_graph([helper.make_node("Clip", ["x", "lo", "hi"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", 1, [n])], [helper.make_tensor_value_info("y", 1, [n])],
                          [numpy_helper.from_array(np.array(0, np.float32), "lo"),
                           numpy_helper.from_array(np.array(6, np.float32), "hi")])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=7)
    so = ort.SessionOptions()
    # Without this, onnxruntime's pool spins on both cores after each run and slows whatever is timed next.
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    io = sess.io_binding()
    io.bind_ortvalue_input("x", ort.OrtValue.ortvalue_from_numpy(x))
    ort_out = np.empty_like(x)
    ort_out.fill(0)
    io.bind_ortvalue_output("y", ort.OrtValue.ortvalue_from_numpy(ort_out))
    sess.run_with_iobinding(io)

    plain = Meaning("onnx", "Clip-13", FLOAT32, Bound(0.0), Bound(6.0))
    fused = Meaning("directml", "CLIP", FLOAT32, Bound(0.0), Bound(6.0), scale_bias=ScaleBias(0.5, 1.0))
    clip_numpy(fused, x, out=out)  # compile the numba kernel (when installed) outside the timings
    # Interleaved: each repetition runs every contender once, so a change in machine load hits all of them.
    t_ort, t_np, t_ours, t_fused = interleaved([
        lambda: sess.run_with_iobinding(io),
        lambda: np.clip(x, np.float32(0), np.float32(6), out=out),
        lambda: clip_numpy(plain, x, out=out),
        lambda: clip_numpy(fused, x, out=out)], args.repeat)
    pairs = (paired(0, 2), paired(0, 3))
    # The other like-for-like pairing: each side allocates its output, as sess.run() and a plain call do.
    t_ort_run, t_ours_alloc, t_fused_alloc = interleaved([
        lambda: sess.run(None, {"x": x}), lambda: clip_numpy(plain, x), lambda: clip_numpy(fused, x)], args.repeat)
    assert np.array_equal(ort_out, clip_numpy(plain, x))
    from clipbridge.kernels.numba import fused_kernel_numba
    from clipbridge.core.evaluate import evaluate
    probe = x[: 1 << 20]
    assert np.array_equal(clip_numpy(fused, probe), evaluate(fused, probe), equal_nan=True)
    fused_path = "numba, one pass" if fused_kernel_numba() is not None else "numpy, three passes per chunk"

    gbs = lambda t: moved / t / 1e9  # noqa: E731
    print(f"float32, {n} elements, GB/s = (read + write) / time, best of {args.repeat}")
    print("preallocated output (onnxruntime IO binding):")
    print(f"  onnxruntime Clip (anchor)     {gbs(t_ort):6.1f} GB/s")
    print(f"  np.clip, one thread           {gbs(t_np):6.1f} GB/s   ratio {t_ort / t_np:.2f}")
    print(f"  clipbridge clip               {gbs(t_ours):6.1f} GB/s   ratio {t_ort / t_ours:.2f}, median paired "
          f"{pairs[0]:.2f}  (target >= 1.00)")
    print(f"  clipbridge ScaleBias + clip   {gbs(t_fused):6.1f} GB/s   ratio {t_ort / t_fused:.2f}, median paired "
          f"{pairs[1]:.2f}  (target >= 0.80; {fused_path})")
    print("output allocated per call (onnxruntime sess.run):")
    print(f"  onnxruntime Clip (anchor)     {gbs(t_ort_run):6.1f} GB/s")
    print(f"  clipbridge clip               {gbs(t_ours_alloc):6.1f} GB/s   ratio {t_ort_run / t_ours_alloc:.2f}"
          "  (target >= 1.00)")
    print(f"  clipbridge ScaleBias + clip   {gbs(t_fused_alloc):6.1f} GB/s   ratio {t_ort_run / t_fused_alloc:.2f}"
          "  (target >= 0.80)")
    half_rows(n, args.repeat)
    variant_rows(n, args.repeat)
    try:
        import cupy as cp
        if cp.cuda.runtime.getDeviceCount() < 1:
            raise RuntimeError
    except Exception:
        print("  GPU: no CuPy/CUDA device here: unmeasured")
        return
    from clipbridge.kernels.array_api import clip_xp
    xd = cp.asarray(x)
    yd = cp.empty_like(xd)

    def gpu_clip() -> None:
        clip_xp(cp, plain, xd)
        cp.cuda.Device().synchronize()

    def gpu_copy() -> None:
        cp.copyto(yd, xd)
        cp.cuda.Device().synchronize()

    gpu_clip(), gpu_copy()
    t_copy, t_gpu = best(gpu_copy, args.repeat), best(gpu_clip, args.repeat)
    print(f"  GPU device-to-device copy     {gbs(t_copy):6.1f} GB/s")
    print(f"  GPU clipbridge clip           {gbs(t_gpu):6.1f} GB/s   ratio {t_copy / t_gpu:.2f}  (target >= 0.80)")


def _ort_clip(ort, dtype: np.dtype, onnx_type: int, x: np.ndarray, out: np.ndarray):
    """onnxruntime's Clip-13 of x's dtype into `out` (IO binding); None where the CPU provider has no such kernel."""
    from onnx import helper, numpy_helper
    n = x.size
    lo, hi = (numpy_helper.from_array(np.array(v, dtype), name) for v, name in ((0, "lo"), (6, "hi")))
    g = helper.make_graph([helper.make_node("Clip", ["x", "lo", "hi"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", onnx_type, [n])],
                          [helper.make_tensor_value_info("y", onnx_type, [n])], [lo, hi])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=7)
    so = ort.SessionOptions()
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    try:
        sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        io = sess.io_binding()
        io.bind_ortvalue_input("x", ort.OrtValue.ortvalue_from_numpy(x))
        io.bind_ortvalue_output("y", ort.OrtValue.ortvalue_from_numpy(out))
        sess.run_with_iobinding(io)
    except Exception:  # noqa: BLE001 - no kernel for this dtype: the row says so
        return None
    return lambda: sess.run_with_iobinding(io)


def half_rows(n: int, repeat: int) -> None:
    """float16 and bfloat16: clip and ScaleBias + clip against np.copyto of the same array and onnxruntime's Clip."""
    import onnxruntime as ort

    from clipbridge.core.dtypes import BFLOAT16, FLOAT16
    from clipbridge.kernels.numpy import clip_numpy, half_kernel_numba
    from clipbridge.kernels.scale_bias16 import hardware_half
    from clipbridge.core.evaluate import evaluate
    from clipbridge.core.meaning import Bound, Meaning, ScaleBias

    src = np.random.default_rng(0).normal(0, 5, n).astype(np.float32)
    path = "NumPy table gather"
    if half_kernel_numba() is not None:
        conv = "hardware" if hardware_half() else "integer"
        path = f"numba key kernel; ScaleBias in float32 registers, {conv} float16 conversions"
    print(f"16-bit floats, {n} elements, best of {repeat} interleaved rounds ({path}); ratios to np.copyto:")
    for dt, onnx_type in ((FLOAT16, 10), (BFLOAT16, 16)):
        x = src.astype(dt.np_dtype)
        out = np.zeros_like(x)
        ort_out = np.zeros_like(x)
        plain = Meaning("onnx", "Clip-13", dt, Bound(0.0), Bound(6.0))
        fused = Meaning("directml", "CLIP", dt, Bound(0.0), Bound(6.0), scale_bias=ScaleBias(0.5, 1.0))
        probe = x[: 1 << 18]
        for m in (plain, fused):  # compile and build tables outside the timings; check the bits once
            assert np.array_equal(clip_numpy(m, probe).view(np.uint16), evaluate(m, probe).view(np.uint16))
        fns = [lambda: np.copyto(out, x), lambda: clip_numpy(plain, x, out=out),
               lambda: clip_numpy(fused, x, out=out)]
        ort_run = _ort_clip(ort, dt.np_dtype, onnx_type, x, ort_out)
        if ort_run is not None:
            fns.append(ort_run)
        times = interleaved(fns, repeat)
        t_copy = times[0]
        gbs = lambda t: 2 * x.nbytes / t / 1e9  # noqa: E731
        print(f"  {dt.name:9s} np.copyto (anchor)           {gbs(t_copy):6.1f} GB/s")
        print(f"  {dt.name:9s} clipbridge clip              {gbs(times[1]):6.1f} GB/s   ratio {t_copy / times[1]:.2f}"
              f", median paired {paired(0, 1):.2f}  (target >= 0.90)")
        print(f"  {dt.name:9s} clipbridge ScaleBias + clip  {gbs(times[2]):6.1f} GB/s   ratio {t_copy / times[2]:.2f}"
              f", median paired {paired(0, 2):.2f}  (target >= 0.90)")
        if ort_run is None:
            print(f"  {dt.name:9s} onnxruntime Clip             no CPU kernel for this dtype")
        else:
            print(f"  {dt.name:9s} onnxruntime Clip (IO binding) {gbs(times[3]):5.1f} GB/s   ratio {t_copy / times[3]:.2f};"
                  f" clipbridge clip / onnxruntime {times[3] / times[1]:.1f}x, median paired {paired(3, 1):.1f}x"
                  "  (target >= 5)")


def variant_rows(n: int, repeat: int) -> None:
    """Each Meaning variant on float32 (promotion: an int32 input) against onnxruntime's plain Clip of the same array.

    Targets: each >= 1.0x onnxruntime's plain Clip; per-element bounds of the input's shape >= 0.8x (they read
    three arrays and write one where Clip reads one and writes one).
    """
    import math

    import onnxruntime as ort

    from clipbridge.core.dtypes import FLOAT32, INT32
    from clipbridge.kernels.numpy import clip_numpy, variant_kernel
    from clipbridge.core.evaluate import evaluate
    from clipbridge.core.meaning import Bound, Meaning, NanBound, NanInput, TensorBound

    rng = np.random.default_rng(0)
    x = rng.normal(0, 5, n).astype(np.float32)
    x[::1000] = np.nan  # NaN inputs, so the NaN-input rules have work to do
    xi = rng.integers(-20, 20, n).astype(np.int32)
    out, ort_out = np.zeros_like(x), np.zeros_like(x)
    ort_run = _ort_clip(ort, np.dtype(np.float32), 1, x, ort_out)
    lo_a = rng.normal(-1, 1, n).astype(np.float32)
    hi_a = lo_a + np.float32(6)
    t0 = time.perf_counter()
    tensor = Meaning("pytorch", "clamp", FLOAT32, None, None, lower_tensor=TensorBound((n,), tuple(lo_a.tolist())),
                     upper_tensor=TensorBound((n,), tuple(hi_a.tolist())))
    rows = {
        "plain clip [0, 6]": (Meaning("onnx", "Clip-13", FLOAT32, Bound(0.0), Bound(6.0)), x),
        "NaN input to the lower bound": (Meaning("tosa", "CLAMP", FLOAT32, Bound(0.0), Bound(6.0),
                                                 nan_input=NanInput.TO_LOWER), x),
        "NaN input to +0": (Meaning("tflite", "RELU6", FLOAT32, Bound(0.0), Bound(6.0), nan_input=NanInput.TO_ZERO),
                            x),
        "NaN bound read as 0": (Meaning("webnn", "clamp", FLOAT32, Bound(math.nan), Bound(6.0),
                                        nan_bound=NanBound.ZERO), x),
        "NaN bound as absent": (Meaning("pytorch", "clamp", FLOAT32, Bound(math.nan), Bound(6.0),
                                        nan_bound=NanBound.IGNORE), x),
        "per-element bounds, same shape": (tensor, x),
        "promotion int32 -> float32": (Meaning("pytorch", "clamp", INT32, Bound(-1.5), Bound(6.5),
                                               result_dtype=FLOAT32), xi),
    }
    for m, xs in rows.values():  # compile, convert the bounds, check the result once, all outside the timings
        probe = xs[: 1 << 18] if not m.has_tensor_bounds else xs
        want = evaluate(m, probe.copy())
        got = clip_numpy(m, probe)
        assert np.array_equal(got, want, equal_nan=True), m.describe()
    setup = time.perf_counter() - t0
    names = list(rows)
    fns = [ort_run] + [lambda m=m, xs=xs: clip_numpy(m, xs, out=out) for m, xs in rows.values()]
    times = interleaved(fns, repeat)
    gbs = lambda t: 2 * x.nbytes / t / 1e9  # noqa: E731
    path = "numba one pass" if variant_kernel("float32", True, True, True, 0) is not None else "chunked NumPy"
    print(f"Meaning variants, float32 output, {n} elements, best of {repeat} interleaved rounds ({path}); "
          f"ratio = onnxruntime plain Clip time / variant time (setup incl. bound conversion {setup:.1f} s):")
    print(f"  onnxruntime Clip (IO binding, anchor)  {gbs(times[0]):6.1f} GB/s")
    for name, t in zip(names, times[1:]):
        target = "0.80" if "per-element" in name else "1.00"
        print(f"  {name:38s} {gbs(t):6.1f} GB/s   ratio {times[0] / t:.2f}, median paired "
              f"{paired(0, names.index(name) + 1):.2f}  (target >= {target})")


if __name__ == "__main__":
    main()
