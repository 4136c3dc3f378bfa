"""Every engine fact the rules rely on (app/clipbridge/fix/facts.py), measured again on the installed engines: what a NaN
input becomes at each clip-like node, and which value an omitted Clip bound takes."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

from clipbridge.diff import engines as diff_engines
from clipbridge.fix import facts
from clipbridge.fix.apply import find_sites
from clipbridge.engines.sandbox import run_isolated
from tests.fix import models

pytest.importorskip("onnxruntime")
pytest.importorskip("openvino")
pytestmark = pytest.mark.engines

X = [np.nan, -np.inf, np.inf, -3.5, 0.5, 7.25]
FACT_MODELS = {k: models.CASES[k] for k in ("clip-0-6", "clip-omitted-min", "clip-omitted-max", "clip13-min-gt-max",
                                            "clip6-0-6", "relu", "hardsigmoid", "max-x-0", "min-x-6", "max-0-x",
                                            "f16-clip-omitted-max", "f16-clip-omitted-min")}


def _run(engine: str, m: onnx.ModelProto) -> np.ndarray:
    dt = onnx.helper.tensor_dtype_to_np_dtype(m.graph.input[0].type.tensor_type.elem_type)
    x = np.resize(np.array(X, dtype=np.float64), models.SHAPE).astype(dt)
    r = run_isolated("test", diff_engines.run, engine, m.SerializeToString(), {"x": x}, [], "model")
    return r["values"]["y"].reshape(-1)[: len(X)]


@pytest.mark.parametrize("engine", facts.ENGINES)
@pytest.mark.parametrize("case", sorted(FACT_MODELS))
def test_nan_input(case, engine):
    m = FACT_MODELS[case]()
    site = find_sites(m)[0][0]
    expected = facts.nan_output(engine, site.node)
    got = _run(engine, m)[0]
    if expected is facts.PROPAGATE:
        assert np.isnan(got)
    else:
        assert got == np.asarray(expected, dtype=site.node.dtype).reshape(-1)[0]


@pytest.mark.parametrize("engine", facts.ENGINES)
@pytest.mark.parametrize("case,side", [("clip-omitted-min", "min"), ("clip-omitted-max", "max"),
                                       ("f16-clip-omitted-min", "min"), ("f16-clip-omitted-max", "max")])
def test_omitted_bound(case, side, engine):
    m = FACT_MODELS[case]()
    site = find_sites(m)[0][0]
    got = _run(engine, m)[1 if side == "min" else 2]  # -inf for an omitted min, +inf for an omitted max
    assert float(got) == facts.default_bound(engine, site.node.dtype, side)


@pytest.mark.parametrize("engine", facts.ENGINES)
def test_crossed_clip6_loads(engine):
    m = models.clip(6.0, 0.0, opset=6)
    if facts.loads_crossed_clip6(engine):
        assert (_run(engine, m)[3:] == facts.crossed_value(engine, find_sites(m)[0][0].node)).all()
    else:
        with pytest.raises(Exception):
            _run(engine, m)


@pytest.mark.parametrize("engine", facts.ENGINES)
@pytest.mark.parametrize("dt", [onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16], ids=["float32", "float16"])
def test_thresholded_relu_zero(engine, dt):
    """The nan-to-zero rule's form, ThresholdedRelu(alpha=0) after a node whose outputs are >= 0: where the facts
    say it drops NaN, NaN, -inf and -0 become +0 and every other value is kept bit for bit; elsewhere NaN stays."""
    node = onnx.helper.make_node("ThresholdedRelu", ["c"], ["y"], name="n_tr", alpha=0.0)
    m = models.block([node], [], opset=10, dt=dt, conv=False)
    got = _run(engine, m)
    x = np.asarray(X, dtype=got.dtype)
    if facts.thresholded_relu_drops_nan(engine):
        assert got[0] == 0 and not np.signbit(got[0]) and got[1] == 0
    else:
        assert np.isnan(got[0])
    assert got[2] == np.inf and got[3] == 0 and (got[4:] == x[4:]).all()


@pytest.mark.parametrize("engine", facts.ENGINES)
def test_thresholded_relu_zero_signs(engine):
    """-0 into ThresholdedRelu(alpha=0): on the engines that drop NaN it gives +0, like OpenVINO's Clamp/Relu (A).
    Where NaN propagates (OpenVINO) the op is measured too, not skipped: it computes x * (x > 0), so NaN stays NaN
    and a negative x or -0 gives -0, one more reason the rule never writes ThresholdedRelu for that engine."""
    node = onnx.helper.make_node("ThresholdedRelu", ["c"], ["y"], name="n_tr", alpha=0.0)
    m = models.block([node], [], opset=10, conv=False)
    x = np.resize(np.array([-0.0, 0.0, np.nan, -1.0, 2.0], dtype=np.float32), models.SHAPE)
    r = run_isolated("test", diff_engines.run, engine, m.SerializeToString(), {"x": x}, [], "model")
    y = r["values"]["y"].reshape(-1)[:5]
    if facts.thresholded_relu_drops_nan(engine):
        expected = np.array([0.0, 0.0, 0.0, 0.0, 2.0], np.float32)
    else:
        with np.errstate(invalid="ignore"):
            expected = x.reshape(-1)[:5] * (x.reshape(-1)[:5] > 0)
    assert np.array_equal(y, expected, equal_nan=True) and (np.signbit(y) == np.signbit(expected)).all(), y


@pytest.mark.parametrize("engine", facts.ENGINES)
@pytest.mark.parametrize("nesting", ["min-of-max", "max-of-min"])
def test_min_max_chain_with_constants_first(engine, nesting):
    """Why the OpenVINO NaN guard stays a Where: Min(6, Max(0, x)) with the constants first (each op alone
    propagates NaN there) is fused into a Clamp, NaN -> 0, on the engines facts.fuses_min_max_into_clamp names."""
    inner, outer = (("Max", "lo"), ("Min", "hi")) if nesting == "min-of-max" else (("Min", "hi"), ("Max", "lo"))
    nodes = [onnx.helper.make_node(inner[0], [inner[1], "c"], ["t"], name="n_inner"),
             onnx.helper.make_node(outer[0], [outer[1], "t"], ["y"], name="n_outer")]
    inits = [onnx.numpy_helper.from_array(np.array(v, np.float32), k) for k, v in (("lo", 0.0), ("hi", 6.0))]
    got = _run(engine, models.block(nodes, inits, conv=False))
    if facts.fuses_min_max_into_clamp(engine):
        assert got[0] == 0
    else:
        assert np.isnan(got[0])
    assert list(got[1:]) == [0.0, 6.0, 0.0, 0.5, 6.0]
