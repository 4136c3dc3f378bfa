"""The LiteRT side of the chain without litert-torch: a MINIMUM -> MAXIMUM clamp written by the TFLite dialect's
flatbuffer builder, read by the chain's graph reader and run on ai-edge-litert with each delegate. The engine is the
oracle for `nan-to-constant-builtin` (builtin kernels) and for XNNPACK keeping NaN."""

from __future__ import annotations

import math

import numpy as np
import pytest

from clipbridge.chain import child_engines, rules
from clipbridge.dialects.tflite.flatbuffer import Graph, build_model

pytest.importorskip("ai_edge_litert")
CLAMP = {"node": "t", "op": "clamp", "lo": -2.0, "hi": 2.0}
X = np.array([np.nan, np.inf, -np.inf, 3.4e38, 1.0, -1.0, 5.0, -5.0], np.float32)


@pytest.fixture(scope="module")
def model() -> bytes:
    return build_model(Graph("MINIMUM_MAXIMUM", "float32", (8,), -2.0, 2.0))


def test_the_graph_reader_sees_the_clamp(model: bytes) -> None:
    ops = child_engines.tflite_graph(model)["ops"]
    assert [(op["type"], op["operands"]) for op in ops] == \
        [("MINIMUM", [("tensor", None), ("const", 2.0)]), ("MAXIMUM", [("tensor", None), ("const", -2.0)])]


@pytest.mark.parametrize(("stage", "builtin"), [
    pytest.param("tflite", False, id="xnnpack"),
    pytest.param("tflite:builtin", True, id="builtin-kernels"),
])
def test_the_rules_predict_what_each_delegate_gives(model: bytes, stage: str, builtin: bool) -> None:
    group = child_engines.tflite_graph(model)["ops"]
    got = child_engines.run_tflite(model, [X], builtin, [])["outputs"][0]
    for v, out in zip(X.tolist(), got.tolist()):
        want = rules.torch_value(CLAMP, v)
        if not rules.same(want, out):  # a difference from torch: some rule must predict exactly this value
            assert any(r(CLAMP, group, stage, v) is not None and rules.same(r(CLAMP, group, stage, v), out)
                       for r in rules.RULES.values()), (stage, v, out)
    nan_out = float(got[0])
    assert math.isnan(nan_out) if not builtin else nan_out == 2.0
