"""Regenerate the small ONNX models torch 2.13.0's two exporters write for PyTorch clamps (tests read them).

Run from the repository root: `PYTHONPATH=$PWD python tests/data/torch_exports/make.py`. Writes <name>.ts.onnx
(torch.onnx.export dynamo=False, opset 17) and <name>.dynamo.onnx (dynamo=True, opset 18) and cases.json, the spec
of each (tests/dialects/test_pytorch.py checks every file against the predicted export and runs it).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import onnx

from clipbridge.dialects.pytorch import meaning as pt
from clipbridge.dialects.pytorch.engine import export_onnx
from clipbridge.dialects.pytorch.spec import PyTorchSpec

HERE = Path(__file__).resolve().parent
CASES: dict[str, dict] = {
    "clamp_min_max": {"dtype": "float32", "min": -1.0, "max": 6.0},
    "clamp_min": {"dtype": "float32", "min": 0.5},
    "clamp_max": {"dtype": "float32", "max": 0.5},
    "hardtanh": {"op": "hardtanh", "dtype": "float32", "min": -2.0, "max": 2.0},
    "relu6": {"op": "relu6", "dtype": "float32"},
    "clamp_int32_float_min": {"dtype": "int32", "min": 1.5},
}


def _tiny(data: bytes) -> bytes:
    """Drop the doc strings and metadata the exporters add: the graph is what the tests read."""
    m = onnx.load_from_string(data)
    m.ClearField("metadata_props")
    m.graph.ClearField("metadata_props")
    for n in m.graph.node:
        n.ClearField("doc_string")
        n.ClearField("metadata_props")
    for v in list(m.graph.value_info):
        m.graph.value_info.remove(v)
    return m.SerializeToString()


def main() -> int:
    for name, fields in CASES.items():
        spec = PyTorchSpec(dialect="pytorch", **fields)
        dt = pt.resolve(spec).dtype
        for dynamo, tag in ((False, "ts"), (True, "dynamo")):
            (HERE / f"{name}.{tag}.onnx").write_bytes(_tiny(export_onnx(spec, dt, dynamo)))
    (HERE / "cases.json").write_text(json.dumps(CASES, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
