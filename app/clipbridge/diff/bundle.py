"""--bundle: a zip that reproduces each introduced difference on the installed engines.

Per introduced clip-like node: the single-node model.onnx the diff replayed, its captured inputs as
test_data_set_0/input_*.pb (the ONNX backend-test layout), each engine's output as
outputs/<engine>/output_0.pb, and case.json; run_bundle.py runs every case on each engine at the same
precision and says whether each engine gives its recorded output again.
"""

from __future__ import annotations

import io
import json
import re
import zipfile

import numpy as np
from onnx import numpy_helper

from clipbridge.diff.run import Runs
from clipbridge.scan.external import with_weights

RUNNER = '''"""Reproduce each case of this clipbridge diff bundle on the installed engines (python run_bundle.py)."""
import json, pathlib, sys
import numpy as np
import onnx
from onnx import numpy_helper

def load(p):
    t = onnx.TensorProto(); t.ParseFromString(p.read_bytes()); return t.name, numpy_helper.to_array(t)

def run(engine, model, feeds, precision, ran_at):
    # The same pinning as clipbridge's engine_config: "model" pins each engine, "deployed" takes its defaults.
    if engine == "onnxruntime":
        import onnxruntime as ort
        opts = ort.SessionOptions()
        if precision == "model":
            opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
            opts.add_session_config_entry("session.set_denormal_as_zero", "0")
            opts.use_deterministic_compute = True
        s = ort.InferenceSession(str(model), opts, providers=["CPUExecutionProvider"])
        return s.run(None, feeds)[0]
    if engine == "openvino":
        import openvino as ov
        config = {"INFERENCE_PRECISION_HINT": ran_at or "f32", "EXECUTION_MODE_HINT": "ACCURACY",
                  "CPU_DENORMALS_OPTIMIZATION": False} if precision == "model" else {}
        compiled = ov.Core().compile_model(str(model), "CPU", config)
        return compiled(feeds)[compiled.outputs[0]]
    from onnx.reference import ReferenceEvaluator
    return np.asarray(ReferenceEvaluator(str(model)).run(None, feeds)[0])

def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b)))) \\
        if a.dtype.kind == "f" else np.array_equal(a, b)

def main():
    root, failed = pathlib.Path(__file__).parent, 0
    for case in sorted((root / "cases").iterdir()):
        info = json.loads((case / "case.json").read_text())
        feeds = dict(load(p) for p in sorted((case / "test_data_set_0").glob("input_*.pb")))
        for engine in info["engines"]:
            want = load(case / "outputs" / engine / "output_0.pb")[1]
            got = run(engine, case / "model.onnx", feeds, info["precision"], info["ran_at"].get(engine))
            ok = same(got, want)
            failed += not ok
            print(f"{info['node']} ({info['op']}, {info['cause']}) on {engine}: "
                  f"{'reproduced' if ok else 'NOT reproduced'}")
    return 1 if failed else 0

if __name__ == "__main__":
    sys.exit(main())
'''


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_")[:60] or "node"


def _pb(array: np.ndarray, name: str) -> bytes:
    return numpy_helper.from_array(np.asarray(array), name).SerializeToString()


def build(body: dict, runs: Runs, precision: str) -> bytes:
    """The zip's bytes; a case per introduced clip-like node that was replayed."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("run_bundle.py", RUNNER)
        z.writestr("diff.json", json.dumps(body, indent=2, allow_nan=False))
        cases = [n for n in body["nodes"] if n["origin"] == "introduced" and n["node"] in runs.replays]
        for k, n in enumerate(cases):
            r = runs.replays[n["node"]]
            base = f"cases/{k:03d}_{_safe(n['node'])}"
            # a replay of an OnDisk model may name a weight in its file: the bundle carries the weight itself
            z.writestr(f"{base}/model.onnx", with_weights(r["model"]))
            for i, (name, value) in enumerate(r["feeds"].items()):
                z.writestr(f"{base}/test_data_set_0/input_{i}.pb", _pb(value, name))
            for engine, out in r["outputs"].items():
                z.writestr(f"{base}/outputs/{engine}/output_0.pb", _pb(out, "output_0"))
            info = {"node": n["node"], "op": n["op"], "cause": n["cause"], "engines": list(r["outputs"]),
                    "precision": precision, "witness": n.get("witness"),
                    "ran_at": {e["name"]: e["precision"] for e in body["engines"]}}
            z.writestr(f"{base}/case.json", json.dumps(info, indent=2, allow_nan=False))
        z.writestr("README.txt", f"clipbridge diff bundle: {len(cases)} case(s). Run: python run_bundle.py\n")
    return buf.getvalue()
