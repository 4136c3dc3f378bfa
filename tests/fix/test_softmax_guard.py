"""The fix's Softmax NaN guard (rules.softmax_nan_guard, behaviour rows softmax-nan-row and
reducesum-propagates-nan): on a model whose Softmax sees rows holding NaN or +inf, `fix` from onnxruntime to
OpenVINO writes the guard and proves `equal`, and the independent oracle (tests/engines_direct.py) agrees: the
written model on OpenVINO gives what the original gives on onnxruntime, rows with NaN and clean rows alike."""

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


@pytest.mark.parametrize("case", sorted(CASES), ids=sorted(CASES))
def test_softmax_guard_on_engines(case):
    op, axis, dt = CASES[case]
    model, feeds = _model(op, axis, dt), _feeds(dt, axis)
    data = model.SerializeToString()
    reference = engines_direct.run("onnxruntime", data, feeds)
    before = engines_direct.run("openvino", data, feeds)
    # The row the guard fixes: the oracle sees the engines differ on the original (softmax-nan-row holds here).
    assert not engines_direct.agree(reference, before)
    out = fix(data, _npz(feeds), "onnxruntime", "openvino", "model", rounds=1, execute=direct)
    rules = [r["rule"] for r in out.body["rules_applied"]]
    assert rules == ["softmax-nan-guard"], out.body["rules_applied"]
    after = engines_direct.run("openvino", out.model, feeds)
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
