"""run_bundle.py: run a clipbridge repro bundle on the engines installed here and diff against expectations.

Standalone (numpy only; onnxruntime and openvino when present): copied into every bundle by app/clipbridge/lint/bundle.py.
Exit 0 when every engine that ran matches, 1 on a mismatch or when an installed engine cannot run the model,
2 when nothing could run.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def load(path: Path, manifest: dict) -> np.ndarray:
    arr = np.load(path, allow_pickle=False)
    if manifest["dtype"] == "bfloat16":
        import ml_dtypes
        arr = arr.view(ml_dtypes.bfloat16)
    return arr


def _float(text: str) -> float:
    """A printed float; C runtimes spell NaN and infinity variously (nan, -nan(ind), inf, 1.#INF)."""
    low = text.lower()
    if "nan" in low or "ind" in low:
        return float("nan")
    if "inf" in low:
        return float("-inf") if low.startswith("-") else float("inf")
    return float(text)


def printed(text: str, manifest: dict) -> np.ndarray:
    """The values DxDispatch's print command wrote: a line "Resource 'output': v0, v1, ..."."""
    for line in text.splitlines():
        if line.strip().startswith("Resource 'output':"):
            items = [v.strip() for v in line.split(":", 1)[1].split(",") if v.strip()]
            if manifest["dtype"].startswith(("float", "bfloat")):
                return np.array([_float(v) for v in items], dtype=np.float64)
            return np.array([int(v) for v in items], dtype=np.dtype(manifest["dtype"]))
    raise ValueError("no \"Resource 'output':\" line in the DxDispatch output")


def same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Equal values; NaN equals NaN; -0 equals +0."""
    if a.dtype.kind in "fV" or str(a.dtype) == "bfloat16":
        af, bf = a.astype(np.float64), b.astype(np.float64)
        return (af == bf) | (np.isnan(af) & np.isnan(bf))
    return a == b


# Repeats app/clipbridge/engines/config.py's session settings on purpose: this script ships alone in bundles, never imports app.
def run_onnxruntime(entry: dict, x: np.ndarray, precision: str) -> tuple[np.ndarray, str]:
    """precision "model": no graph rewrites, denormals kept, deterministic kernels (as clipbridge runs it)."""
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    if precision == "model":
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        opts.add_session_config_entry("session.set_denormal_as_zero", "0")
        opts.use_deterministic_compute = True
    session = ort.InferenceSession(str(HERE / entry["model"]), opts, providers=["CPUExecutionProvider"])
    level = str(opts.graph_optimization_level).split(".")[-1]
    return session.run(None, {session.get_inputs()[0].name: x})[0], f"{level}, precision {precision}"


def _ov_hint(model: object, caps: list) -> str:
    """The model's own float type as the inference precision: f32 unless every float node is one half type the
    plugin offers (the rule app/clipbridge/engines/config.py applies)."""
    names = {str(o.get_element_type().get_type_name()) for op in model.get_ordered_ops() for o in op.outputs()}
    floats = {{"f64": "f32"}.get(n, n) for n in names if n in ("f32", "f64", "f16", "bf16")}
    half = floats.pop() if len(floats) == 1 else "f32"
    return half if {"f16": "FP16", "bf16": "BF16"}.get(half) in caps else "f32"


def run_openvino(entry: dict, x: np.ndarray, precision: str) -> tuple[np.ndarray, str]:
    """precision "model": inference precision pinned to the model's element type; "deployed": the plugin's."""
    import openvino as ov
    core = ov.Core()
    xml = str(HERE / entry["model"])
    model = core.read_model(xml, str(HERE / entry["weights"])) if entry.get("weights") else core.read_model(xml)
    config = {}
    if precision == "model":
        caps = list(core.get_property("CPU", "OPTIMIZATION_CAPABILITIES"))
        config = {"INFERENCE_PRECISION_HINT": _ov_hint(model, caps), "EXECUTION_MODE_HINT": "ACCURACY"}
    compiled = core.compile_model(model, "CPU", config)
    ran = str(compiled.get_property("INFERENCE_PRECISION_HINT").get_type_name())
    return np.asarray(compiled(x)[0]), f"inference precision {ran}, precision {precision}"


def host_line() -> str:
    """The CPU flags engines depend on, on the machine running the bundle (compare with manifest.json's host)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            flags = next((set(ln.split(":", 1)[1].split()) for ln in fh if ln.startswith(("flags", "Features"))),
                         set())
    except OSError:
        flags = set()
    wanted = ("avx512_bf16", "avx512_fp16", "amx_bf16", "amx_tile", "f16c")
    return "host: " + (", ".join(f"{f}={'yes' if f in flags else 'no'}" for f in wanted) if flags else
                       "CPU flags not readable")


class EngineFailed(Exception):
    """An installed engine refused or crashed on the model: the prediction is not confirmed (exit 1)."""


def produce(entry: dict, x: np.ndarray, manifest: dict) -> tuple[np.ndarray | None, str]:
    """(output, how) or (None, why not); EngineFailed when an installed engine cannot run the model."""
    engine = entry.get("engine", "")
    precision = manifest.get("precision", "model")
    try:
        if engine == "onnxruntime":
            import onnxruntime
            y, how = run_onnxruntime(entry, x, precision)
            return y, f"onnxruntime {onnxruntime.__version__}, {how}"
        if engine == "openvino":
            import openvino
            y, how = run_openvino(entry, x, precision)
            return y, f"openvino {openvino.__version__}, {how}"
    except ImportError:
        return None, f"{engine} is not installed"
    except Exception as exc:  # the engine refuses the model: reported, never a crash of the runner
        raise EngineFailed(f"{engine} failed: {str(exc).splitlines()[0][:300]}") from None
    if entry.get("device_output"):
        out = HERE / entry["device_output"]
        if out.is_file():
            return printed(out.read_text(), manifest), f"device output {out.name}"
        return None, (f"no engine here; on Windows run `dxdispatch {entry['model']} > {out.name}`, copy it here "
                      "and run this again")
    return None, "no engine for this dialect"


def main() -> int:
    manifest = json.loads((HERE / "manifest.json").read_text())
    x = load(HERE / "inputs.npy", manifest)
    probes = manifest["probes"]
    ran = mismatched = 0
    for entry in manifest["semantics"]:
        label = entry["label"]
        if entry.get("error"):
            print(f"{label}: not computable: {entry['error']}")
            continue
        expected = load(HERE / entry["expected"], manifest)
        try:
            got, how = produce(entry, x.copy(), manifest)
        except (EngineFailed, ValueError) as exc:
            print(f"{label}: {exc}")
            ran += 1
            mismatched += 1
            continue
        if got is None:
            print(f"{label}: skipped ({how})")
            continue
        ran += 1
        try:
            got = np.asarray(got).reshape(expected.shape).astype(expected.dtype)
        except ValueError as exc:
            print(f"{label}: output does not fit the expectations ({exc})")
            mismatched += 1
            continue
        ok = same(expected, got)
        bad = np.flatnonzero(~ok)
        print(f"{label} ({how}): {int(ok.sum())}/{ok.size} match")
        for i in bad[:20]:
            print(f"  input {x[i]!r} ({', '.join(probes[i]['why'])}): expected {expected[i]!r}, got {got[i]!r}")
        if len(bad):
            mismatched += 1
            for note in entry.get("engine_notes", []):
                print(f"  known: {note}")
    print(host_line())
    if ran == 0:
        print("no engine could run: install onnxruntime or openvino (pip install onnxruntime openvino)")
        return 2
    return 1 if mismatched else 0


if __name__ == "__main__":
    sys.exit(main())
