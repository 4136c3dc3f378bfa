"""The fix on the real engines: for every model and every ordered pair of engines, the written model on B
computes what the original computes on A (the proof's verdict is equal), is bit-identical to the original on
B on clean inputs, passes onnx.checker's full check, and keeps node names, opset and IR version."""

from __future__ import annotations

import itertools

import numpy as np
import onnx
import pytest

from app.fix import engines, proof
from app.fix.service import fix
from app.sandbox import run_isolated
from tests.fix import models

pytest.importorskip("onnxruntime")
pytest.importorskip("openvino")
pytestmark = pytest.mark.engines

PAIRS = list(itertools.permutations(("onnxruntime", "openvino", "onnx-reference"), 2))


def _original_differs(model: bytes, a: str, b: str, sets: list[dict]) -> bool:
    ra, _ = run_isolated("test", engines.run, a, model, sets)
    rb, _ = run_isolated("test", engines.run, b, model, sets)
    return any(proof.differing(x[k], y[k]).any() for x, y in zip(ra, rb) for k in x)


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: f"{p[0]}-to-{p[1]}")
@pytest.mark.parametrize("case", sorted(models.CASES))
def test_fix_proves_equal(case, pair):
    a, b = pair
    original = models.CASES[case]()
    data = original.SerializeToString()
    out = fix(data, None, a, b, "model", rounds=2)
    body = out.body
    assert body["proof"]["verdict"] == "equal", body
    assert body["cost"]["clean_identical"], body["cost"]
    written = onnx.load_from_string(out.model)
    onnx.checker.check_model(written, full_check=True)
    assert body["model"]["node_names_kept"]
    assert {n.name for n in original.graph.node} <= {n.name for n in written.graph.node}
    assert written.ir_version == original.ir_version
    before = original.opset_import[0].version
    if body["model"]["opset_note"] is None:  # kept unless a rewrite needs a newer op, and then it says so
        assert body["model"]["opset"] == before
    else:
        assert before < 9 and body["model"]["opset"] == 9 and f"opset {before} -> 9" in body["model"]["opset_note"]
    # A rule fires exactly where the original differs between the engines on the same generated inputs.
    sets = proof.generate([{"name": "x", "shape": models.SHAPE, "dtype": np.dtype(
        onnx.helper.tensor_dtype_to_np_dtype(original.graph.input[0].type.tensor_type.elem_type)).name}],
        [v for r in _bounds(original) for v in r])
    assert bool(body["rules_applied"]) == _original_differs(data, a, b, sets), body["rules_applied"]


def _bounds(m: onnx.ModelProto) -> list[list[float]]:
    vals = [float(onnx.numpy_helper.to_array(t)) for t in m.graph.initializer if t.name in ("lo", "hi", "k")]
    vals += [a.f for n in m.graph.node for a in n.attribute if a.name in ("min", "max")]
    return [vals]


@pytest.mark.parametrize("b", ["onnxruntime", "openvino"])
def test_crossed_clip6_runs_on_b_as_on_reference(b):
    """A Clip-6 with min > max: only onnx.reference runs it; the fix writes the constant it gives."""
    original = models.clip(6.0, 0.0, opset=6)
    out = fix(original.SerializeToString(), None, "onnx-reference", b, "model", rounds=2)
    assert out.body["proof"]["verdict"] == "equal", out.body
    assert "crossed-bounds-constant" in [r["rule"] for r in out.body["rules_applied"]]
    assert out.body["cost"]["original_ms"] is None and "cannot run the original" in out.body["cost"]["note"]
    if b == "openvino":  # its Clamp then sends NaN to the bound: the guard needs IsNaN/Where (opset 9)
        assert out.body["model"]["opset"] == 9 and "opset 6 -> 9" in out.body["model"]["opset_note"]


def test_given_inputs_are_part_of_the_proof():
    import io
    original = models.mobilenet_like()
    x = np.full(models.SHAPE, np.nan, np.float32)
    buf = io.BytesIO()
    np.savez(buf, x=x)
    out = fix(original.SerializeToString(), buf.getvalue(), "onnxruntime", "openvino", "model", rounds=2)
    assert out.body["proof"]["inputs"]["kind"] == "given"
    assert out.body["proof"]["inputs"]["sets"] == 3
    assert out.body["proof"]["verdict"] == "equal"
