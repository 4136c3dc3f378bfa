"""Generated inputs: seeded, with NaN, the infinities, beyond-float16 values and each directly fed clip's
bounds one ULP either side."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

from clipbridge.diff import inputs
from clipbridge.scan.patterns import find
from clipbridge.core.errors import ClipBridgeError
from tests.diff import models as M
from tests.diff.conftest import npz


def _model(nodes, inits=(), shape=(64,)):
    return onnx.load_from_string(M.graph(nodes, inits, shape=shape, opset=17))


def test_seeded_and_planted():
    """The edge probe's sample (issue 44: no longer the default one)."""
    m = _model([onnx.helper.make_node("Clip", ["x", "lo", "hi"], ["y"], name="c")],
               [M.const("lo", 0.5), M.const("hi", 6.0)])
    a = inputs.generate(m, list(find(m).values()), sample="edge")["x"]
    b = inputs.generate(m, list(find(m).values()), sample="edge")["x"]
    assert np.array_equal(a, b, equal_nan=True) and a.dtype == np.float32 and a.shape == (64,)
    assert np.isnan(a).sum() == 1 and np.isposinf(a).sum() >= 1 and np.isneginf(a).sum() >= 1
    assert {np.float32(7e4), np.float32(-7e4)} <= set(a[np.isfinite(a)].tolist())
    for bound in (0.5, 6.0):
        t = np.float32(bound)
        around = {np.nextafter(t, np.float32(-np.inf)), t, np.nextafter(t, np.float32(np.inf))}
        assert around <= set(a.tolist()), bound
    assert not np.array_equal(a, inputs.generate(m, list(find(m).values()), seed=1, sample="edge")["x"],
                              equal_nan=True)


def test_dynamic_dimensions_are_one():
    x = onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["n", 3])
    y = onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, ["n", 3])
    g = onnx.helper.make_graph([onnx.helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
    m = onnx.helper.make_model(g, opset_imports=[onnx.helper.make_opsetid("", 17)])
    assert inputs.generate(m, [])["x"].shape == (1, 3)


@pytest.mark.parametrize("arrays, message", [
    pytest.param({"x": np.zeros(64, np.float32), "z": np.zeros(1)}, "not a graph input", id="unknown-name"),
    pytest.param({}, "lacks graph input 'x'", id="missing"),
    pytest.param({"x": np.zeros(64, np.float64)}, "is float64, the graph input is float32", id="dtype"),
    pytest.param({"x": np.zeros((8, 8), np.float32)}, "rank 2", id="rank"),
])
def test_npz_checked_against_the_graph(arrays, message):
    m = _model([onnx.helper.make_node("Relu", ["x"], ["y"])])
    with pytest.raises(ClipBridgeError, match=message):
        inputs.read_npz(npz(**arrays), m)


def test_npz_with_pickled_objects_is_refused():
    m = _model([onnx.helper.make_node("Relu", ["x"], ["y"])])
    import io
    buf = io.BytesIO()
    np.savez(buf, x=np.array([{"a": 1}], dtype=object))
    with pytest.raises(ClipBridgeError, match="pickled"):
        inputs.read_npz(buf.getvalue(), m)
