"""Rows of the behaviour table that no other test measures, measured here on the installed engines through the
independent oracle (tests/engines_direct.py: no clipbridge code runs the engines). Each row's `test` names its
test, here or where the consumer of the row measures it."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T, helper, numpy_helper

from clipbridge import behaviour
from tests import engines_direct

pytest.importorskip("onnxruntime")
pytest.importorskip("openvino")
pytestmark = pytest.mark.engines


def _two_clips(dt: int, second: list[str]) -> bytes:
    """Clip(x, zero) beside a second Clip of x with the same min constant (`second`: its bound inputs)."""
    npdt = helper.tensor_dtype_to_np_dtype(dt)
    nodes = [helper.make_node("Clip", ["x", "zero"], ["a"], name="open_max"),
             helper.make_node("Clip", ["x", *second], ["b"], name="other")]
    ins = [helper.make_tensor_value_info("x", dt, [1, 4])] + \
        ([helper.make_tensor_value_info("limit", dt, [])] if "limit" in second else [])
    g = helper.make_graph(nodes, "g", ins, [helper.make_tensor_value_info(o, dt, [1, 4]) for o in "ab"],
                          [numpy_helper.from_array(np.array(v, npdt), k) for k, v in (("zero", 0), ("six", 6))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    onnx.checker.check_model(m, full_check=True)
    return m.SerializeToString()


@pytest.mark.parametrize("dt", [T.FLOAT, T.FLOAT16], ids=["float32", "float16"])
@pytest.mark.parametrize("second", [["zero", "six"], ["zero", "limit"]], ids=["constant-max", "run-time-max"])
def test_merged_clips_propagate_nan(dt, second):
    """Row openvino-merged-clip-nan-propagates: where the row's reading is `propagate`, NaN stays at both Clips
    on OpenVINO, although one Clip alone sends it to the lower bound (row openvino-clamp-nan-to-lower)."""
    npdt = helper.tensor_dtype_to_np_dtype(dt)
    x = np.array([[np.nan, -np.inf, np.inf, 1.0]], npdt)
    feeds = {"x": x, **({"limit": np.array(6, npdt)} if "limit" in second else {})}
    merged = engines_direct.run("openvino", _two_clips(dt, second), feeds)
    alone = engines_direct.run("openvino", _alone(dt), {"x": x})
    assert behaviour.reading("openvino-merged-clip-nan-propagates", "openvino") == "propagate"
    assert np.isnan(merged[0][0, 0]) and np.isnan(merged[1][0, 0])
    assert behaviour.reading("openvino-clamp-nan-to-lower", "openvino") == "lower" and alone[0][0, 0] == 0


def _alone(dt: int) -> bytes:
    npdt = helper.tensor_dtype_to_np_dtype(dt)
    g = helper.make_graph([helper.make_node("Clip", ["x", "zero"], ["a"], name="open_max")], "g",
                          [helper.make_tensor_value_info("x", dt, [1, 4])],
                          [helper.make_tensor_value_info("a", dt, [1, 4])],
                          [numpy_helper.from_array(np.array(0, npdt), "zero")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8).SerializeToString()


def _maxpool(x: np.ndarray) -> tuple[bytes, onnx.ModelProto]:
    node = helper.make_node("MaxPool", ["x"], ["y"], name="pool", kernel_shape=[2, 2], strides=[1, 1])
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", T.FLOAT, list(x.shape))],
                          [helper.make_tensor_value_info("y", T.FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    return m.SerializeToString(), m


def test_maxpool_nan_readings():
    """Row maxpool-nan: onnx.reference drops the NaN of a window (its largest number); onnxruntime and OpenVINO
    give NaN or a number of the window. Windows: [NaN, 1, 4, 5] (NaN first) and [1, 2, 5, NaN] (NaN last)."""
    from onnx.reference import ReferenceEvaluator
    x = np.arange(12, dtype=np.float32).reshape(1, 1, 3, 4)
    x[0, 0, 0, 0], x[0, 0, 1, 2] = np.nan, np.nan
    data, m = _maxpool(x)
    numbers = {(i, j): np.nanmax(x[0, 0, i:i + 2, j:j + 2]) for i in range(2) for j in range(3)}
    ref = ReferenceEvaluator(m).run(None, {"x": x})[0][0, 0]
    assert behaviour.reading("maxpool-nan", "onnx-reference") == "drops"
    assert all(ref[k] == v for k, v in numbers.items())
    for engine in ("onnxruntime", "openvino"):
        assert behaviour.reading("maxpool-nan", engine) == "window"
        got = engines_direct.run(engine, data, {"x": x})[0][0, 0]
        window = {k: x[0, 0, k[0]:k[0] + 2, k[1]:k[1] + 2] for k in numbers}
        assert all(np.isnan(got[k]) or got[k] in w for k, w in window.items()), (engine, got)


@pytest.mark.parametrize("opset", [11, 12, 13])
def test_float16_clip11_open_bound(opset):
    """Row onnxruntime-float16-clip11-open-bound: a float16 Clip-11 with its max left out keeps +inf on
    onnxruntime; from Clip-12 the omitted bound is 65504 there (row omitted-bound-default)."""
    g = helper.make_graph([helper.make_node("Clip", ["x", "zero"], ["y"], name="open_max")], "g",
                          [helper.make_tensor_value_info("x", T.FLOAT16, [1, 2])],
                          [helper.make_tensor_value_info("y", T.FLOAT16, [1, 2])],
                          [numpy_helper.from_array(np.array(0, np.float16), "zero")])
    data = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8).SerializeToString()
    got = engines_direct.run("onnxruntime", data, {"x": np.array([[np.inf, 1.0]], np.float16)})[0][0, 0]
    open_row = behaviour.reading("onnxruntime-float16-clip11-open-bound", "onnxruntime") == "open"
    limit_row = behaviour.reading("omitted-bound-default", "onnxruntime") == "limit"
    assert (got == np.inf and open_row) if opset == 11 else (got == 65504 and limit_row)


@pytest.mark.parametrize("dt", [T.FLOAT, T.FLOAT16], ids=["float32", "float16"])
def test_dynamic_clip_propagates_nan(dt):
    """Row openvino-clamp-dynamic-nan-propagates: a Clip whose max is a graph input (computed at run time) keeps
    NaN on OpenVINO, where one with constant bounds sends it to min (openvino-clamp-nan-to-lower)."""
    npdt = helper.tensor_dtype_to_np_dtype(dt)
    g = helper.make_graph([helper.make_node("Clip", ["x", "zero", "limit"], ["y"], name="run_time_max")], "g",
                          [helper.make_tensor_value_info("x", dt, [1, 2]),
                           helper.make_tensor_value_info("limit", dt, [])],
                          [helper.make_tensor_value_info("y", dt, [1, 2])],
                          [numpy_helper.from_array(np.array(0, npdt), "zero")])
    data = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8).SerializeToString()
    got = engines_direct.run("openvino", data, {"x": np.array([[np.nan, 7.0]], npdt), "limit": np.array(6, npdt)})
    assert behaviour.reading("openvino-clamp-dynamic-nan-propagates", "openvino") == "propagate"
    assert np.isnan(got[0][0, 0]) and got[0][0, 1] == 6
