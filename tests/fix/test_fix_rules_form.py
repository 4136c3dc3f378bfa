"""Which form each NaN rule writes, per node and engine pair (app/clipbridge/fix/rules.py): the cheap ThresholdedRelu where A
writes 0 at a node whose outputs are >= 0 and B's ThresholdedRelu drops NaN (facts.thresholded_relu_drops_nan),
Equal/Where everywhere else. Pure graph rewriting: no engine runs here (tests/fix/test_facts.py measures the
facts, tests/fix/test_fix_engines.py proves the written models)."""

from __future__ import annotations

import onnx
import pytest

from clipbridge.fix import apply, facts
from tests.fix import models

CASES = {  # name: (model, reference, target, the rule expected at its single clip-like node or None)
    "relu6-ov-to-ort": (lambda: models.clip(0.0, 6.0, conv=True), "openvino", "onnxruntime", "nan-to-zero"),
    "relu-ov-to-ort": (lambda: models.unary("Relu"), "openvino", "onnxruntime", "nan-to-zero"),
    "max-x-0-ov-to-ort": (lambda: models.one_sided("Max", 0.0), "openvino", "onnxruntime", "nan-to-zero"),
    "relu-ov-to-reference": (lambda: models.unary("Relu"), "openvino", "onnx-reference", "nan-to-zero"),
    "clip-1-6-ov-to-ort": (lambda: models.clip(1.0, 6.0), "openvino", "onnxruntime", "nan-to-value"),
    "clip-minus1-6-ov-to-ort": (lambda: models.clip(-1.0, 6.0), "openvino", "onnxruntime", "nan-to-value"),
    "min-x-0-ov-to-ort": (lambda: models.one_sided("Min", 0.0), "openvino", "onnxruntime", "nan-to-value"),
    "hardsigmoid-ov-to-ort": (lambda: models.unary("HardSigmoid", alpha=1 / 6, beta=0.5), "openvino",
                              "onnxruntime", "nan-to-value"),
    "clip6-opset9-ov-to-ort": (lambda: models.clip(0.0, 6.0, opset=9), "openvino", "onnxruntime", "nan-to-value"),
    "relu6-ort-to-ov": (lambda: models.clip(0.0, 6.0, conv=True), "onnxruntime", "openvino", "nan-guard"),
    "relu-ort-to-reference": (lambda: models.unary("Relu"), "onnxruntime", "onnx-reference", None),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_rule_form(case):
    make, a, b, rule = CASES[case]
    out = apply.write_fixed(make().SerializeToString(), a, b)
    nan_rules = [r["rule"] for r in out["rules_applied"] if r["cause"] == "nan-input"]
    assert nan_rules == ([rule] if rule else [])
    ops = [n.op_type for n in onnx.load_from_string(out["model"]).graph.node]
    assert ("ThresholdedRelu" in ops) == (rule == "nan-to-zero")
    assert ("Where" in ops) == (rule in ("nan-guard", "nan-to-value"))


def test_only_engines_that_drop_nan_get_the_cheap_form():
    """OpenVINO propagates NaN through ThresholdedRelu (measured): never a target of the cheap form."""
    assert not facts.thresholded_relu_drops_nan("openvino")
    assert facts.thresholded_relu_drops_nan("onnxruntime") and facts.thresholded_relu_drops_nan("onnx-reference")
