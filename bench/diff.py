"""Diff benchmark: `clipbridge diff` of a MobileNetV2-shaped model against plain runs of the same model.

In one process, alternating, --repeat times each (the median is reported):
- anchor: a plain run on each engine, compile included (onnxruntime: session + run; OpenVINO: read, compile
  with the same precision pinning, run), summed over the engines; the engines' default threads, and again on
  the thread count a threaded diff gives each of its two sides (half the cores: `ratio_same_threads`);
- diff: clipbridge.diff.report.diff in process (inputs generated, mark-all run per engine, observer check, walk,
  replays of each differing clip-like node).
Prints both and the ratio diff / sum of plain runs (target <= 2.5x): of the medians, and of the minima (the
least disturbed on a shared machine). Two input sets: generated boundary values
(a NaN reaches the first Clip, so one replay runs), and a finite image (no difference: no replay).
`--model mlp20` uses a 21 MB model instead (five 1024x1024 float32 MatMul + ReLU6 layers): a model of at least
20 MB, where copying the marked tensors and reading the weights weigh more than the compile.
`--http` measures the diff over HTTP instead: POST /v1/models/diff to `clipbridge serve` started by the benchmark
(upload, the external-data guard, the sandbox child, the inspector's graph, the JSON body), against the same
plain runs in this process.
`--sizes 1,100,1000,2200` (issue 46): generated models of those sizes in MB, the diff's time over the plain runs
and its peak memory per size at one --memory budget (bench/diff_sizes.py).
Run: python bench/diff.py [--repeat 5] [--size 64] [--precision model] [--model mobilenet|mlp20] [--http]
The host (CPU model, ISA) is printed with the numbers: they depend on it.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from clipbridge.diff import child, engines, report, run  # noqa: E402
from clipbridge.diff import plain as plain_runs  # noqa: E402
from clipbridge.engines import threads  # noqa: E402
from httpserver import free_port, started  # noqa: E402  # bench/httpserver.py (this script's directory)
from tests.diff.models import mobilenet_v2  # noqa: E402


def mlp20(width: int = 1024, layers: int = 5) -> bytes:
    """MatMul + Clip(0, 6) layers with seeded float32 weights: 4 MiB per layer, 21 MB in all."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(0)
    nodes, inits, t = [], [numpy_helper.from_array(np.float32(0), "lo"), numpy_helper.from_array(np.float32(6), "hi")], "x"
    for k in range(layers):
        inits.append(numpy_helper.from_array((rng.standard_normal((width, width)) / 32).astype(np.float32), f"w{k}"))
        nodes += [helper.make_node("MatMul", [t, f"w{k}"], [f"h{k}"], name=f"fc{k}"),
                  helper.make_node("Clip", [f"h{k}", "lo", "hi"], [f"r{k}"], name=f"relu6_{k}")]
        t = f"r{k}"
    g = helper.make_graph(nodes, "mlp20", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, width])],
                          [helper.make_tensor_value_info(t, TensorProto.FLOAT, [8, width])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()


def host() -> dict:
    """CPU model and the ISA extensions that change what the engines pick (bf16, fp16, AVX-512, AMX)."""
    text = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    model = next((ln.split(":", 1)[1].strip() for ln in text.splitlines() if ln.startswith("model name")), "unknown")
    flags = next((ln.split(":", 1)[1].split() for ln in text.splitlines() if ln.startswith("flags")), [])
    isa = [f for f in ("avx2", "avx512f", "avx512_bf16", "avx512_fp16", "amx_bf16") if f in flags]
    return {"cpu": model, "isa": isa, "cpus": os.cpu_count()}


def plain(model: bytes, feeds: dict, precision: str, split: bool = False) -> float:
    """The anchor: each engine's plain run, compile included, summed; with the engines' default threads, or
    (`split`) on the thread count each side of a threaded diff uses (clipbridge.diff.plain.side_threads)."""
    n = plain_runs.side_threads(run.direct) if split else None
    t = time.perf_counter()
    with threads.scoped(n):
        for engine in run.DEFAULT_ENGINES:
            engines.run(engine, model, feeds, [], precision)
    return time.perf_counter() - t


def diffed(model: bytes, npz: bytes | None, precision: str) -> tuple[float, dict]:
    t = time.perf_counter()
    # Generated: the edge values (NaN, +-inf, the bounds), as this bench measured before issue 44 made them opt-in.
    body, _ = report.diff(run.direct, model, npz, run.Options(precision=precision, sample="edge"))
    return time.perf_counter() - t, body


def posted(port: int, model: bytes, npz: bytes | None, precision: str, status: int = 200) -> tuple[float, dict]:
    """One POST /v1/models/diff, multipart as `curl -F` sends it; (seconds, body). `npz=b""` sends an empty
    inputs file, which the server refuses (400) once it has read the whole form: the upload's own cost."""
    import http.client
    boundary = "clipbridge-bench-boundary"
    parts = [("model", "model.onnx", model)] + ([("inputs", "in.npz", npz)] if npz is not None else [])
    body = b"".join(f'--{boundary}\r\nContent-Disposition: form-data; name="{n}"; filename="{f}"\r\n'
                    f"Content-Type: application/octet-stream\r\n\r\n".encode() + data + b"\r\n"
                    for n, f, data in parts) + f"--{boundary}--\r\n".encode()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    t = time.perf_counter()
    conn.request("POST", f"/v1/models/diff?precision={precision}", body=body,
                 headers={"content-type": f"multipart/form-data; boundary={boundary}"})
    resp = conn.getresponse()
    data = resp.read()
    seconds = time.perf_counter() - t
    conn.close()
    if resp.status != status:
        raise SystemExit(f"POST /v1/models/diff: {resp.status} {data[:300]!r}")
    return seconds, json.loads(data)


def measure(model: bytes, npz: bytes | None, feeds: dict, repeat: int, precision: str, port: int | None) -> dict:
    plain(model, feeds, precision)  # warm both engines' imports and allocators once
    if port is not None:
        posted(port, model, npz, precision)  # and the server's sandbox worker
    anchors, splits, diffs, body = [], [], [], {}
    for _ in range(repeat):
        anchors.append(plain(model, feeds, precision))
        seconds, body = diffed(model, npz, precision) if port is None else posted(port, model, npz, precision)
        diffs.append(seconds)
        splits.append(plain(model, feeds, precision, split=True))
    a, d, s = statistics.median(anchors), statistics.median(diffs), statistics.median(splits)
    # The minimum of each is the least disturbed by other processes on a shared machine; both are reported.
    # The target reads against the engines' defaults (`ratio`); `ratio_same_threads` against plain runs on the
    # thread count the diff gives each side, so that the split itself is seen not to be what makes it cheaper.
    out = {"plain_sum_s": round(a, 4), "diff_s": round(d, 4), "ratio": round(d / a, 2),
           "ratio_of_minima": round(min(diffs) / min(anchors), 2),
           "plain_same_threads_s": round(s, 4), "ratio_same_threads": round(d / s, 2),
           "verdict": body["verdict"], "replays": sum(1 for n in body["nodes"] if "replay_differing" in n)}
    if port is not None:  # what the upload alone costs (the same form, refused once read): reported, not subtracted
        up = statistics.median(posted(port, model, b"", precision, 400)[0] for _ in range(repeat))
        out.update({"upload_s": round(up, 4), "upload_share_of_anchor": round(up / a, 2)})
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--size", type=int, default=64, help="image side (the model is 1x3xSxS)")
    ap.add_argument("--precision", choices=["model", "deployed"], default="model")
    ap.add_argument("--model", choices=["mobilenet", "mlp20"], default="mobilenet")
    ap.add_argument("--http", action="store_true", help="the diff over HTTP (clipbridge serve), not in process")
    ap.add_argument("--samples", type=int, default=0, help="an input set of N finite samples instead: the set's "
                    "diff against N plain inferences per engine (compiled once) plus the one-sample diff")
    ap.add_argument("--sizes", type=str, default=None, metavar="MB,MB,...", help="issue 46: the diff of generated "
                    "models of these sizes in MB (e.g. 1,100,1000,2200; external data from 100 MB) or these .onnx paths, "
                    "each in its own "
                    "process, time over the plain runs and peak RSS (bench/diff_sizes.py)")
    ap.add_argument("--memory", default="256MiB", help="with --sizes: the diff's --memory budget")
    ap.add_argument("--reader", choices=["weightless", "embedded"], default="weightless",
                    help="with --sizes: how the diff reads a model with external data: its weights left in their "
                         "files (what `clipbridge diff` does) or embedded (before issue 46: the baseline)")
    ap.add_argument("--cli", action="store_true", help="with --sizes: also the peak RSS of `python -m clipbridge "
                    "diff` itself on each model (one more diff per size)")
    args = ap.parse_args()
    if args.sizes:
        import diff_sizes  # bench/diff_sizes.py, this script's directory
        return diff_sizes.main(args.sizes.split(","), args.memory, args.repeat, host(), args.reader, args.cli)
    if args.samples:
        return print(json.dumps(sample_set(args), indent=2))
    if args.model == "mlp20":
        model, name = mlp20(), "five 1024x1024 MatMul + ReLU6 (x 8x1024)"
        finite = {"x": np.random.default_rng(1).standard_normal((8, 1024)).astype(np.float32)}
    else:
        model, name = mobilenet_v2(args.size), f"MobileNetV2-shaped, 1x3x{args.size}x{args.size}"
        finite = {"image": np.random.default_rng(1).standard_normal((1, 3, args.size, args.size)).astype(np.float32)}
    generated = child.prepare(model, None, 20240, "edge").feeds
    buf = io.BytesIO()
    np.savez(buf, **finite)
    with server(args.http) as port:
        out = {"model": f"{name}, {len(model)} bytes", "host": host(),
               "utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()), "precision": args.precision,
               "via": "http" if port else "in-process", "load_average": os.getloadavg()[0], "target": "<= 2.5x",
               "generated": measure(model, None, generated, args.repeat, args.precision, port),
               "finite_image": measure(model, buf.getvalue(), finite, args.repeat, args.precision, port)}
    print(json.dumps(out, indent=2))


def sample_set(args: argparse.Namespace) -> dict:
    """Issue 44's input-set target: the diff of N samples <= 1.3x (N plain inferences per engine, each engine
    compiled once, + the one-sample diff), interleaved, medians and minima."""
    from clipbridge.diff import sets
    from clipbridge.engines import config as engine_config
    model = mobilenet_v2(args.size)
    xs = [np.random.default_rng(k).standard_normal((1, 3, args.size, args.size)).astype(np.float32)
          for k in range(args.samples)]
    npzs = []
    for k, x in enumerate(xs):
        buf = io.BytesIO()
        np.savez(buf, image=x)
        npzs.append((f"s{k:03d}.npz", buf.getvalue()))

    def anchor() -> float:
        t = time.perf_counter()
        session, _ = engine_config.onnxruntime_session(model, args.precision)
        for x in xs:
            session.run(None, {"image": x})
        compiled, _ = engine_config.openvino_compile(engine_config.ov_core().read_model(model, b""), args.precision)
        for x in xs:
            compiled({"image": x})
        return time.perf_counter() - t + diffed(model, npzs[0][1], args.precision)[0]

    def whole() -> tuple[float, dict]:
        t = time.perf_counter()
        body, _ = sets.diff(run.direct, model, npzs, run.Options(precision=args.precision))
        return time.perf_counter() - t, body

    anchor(), whole()  # warm
    anchors, diffs, body = [], [], {}
    for _ in range(args.repeat):
        anchors.append(anchor())
        seconds, body = whole()
        diffs.append(seconds)
    a, d = statistics.median(anchors), statistics.median(diffs)
    return {"model": f"MobileNetV2-shaped, 1x3x{args.size}x{args.size}", "samples": args.samples, "host": host(),
            "utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()), "load_average": os.getloadavg()[0],
            "anchor_s": round(a, 4), "set_diff_s": round(d, 4), "ratio": round(d / a, 2),
            "ratio_of_minima": round(min(diffs) / min(anchors), 2), "target": "<= 1.3x", "verdict": body["verdict"]}


@contextlib.contextmanager
def server(wanted: bool) -> Iterator[int | None]:
    """`clipbridge serve` on a free port (its sandbox, limits and protocol as deployed), or None."""
    if not wanted:
        yield None
        return
    port = free_port()
    with started([sys.executable, "-c", "from clipbridge.cli.main import main; main()", "serve", "--port", str(port),
                  "--log-level", "warning"], port):
        yield port

if __name__ == "__main__":
    main()
