"""`python bench/diff.py --sizes` (issue 46, item 6): the diff from a 1 MB model to one above 2 GB, each size in
processes of its own, so that each peak RSS is that run's alone.

Per size, a generated MLP (MatMul + Clip(0, 6) layers, seeded float32 weights; external data from 100 MB on, as
torch's exporter writes it) in a temporary folder, then, alternating --repeat times:
- anchor: the plain runs, in a fresh process: onnxruntime and OpenVINO each read the file, compile and run once
  (their wall time summed, imports excluded), the process's peak RSS;
- diff: what `clipbridge diff MODEL --memory BUDGET --probe off` runs, in a fresh process: the file read (its
  external data left in its files, clipbridge.scan.external.weightless; `--reader embedded`: read into one byte
  string, as before issue 46) and clipbridge.diff.report.diff (imports excluded), and the process's peak RSS.
Printed per size: the medians, the ratio diff / anchor (target <= 2.5x), the diff's peak RSS, the anchor's, the
diff's own memory above the engines' (diff peak - anchor peak: what the budget bounds) and the peak ratio (diff
peak / anchor peak), with the host; with --cli also the peak of `python -m clipbridge diff` itself on the model.
The peaks are ru_maxrss of each process (Linux: KiB).

Then one line of targets (issue 46). Decision, because the engines run in the diff's own process and hold the
model as a plain run does: "the diff's peak memory stays flat" is read as the diff's peak over the plain runs'
peak, which must stay within 1.5x of itself from 100 MB up, and the diff's own memory above the plain runs,
which must stay under the budget at every size (docs/performance.md).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
MB = 10**6
WIDTH = 2048  # 16 MiB of float32 weights per layer; the activations stay 8 x 2048 (64 KiB)


def generate(size: int, folder: Path) -> Path:
    """An MLP of about `size` bytes of weights at folder/model.onnx (external data past 100 MB)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    width = WIDTH if size >= 16 * MB else 256
    layers = max(1, round(size / (4 * width * width)))
    rng = np.random.default_rng(0)
    nodes, t = [], "x"
    inits = [numpy_helper.from_array(np.float32(0), "lo"), numpy_helper.from_array(np.float32(6), "hi")]
    for k in range(layers):
        w = (rng.standard_normal((width, width), dtype=np.float32) / np.float32(np.sqrt(width)))
        inits.append(numpy_helper.from_array(w, f"w{k}"))
        nodes += [helper.make_node("MatMul", [t, f"w{k}"], [f"h{k}"], name=f"fc{k}"),
                  helper.make_node("Clip", [f"h{k}", "lo", "hi"], [f"r{k}"], name=f"relu6_{k}")]
        t = f"r{k}"
    g = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, width])],
                          [helper.make_tensor_value_info(t, TensorProto.FLOAT, [8, width])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    path = folder / "model.onnx"
    onnx.save_model(m, str(path), save_as_external_data=size >= 100 * MB, all_tensors_to_one_file=True,
                    location="model.onnx.data", size_threshold=1024)
    return path


def generate_activations(size: int, folder: Path) -> Path:
    """A chain of Mul and Clip(0, 6) on one 1x1024x64x64 float32 tensor (16 MiB), long enough that its captured
    tensors hold about `size` bytes per engine, with almost no weights: what the budget bounds."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    shape, each = [1, 1024, 64, 64], 4 * 1024 * 64 * 64
    nodes, t = [], "x"
    inits = [numpy_helper.from_array(np.float32(k), n) for k, n in ((0, "lo"), (6, "hi"), (1.01, "g"))]
    for k in range(max(1, size // (2 * each))):
        nodes += [helper.make_node("Mul", [t, "g"], [f"m{k}"], name=f"scale{k}"),
                  helper.make_node("Clip", [f"m{k}", "lo", "hi"], [f"r{k}"], name=f"relu6_{k}")]
        t = f"r{k}"
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                          [helper.make_tensor_value_info(t, TensorProto.FLOAT, shape)], inits)
    path = folder / "model.onnx"
    onnx.save_model(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), str(path))
    return path


def child_plain(path: str) -> dict:
    """The anchor, in this (fresh) process: each engine reads the file, compiles and runs once."""
    import onnxruntime as ort
    import openvino as ov
    import onnx
    m = onnx.load(path, load_external_data=False)
    first = m.graph.input[0]
    dims = [d.dim_value for d in first.type.tensor_type.shape.dim]
    feed = {first.name: np.random.default_rng(0).standard_normal(dims).astype(np.float32)}
    t = time.perf_counter()
    s = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    s.run(None, feed)
    del s
    c = ov.Core().compile_model(path, "CPU")
    c(feed)
    return {"wall": time.perf_counter() - t}


def child_diff(path: str, budget: str, reader: str = "weightless") -> dict:
    """The diff, in this (fresh) process, as the CLI runs it: the file read, then the diff in process."""
    from clipbridge.diff import passes, report, run
    from clipbridge.scan import external
    import openvino  # noqa: F401 - imported before the clock, as the anchor's are
    import onnxruntime  # noqa: F401
    read = external.weightless if reader == "weightless" else external.embedded_from_file
    t = time.perf_counter()
    body, _ = report.diff(run.direct, read(path), None,
                          run.Options(probe="off", memory=passes.parse_size(budget)))
    return {"wall": time.perf_counter() - t, "passes": body["passes"], "verdict": body["verdict"]}


def measured(cmd: list[str]) -> dict:
    """Run `cmd` in a fresh process; its wall time and peak RSS (bytes)."""
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'app'}:{ROOT}"}
    wrapper = ("import resource, subprocess, sys, time, json; t = time.perf_counter(); "
               "r = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE); "
               "w = time.perf_counter() - t; "
               "print(json.dumps({'rc': r.returncode, 'wall': w, 'out': r.stdout.decode()[-2000:], "
               "'err': r.stderr.decode()[-800:], "
               "'peak': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024}))")
    out = subprocess.run([sys.executable, "-c", wrapper, *cmd], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def cli_peak(path: Path, budget: str) -> int:
    """The peak RSS (bytes) of `python -m clipbridge diff MODEL --memory BUDGET --probe off`: exit 0 or 1 (equal, or
    a difference: both a finished diff)."""
    c = measured([sys.executable, "-m", "clipbridge", "diff", str(path), "--memory", budget, "--probe", "off",
                  "--format", "json"])
    if c["rc"] not in (0, 1):
        raise RuntimeError(c["err"] or c["out"])
    return c["peak"]


def one_size(size: int | str, budget: str, repeat: int, reader: str = "weightless", cli: bool = False) -> dict:
    """`size` in bytes (a generated MLP), or the path of a model of the user's (its external data beside it)."""
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP", "/tmp")) as tmp:
        if isinstance(size, str) and size.endswith("a"):  # "512a": 512 MB of captured tensors per engine
            path = generate_activations(int(size[:-1]) * MB, Path(tmp))
        else:
            path = generate(size, Path(tmp)) if isinstance(size, int) else Path(size)
        on_disk = sum(f.stat().st_size for f in path.parent.iterdir() if f.name.startswith(path.name))
        anchors, diffs = [], []
        for _ in range(repeat):
            a = measured([sys.executable, __file__, "--child-plain", str(path)])
            if a["rc"]:
                raise RuntimeError(a["err"])
            anchors.append({"wall": json.loads(a["out"].strip().splitlines()[-1])["wall"], "peak": a["peak"]})
            d = measured([sys.executable, __file__, "--child-diff", str(path), budget, reader])
            if d["rc"]:
                raise RuntimeError(d["err"] or d["out"])
            got = json.loads(d["out"].strip().splitlines()[-1])
            diffs.append({"wall": got["wall"], "peak": d["peak"], "passes": got["passes"]})
        through_cli = cli_peak(path, budget) if cli else None
    med = statistics.median
    anchor_wall, diff_wall = med(a["wall"] for a in anchors), med(d["wall"] for d in diffs)
    anchor_peak, diff_peak = med(a["peak"] for a in anchors), med(d["peak"] for d in diffs)
    return {"size_mb": round(on_disk / MB, 1), "anchor_s": round(anchor_wall, 2), "diff_s": round(diff_wall, 2),
            "ratio": round(diff_wall / anchor_wall, 2), "anchor_peak_mib": round(anchor_peak / 2**20),
            "diff_peak_mib": round(diff_peak / 2**20), "diff_own_mib": round((diff_peak - anchor_peak) / 2**20),
            "peak_ratio": round(diff_peak / anchor_peak, 3), "passes": diffs[0]["passes"], "repeat": repeat,
            **({"cli_peak_mib": round(through_cli / 2**20), "cli_own_mib": round((through_cli - anchor_peak) / 2**20)}
               if through_cli is not None else {})}


def targets(rows: list[dict], budget: int) -> dict:
    """Issue 46's targets over the sizes measured (the module's docstring says how "flat" is read)."""
    big = [r for r in rows if r["size_mb"] >= 100]
    ratios = [r["peak_ratio"] for r in big]
    own = [r.get("cli_own_mib", r["diff_own_mib"]) for r in rows]
    return {"time_at_most_2.5x": all(r["ratio"] <= 2.5 for r in rows),
            "peak_flat_within_1.5x": bool(ratios) and max(ratios) / min(ratios) <= 1.5,
            "own_memory_under_budget": all(m * 2**20 <= budget for m in own),
            "above_2GB": any(r["size_mb"] > 2000 for r in rows)}


def main(sizes: list[str], budget: str, repeat: int, host: dict, reader: str = "weightless", cli: bool = False) -> None:
    """Each of `sizes`: MB of a generated model's weights, `Na` N MB of a generated chain's captured tensors per
    engine (generate_activations), or a model's path (e.g. a ResNet-50: tests/diff/models_resnet50.py)."""
    print(json.dumps({"host": host, "budget": budget, "reader": reader, "load_average": os.getloadavg()[0]}))
    rows = []
    for size in sizes:
        got = one_size(int(size) * MB if size.isdigit() else size, budget, repeat, reader, cli)
        rows.append(got)
        print(json.dumps({"model": size, **got}), flush=True)
    from clipbridge.diff.passes import parse_size
    print(json.dumps({"targets": targets(rows, parse_size(budget))}))


if __name__ == "__main__" and len(sys.argv) >= 3 and sys.argv[1] == "--child-plain":
    print(json.dumps(child_plain(sys.argv[2])))
elif __name__ == "__main__" and len(sys.argv) == 5 and sys.argv[1] == "--child-diff":
    print(json.dumps(child_diff(sys.argv[2], sys.argv[3], sys.argv[4])))
