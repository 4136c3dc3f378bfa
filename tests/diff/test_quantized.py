"""QDQ int8 graphs (tests/diff/models_qdq.py): a clip whose own inputs agree, captured in the same run, and whose
output differs is introduced there; every differing clip-like node is listed, also after the one-at-a-time
fallback; causes quantize-saturation / quantize-rounding with witnesses; the fix adds no rule whose cause was not
found. What OpenVINO does with a QDQ clip depends on its int8 kernels (and so on the CPU): the engine tests read
which nodes differ from the engines' own tensors, never from a value written here."""

from __future__ import annotations

import math

import numpy as np
import onnx
import pytest

from clipbridge.diff import engines, report, run
from clipbridge.diff.quantized import quantize_rounding, quantize_saturation
from clipbridge.fix import service
from clipbridge.scan.patterns import ClipLike
from tests.diff import models_qdq as Q
from tests.diff.conftest import npz

GRID = {"scale": 0.1, "zero_point": 0, "qmin": -128, "qmax": 127, "qtype": "int8"}


def _clip(lo, hi, op="Clip"):
    return ClipLike("n", op, "clip" if op == "Clip" else "quantize-saturate", "x", "y", lo, hi,
                    params={"grid": GRID})


@pytest.mark.parametrize("rule, c, v, outs, want", [
    pytest.param(quantize_saturation, _clip(0.0, 6.0), 12.7, {"onnxruntime": 6.0, "openvino": 5.9},
                 "quantize-saturation", id="bound-folded-to-59"),
    pytest.param(quantize_saturation, _clip(0.0, 6.0), 6.0, {"onnxruntime": 6.0, "openvino": 5.9},
                 "quantize-saturation", id="at-the-bound"),
    pytest.param(quantize_saturation, _clip(0.0, 6.0), 3.0, {"onnxruntime": 3.0, "openvino": 2.9}, None,
                 id="inside-the-range-is-not-saturation"),
    pytest.param(quantize_saturation, _clip(0.0, 6.0), 12.7, {"onnxruntime": 6.0, "openvino": 5.0}, None,
                 id="more-than-one-step-away"),
    pytest.param(quantize_saturation, _clip(None, None, "QuantizeLinear"), math.inf,
                 {"onnxruntime": 127.0, "onnx-reference": 0.0}, "quantize-saturation", id="inf-into-quantize"),
    pytest.param(quantize_rounding, _clip(None, None, "QuantizeLinear"), 0.25, {"onnxruntime": 2.0, "openvino": 3.0},
                 "quantize-rounding", id="tie-half-even-vs-away"),
    pytest.param(quantize_rounding, _clip(None, None, "QuantizeLinear"), 0.26, {"onnxruntime": 3.0, "openvino": 2.0},
                 None, id="not-a-tie"),
    pytest.param(quantize_rounding, ClipLike("n", "Clip", "clip", "x", "y", 0.0, 6.0), 0.25,
                 {"onnxruntime": 0.2, "openvino": 0.3}, None, id="no-grid"),
])
def test_quantized_rules(rule, c, v, outs, want):
    assert rule(c, v, outs, np.dtype(np.float32)) == want


def _diff(model: bytes, inputs: bytes, **kw) -> dict:
    return report.diff(run.direct, model, inputs, run.Options(**kw))[0]


def _differing_clip_likes(model: bytes, x: np.ndarray) -> set[str]:
    """The clip-like nodes whose output differs between onnxruntime and OpenVINO, read from each engine with that
    one tensor marked (an independent capture: one tensor per run)."""
    m = onnx.load_from_string(model)
    out = set()
    for n in m.graph.node:
        if n.op_type in ("Clip", "Relu"):
            vals = [engines.run(e, model, {"x": x}, [n.output[0]])["values"][n.output[0]]
                    for e in ("onnxruntime", "openvino")]
            if run.compare.count(*vals):
                out.add(n.name)
    return out


@pytest.mark.engines
def test_qdq_clip_differing_in_the_model_only_is_introduced():
    model, x = Q.qdq_relu6_clip(), Q.inputs()
    body = _diff(model, npz(x=x))
    rows = {r["node"]: r for r in body["nodes"]}
    want = _differing_clip_likes(model, x)
    assert want <= set(rows), (want, set(rows))
    for r in rows.values():
        if r["origin"] == "introduced" and r["pattern"] == "clip":
            w = r["witness"]
            inputs = list(w["input"].values()) if isinstance(w["input"], dict) else [w["input"]]
            assert len(set(map(str, inputs))) == 1  # its own inputs agree at the witness
            assert r["cause"] in ("quantize-saturation", "quantize-rounding"), r
        if r["origin"] == "inherited":
            assert r["inherited_from"], r
    assert body["verdict"] in ("explained", "equal")


@pytest.mark.engines
def test_every_differing_clip_like_row_after_the_fallback(monkeypatch):
    """Marking changes OpenVINO's answer here (simulated on the mark-all run, as in test_diff.py): after the
    bisection each clip-like node is captured one at a time, and the same rows are listed."""
    model, x = Q.qdq_relu6_clip(), Q.inputs()
    marked_all = {r["node"]: (r["origin"], r["cause"]) for r in _diff(model, npz(x=x))["nodes"]}
    real = engines.run

    def observed(engine, model_, feeds, marks, precision="model", *rest, **kw):
        out = real(engine, model_, feeds, marks, precision, *rest, **kw)
        if engine == "openvino" and not marks and len(onnx.load_from_string(model_).graph.output) > 1:
            out["values"]["y"] = out["values"]["y"] + np.float32(1)
        return out
    monkeypatch.setattr(engines, "run", observed)
    body = _diff(model, npz(x=x))
    assert body["method"] == "bisection"
    clip_rows = {r["node"]: (r["origin"], r["cause"]) for r in body["nodes"] if r["op"] in ("Clip", "Relu")}
    assert clip_rows == {k: v for k, v in marked_all.items() if k in clip_rows} and \
        set(clip_rows) == {k for k in marked_all if k in ("q_r6", "q_c2", "relu")}


@pytest.mark.engines
def test_fix_adds_no_rule_whose_cause_was_not_found():
    """No NaN reaches a clip of the QDQ model (QuantizeLinear has no NaN), so no NaN guard is written; the written
    model's clean outputs are bit-identical on OpenVINO, and a difference no rule removes keeps the proof's verdict
    (the diff's words: explained or unexplained)."""
    model, x = Q.qdq_relu6_clip(), Q.inputs()
    fixed = service.fix(model, npz(x=x), "onnxruntime", "openvino", execute=run.direct, rounds=3)
    assert fixed.body["rules_applied"] == []
    assert fixed.body["cost"]["clean_identical"] is True
    proof_rows = fixed.body["proof"]["nodes"]
    assert fixed.body["verdict"] == ("equal" if not proof_rows else fixed.body["proof"]["verdict"])
    assert fixed.body["verdict"] in ("equal", "explained", "unexplained")
