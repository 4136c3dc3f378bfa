"""The fix's NaN guards beyond clips, on the engines. Softmax (rules.softmax_nan_guard, behaviour rows
softmax-nan-row and reducesum-propagates-nan): on a model whose Softmax sees rows holding NaN or +inf, `fix` from
onnxruntime to OpenVINO writes the guard and proves `equal`, and the independent oracle (tests/engines_direct.py)
agrees: the written model on OpenVINO gives what the original gives on onnxruntime, rows with NaN and clean rows
alike. MaxPool (rules.maxpool_nan_guard, row maxpool-nan): from onnx.reference, checked the same way."""

from __future__ import annotations

import io

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T, helper

from clipbridge import behaviour
from clipbridge.diff.run import direct
from clipbridge.fix.service import fix
from tests import engines_direct

pytest.importorskip("onnxruntime")
pytest.importorskip("openvino")
pytestmark = pytest.mark.engines

NAN, INF = np.nan, np.inf


def _model(op: str, axis: int, dt: int) -> onnx.ModelProto:
    nodes = [helper.make_node(op, ["x"], ["y"], name="sm", axis=axis)]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", dt, [3, 6])],
                          [helper.make_tensor_value_info("y", dt, [3, 6])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    onnx.checker.check_model(m, full_check=True)
    return m


def _feeds(dt: int, axis: int) -> dict[str, np.ndarray]:
    x = np.random.default_rng(3).standard_normal((3, 6))
    if axis in (-1, 1):
        x[0, 2], x[1, 4], x[1, 0] = NAN, INF, -INF  # row 0 NaN, row 1 +inf (and -inf), row 2 clean
    else:
        x[0, 2], x[2, 4] = NAN, INF  # columns 2 and 4 hold a non-finite value; the others are clean
    return {"x": x.astype(helper.tensor_dtype_to_np_dtype(dt))}


def _npz(feeds: dict[str, np.ndarray]) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **feeds)
    return buf.getvalue()


CASES = {
    "softmax-last-axis-f32": ("Softmax", -1, T.FLOAT),
    "softmax-axis-0-f32": ("Softmax", 0, T.FLOAT),
    "logsoftmax-last-axis-f32": ("LogSoftmax", -1, T.FLOAT),
    "softmax-last-axis-f16": ("Softmax", 1, T.FLOAT16),
}


PAIRS = [pytest.param(("onnxruntime", "openvino"), id="ort->ov"),
         pytest.param(("openvino", "onnxruntime"), id="ov->ort")]


@pytest.mark.parametrize("pair", PAIRS)
@pytest.mark.parametrize("case", sorted(CASES), ids=sorted(CASES))
def test_softmax_guard_on_engines(case, pair):
    op, axis, dt = CASES[case]
    model, feeds = _model(op, axis, dt), _feeds(dt, axis)
    data = model.SerializeToString()
    reference = engines_direct.run(pair[0], data, feeds)
    before = engines_direct.run(pair[1], data, feeds)
    # The row the guard fixes: the oracle sees the engines differ on the original (softmax-nan-row holds here).
    assert not engines_direct.agree(reference, before)
    out = fix(data, _npz(feeds), pair[0], pair[1], "model", rounds=1, execute=direct)
    rules = [r["rule"] for r in out.body["rules_applied"]]
    assert rules == ["softmax-nan-guard"], out.body["rules_applied"]
    after = engines_direct.run(pair[1], out.model, feeds)
    assert engines_direct.agree(reference, after)
    assert out.body["verdict"] == "equal", out.body["proof"]["verdict"]
    clean = [i for i in range(3) if np.isfinite(feeds["x"][i] if axis != 0 else feeds["x"][:, i]).all()]
    for i in clean:  # a clean row (column for axis 0) is left bit for bit
        sel = (i, slice(None)) if axis != 0 else (slice(None), i)
        assert np.array_equal(after[0][sel], before[0][sel])


def test_the_guard_is_the_rows_reading():
    """The rule fires only for the direction its row gives: A the whole row NaN, B NaN only at some elements."""
    r = behaviour.row("softmax-nan-row")
    assert r.reading["onnxruntime"] == "row" and r.reading["openvino"] == "element"


def _maxpool(dt: int) -> onnx.ModelProto:
    node = helper.make_node("MaxPool", ["x"], ["y"], name="pool", kernel_shape=[2, 2], strides=[1, 1])
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", dt, [1, 2, 4, 5])],
                          [helper.make_tensor_value_info("y", dt, [1, 2, 3, 4])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    onnx.checker.check_model(m, full_check=True)
    return m


@pytest.mark.parametrize("target", ["onnxruntime", "openvino"])
@pytest.mark.parametrize("dt", [T.FLOAT, T.FLOAT16], ids=["float32", "float16"])
def test_maxpool_guard_on_engines(target, dt):
    """Row maxpool-nan: onnx.reference gives a window's largest number where the target may give the NaN; the
    fix reads NaN as -inf before the pool, proves `equal`, and the written model on the target gives what
    onnx.reference (run directly) gives on the original, the NaN at every place of a window."""
    from onnx.reference import ReferenceEvaluator
    model = _maxpool(dt)
    x = np.random.default_rng(5).standard_normal((1, 2, 4, 5))
    x[0, 0, 0, 0], x[0, 0, 1, 2], x[0, 1, 2, 3], x[0, 1, 3, 0] = NAN, NAN, NAN, -INF
    feeds = {"x": x.astype(helper.tensor_dtype_to_np_dtype(dt))}
    data = model.SerializeToString()
    reference = ReferenceEvaluator(model).run(None, feeds)
    out = fix(data, _npz(feeds), "onnx-reference", target, "model", rounds=1, execute=direct)
    # Where the target already gives the reference's on these windows (OpenVINO's compare order may drop the
    # NaN as onnx.reference does, by host), the diff finds no cause and the fix writes nothing.
    differs = not engines_direct.agree(reference, engines_direct.run(target, data, feeds))
    want = ["maxpool-nan-guard"] if differs else []
    assert [r["rule"] for r in out.body["rules_applied"]] == want, out.body["rules_applied"]
    assert engines_direct.agree(reference, engines_direct.run(target, out.model, feeds))
    assert out.body["verdict"] == "equal", out.body["proof"]["verdict"]
