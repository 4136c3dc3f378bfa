"""Fleet's agreement checked by the independent oracle (tests/engines_direct.py), not by `clipbridge diff`: each
model of the registry run directly on onnxruntime and OpenVINO through their own APIs, on the inputs fleet was
given (--inputs-dir), and compared without clipbridge. A model fleet calls `equal` is one whose outputs the
engines agree on, and every other verdict is a model they disagree on."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

from clipbridge.fleet import runner
from clipbridge.fleet.store import read_jsonl
from tests import engines_direct
from tests.fleet.conftest import config, quiet

pytest.importorskip("onnxruntime")
pytest.importorskip("openvino")

# NaN, both infinities, values beside each bound of the registry's clips (0, 6, float16's 65504) and between.
SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, -1.0, 0.5, 3.0, 5.999, 6.0, 7.0, 6e4, 7e4, -7e4, 1e-3, 2.0]


def _inputs(model: Path, into: Path) -> dict[str, np.ndarray]:
    inp = onnx.load(str(model)).graph.input[0]
    dtype = onnx.helper.tensor_dtype_to_np_dtype(inp.type.tensor_type.elem_type)
    shape = [d.dim_value for d in inp.type.tensor_type.shape.dim]
    with np.errstate(over="ignore"):
        x = np.resize(np.array(SPECIAL, np.float64), shape).astype(dtype)
    feeds = {inp.name: x}
    np.savez(into / f"{model.stem}.npz", **feeds)
    return feeds


def test_fleet_says_equal_exactly_where_the_engines_agree(registry, tmp_path):
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    feeds = {str(p): _inputs(p, inputs) for p in sorted(registry.rglob("*.onnx"))}
    code = runner.run(config(list(feeds), tmp_path / "out", tmp_path / "cache", inputs_dir=str(inputs)), quiet())
    records = read_jsonl(tmp_path / "out" / "results.jsonl")
    assert len(records) == len(feeds) and all(r["error"] is None for r in records), records
    fleet, oracle = {}, {}
    for r in records:
        data = Path(r["model"]).read_bytes()
        outputs = [engines_direct.run(e, data, feeds[r["model"]]) for e in ("onnxruntime", "openvino")]
        oracle[r["model"]] = engines_direct.agree(*outputs)
        fleet[r["model"]] = r["verdict"] == "equal"
    assert fleet == oracle
    assert code == (0 if all(oracle.values()) else 1)
    assert not all(oracle.values()) and any(oracle.values())  # the registry holds both kinds on these inputs
