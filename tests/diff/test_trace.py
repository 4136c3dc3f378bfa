"""The precision trace (`engine@f16` against the float32 run, app/clipbridge/diff/trace.py) and its fix
(app/clipbridge/fix/overflow.py) on a T5-style block (MatMul -> residual Add -> RMSNorm) whose weights push two elements of
the MatMul past 65504. Every engine's float16 run is real; what each engine computes internally differs
(onnxruntime's CPU provider runs some float16 ops in float32 between casts), so the assertions hold for each
engine's own answer: the first tensor that holds inf is the MatMul's, and the fix's re-trace is equal."""

from __future__ import annotations

import warnings

import numpy as np
import onnx
import pytest

from clipbridge.diff.models import DiffResponse
from clipbridge.core.errors import ClipBridgeError
from clipbridge.diff import report, run
from clipbridge.fix import service
from tests.diff import models_trace as TM
from tests.diff.conftest import npz

pytestmark = [pytest.mark.engines, pytest.mark.filterwarnings("ignore::RuntimeWarning")]
ENGINES = ["onnxruntime@f16", "openvino@f16", "onnx-reference@f16"]


@pytest.fixture(scope="module")
def block() -> tuple[bytes, bytes]:
    return TM.t5_block(), npz(x=TM.t5_inputs())


@pytest.mark.parametrize("narrow", [pytest.param(e, id=e) for e in ENGINES])
def test_trace_names_the_overflowing_matmul(block, narrow):
    body = report.diff(run.direct, *block, run.Options(engines=("onnxruntime", narrow)))[0]
    DiffResponse.model_validate(body)
    over = body["trace"]["first_overflow"]
    assert (over["node"], over["op"], over["index"]) == ("ff", "MatMul", [0, 0, 0])
    assert over["outputs"][narrow] == "inf" and over["outputs"]["onnxruntime"] > 65504
    assert body["trace"]["largest_finite"]["beyond"] is True
    assert body["first_divergence"] == {"node": "ff", "op": "MatMul"}
    assert body["nodes"][0]["cause"] == "float16-overflow" and body["verdict"] == "explained"


def test_rmsnorm_nan_is_inf_over_inf_on_the_reference_evaluator(block):
    """numpy computes every op in float16: r = inf, rms = inf, r / rms = NaN at the Div."""
    body = report.diff(run.direct, *block, run.Options(engines=("onnxruntime", "onnx-reference@f16")))[0]
    nan = body["trace"]["first_nan"]
    assert (nan["node"], nan["op"], nan["cause"]) == ("normalize", "Div", "inf-times-zero")


@pytest.mark.parametrize("narrow", [pytest.param(e, id=e) for e in ENGINES])
def test_fix_keeps_the_overflowing_region_in_float32_and_proves_equal(block, narrow):
    fixed = service.fix(*block, "onnxruntime", narrow, execute=run.direct, rounds=3)
    assert fixed.body["verdict"] == "equal", fixed.body["proof"]["outputs"]
    [rule] = fixed.body["rules_applied"]
    # A clamp after the MatMul is tried first and is not enough here: Pow(65504, 2) overflows again.
    assert [r["rule"] for r in fixed.body["tried"]][-1] == rule["rule"]
    written = onnx.load_from_string(fixed.model)
    onnx.checker.check_model(written, full_check=True)
    assert written.graph.output[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT16
    assert all(o["differing"] == 0 for o in fixed.body["proof"]["outputs"])


def test_clamp_is_enough_when_what_follows_saturates():
    """MatMul past 65504 then a ReLU6: Clip(-65504, 65504) after the MatMul is the smallest repair."""
    from onnx import TensorProto as T, helper, numpy_helper
    w = np.full((8, 8), 0.01, np.float32)
    w[:, 0] = 20000.0
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["h"], name="ff"),
                           helper.make_node("Clip", ["h", "lo", "hi"], ["y"], name="relu6")], "g",
                          [helper.make_tensor_value_info("x", T.FLOAT, [1, 8])],
                          [helper.make_tensor_value_info("y", T.FLOAT, [1, 8])],
                          [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.array(0, np.float32), "lo"),
                           numpy_helper.from_array(np.array(6, np.float32), "hi")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fixed = service.fix(m, npz(x=np.ones((1, 8), np.float32)), "onnxruntime", "onnx-reference@f16",
                            execute=run.direct, rounds=3)
    assert fixed.body["verdict"] == "equal"
    assert [r["rule"] for r in fixed.body["rules_applied"]] == ["float16-clamp"]


@pytest.mark.parametrize("engines_", [
    pytest.param(("onnxruntime@f16", "openvino@f16"), id="two-narrow"),
    pytest.param(("onnxruntime", "tflite@f16"), id="unknown-engine"),
    pytest.param(("onnxruntime", "onnxruntime@f16", "openvino"), id="three-engines"),
])
def test_trace_refuses_what_it_cannot_run(block, engines_):
    with pytest.raises(ClipBridgeError) as err:
        report.diff(run.direct, *block, run.Options(engines=engines_))
    assert err.value.loc == "engine"
