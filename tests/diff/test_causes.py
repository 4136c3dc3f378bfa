"""The cause rules on their own: each named rule fires on its case, and refuses when the engines' outputs are
not what the rule predicts (never a guess)."""

from __future__ import annotations

import numpy as np
import pytest

from clipbridge.diff import causes, outcome
from clipbridge.scan.patterns import ClipLike
from clipbridge.diff.report import verdict

F32 = np.dtype(np.float32)
LOWEST = float(np.finfo(np.float32).min)


def clip(lo=0.0, hi=6.0, omitted=()) -> ClipLike:
    return ClipLike("c", "Clip", "clip", "x", "y", lo, hi, tuple(omitted))


@pytest.mark.parametrize("c, v, outs, dtype, want", [
    pytest.param(clip(), float("nan"), {"onnxruntime": float("nan"), "openvino": 0.0}, F32, "nan-input",
                 id="nan-to-lower"),
    pytest.param(clip(), float("nan"), {"onnxruntime": float("nan"), "openvino": 6.0}, F32, None,
                 id="nan-but-not-the-predicted-value"),
    pytest.param(ClipLike("r", "HardSigmoid", "hard-sigmoid", "x", "y", 0.0, 1.0), float("nan"),
                 {"onnxruntime": float("nan"), "openvino": 1.0}, F32, "nan-input", id="hardsigmoid-nan-to-one"),
    pytest.param(clip(None, 6.0, ["min"]), float("-inf"), {"onnxruntime": LOWEST, "onnx-reference": float("-inf")},
                 F32, "default-bound", id="omitted-min"),
    pytest.param(clip(None, 6.0, ["min"]), float("-inf"), {"onnxruntime": float("-inf"), "onnx-reference": LOWEST},
                 F32, None, id="omitted-min-engines-swapped"),
    pytest.param(clip(0.0, 6.0), float("-inf"), {"onnxruntime": 0.0, "onnx-reference": -1.0}, F32, None,
                 id="given-min-is-no-default"),
    pytest.param(clip(6.0, 0.0), 3.0, {"onnxruntime": 0.0, "openvino": 6.0}, F32, "min-greater-than-max",
                 id="crossed"),
    pytest.param(clip(0.0, 1e5), float("inf"), {"onnxruntime": float("inf"), "openvino": 65504.0},
                 np.dtype(np.float16), "float16-bound-overflow", id="f16-overflow"),
    pytest.param(clip(0.1, 6.0), 0.09998, {"onnxruntime": 0.0999755859375, "openvino": 0.1},
                 np.dtype(np.float16), "bound-rounding", id="f16-rounded-bound"),
    pytest.param(clip(0.0, 6.0), 3.0, {"onnxruntime": 3.0, "openvino": 3.001}, F32, None, id="no-rule"),
    # A rule about two readings of the node names a cause only where each engine gave what one reading gives.
    pytest.param(clip(6.0, 0.0), 3.0, {"onnxruntime": 0.0, "openvino": 42.0}, F32, None,
                 id="crossed-but-an-output-no-reading-gives"),
    pytest.param(clip(6.0, 0.0), 3.0, {"onnxruntime": 0.0, "openvino": 3.0}, F32, None,
                 id="crossed-but-an-output-left-unclipped"),
    pytest.param(clip(0.0, 1e5), float("inf"), {"onnxruntime": float("inf"), "openvino": 1.0},
                 np.dtype(np.float16), None, id="f16-overflow-but-an-output-no-reading-gives"),
    pytest.param(clip(-1e5, 6.0), float("-inf"), {"onnxruntime": float("-inf"), "openvino": -65504.0},
                 np.dtype(np.float16), "float16-bound-overflow", id="f16-overflow-of-the-lower-bound"),
    pytest.param(clip(0.1, 6.0), 0.09998, {"onnxruntime": 0.0999755859375, "openvino": 0.5},
                 np.dtype(np.float16), None, id="f16-rounded-bound-but-an-output-no-reading-gives"),
    pytest.param(clip(2.5, 10.0), 2.0, {"onnxruntime": 2.0, "openvino": 3.0}, np.dtype(np.int32), "bound-rounding",
                 id="int-bound-cast-or-ceiled"),
    pytest.param(clip(2.5, 10.0), 2.0, {"onnxruntime": 2.0, "openvino": 7.0}, np.dtype(np.int32), None,
                 id="int-bound-but-an-output-no-reading-gives"),
])
def test_element_cause(c, v, outs, dtype, want):
    assert causes.element_cause(c, v, outs, dtype) == want


def test_narrower_reads_the_fused_kernel():
    """The kernel's runtimePrecision decides where the runtime model names the node (f32 there: not narrower);
    a node it folded away ran at the engine's reported precision; both precisions are named."""
    kernels = {"openvino": {"conv": {"precision": "bf16", "type": "Convolution", "layers": ["conv", "clip"]},
                            "head": {"precision": "f32", "type": "FullyConnected", "layers": ["head"]}},
               "onnxruntime": {}}
    precisions = {"openvino": "bf16", "onnxruntime": "f32"}
    assert causes.narrower(kernels, precisions, "clip", "float32") == (
        "openvino ran it in bf16 (its reported precision); the model's type is float32, onnxruntime ran f32")
    assert causes.narrower(kernels, precisions, "head", "float32") is None
    kernels["openvino"]["clip"] = kernels["openvino"]["conv"]
    note = causes.narrower(kernels, precisions, "clip", "float32")
    assert note == ("openvino ran it in bf16 (kernel Convolution: conv, clip); the model's type is float32, "
                    "onnxruntime ran f32")
    assert causes.narrower({"openvino": {}}, {"openvino": "f32"}, "clip", "float32") is None


def test_node_cause_refuses_when_any_element_is_unexplained():
    x = np.array([np.nan, 3.0], np.float32)
    outs = {"onnxruntime": np.array([np.nan, 3.0], np.float32), "openvino": np.array([0.0, 3.5], np.float32)}
    cause, _flat, counts = causes.node_cause(clip(), x, outs, np.array([True, True]), None)
    assert cause is None and counts == {"nan-input": 1, "unexplained": 1}
    cause, flat, counts = causes.node_cause(clip(), x, outs, np.array([True, False]), None)
    assert (cause, flat, counts) == ("nan-input", 0, {"nan-input": 1})


@pytest.mark.parametrize("nodes, first, outputs_differ, want", [
    pytest.param([], None, False, "equal", id="equal"),
    pytest.param([{"origin": "introduced", "cause": "nan-input"}, {"origin": "inherited", "cause": "nan-input"}],
                 {"node": "c"}, True, "explained", id="explained"),
    pytest.param([{"origin": "introduced", "cause": "not-a-clip"}], {"node": "m"}, True, "unexplained",
                 id="not-a-clip"),
    pytest.param([{"origin": "introduced", "cause": None}], {"node": "c"}, True, "unexplained", id="no-cause"),
    pytest.param([], None, True, "unexplained", id="outputs-differ-nothing-found"),
])
def test_verdict(nodes, first, outputs_differ, want):
    assert verdict([{"differing": int(outputs_differ)}], nodes, first) == want


ACC = {"origin": "introduced", "cause": "accumulation-order", "causes": {"accumulation-order": 3}}


@pytest.mark.parametrize("rows, want", [
    pytest.param([ACC], True, id="accumulation-only"),
    pytest.param([ACC, {"origin": "inherited", "cause": "accumulation-order", "causes": {"accumulation-order": 1}}],
                 True, id="and-inherited-from-it"),
    pytest.param([ACC, {"origin": "introduced", "cause": "nan-input", "causes": {"nan-input": 1}}], False,
                 id="beside-another-cause"),
    pytest.param([{"origin": "inherited", "cause": "accumulation-order",
                   "causes": {"accumulation-order": 1, "unexplained": 1}}], False, id="inherited-from-more"),
    pytest.param([], False, id="nothing-reaches"),
])
def test_rounding_only_counts_as_agreeing(rows, want):
    """Issue 45: outputs that differ only through accumulation-order nodes (within their bound) agree."""
    assert outcome.rounding_only(rows) is want
