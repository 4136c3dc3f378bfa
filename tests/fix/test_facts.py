"""Every engine fact the rules rely on (app/fix/facts.py), measured again on the installed engines: what a NaN
input becomes at each clip-like node, and which value an omitted Clip bound takes."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

from app.diff import engines as diff_engines
from app.fix import facts
from app.fix.apply import find_sites
from app.sandbox import run_isolated
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
