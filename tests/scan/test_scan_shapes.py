"""A clip's shape comes from value_info, the clip's own output, or onnx shape inference, whichever knows it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto as T, helper, numpy_helper

from clipbridge.dialects.kit.common import Mode
from clipbridge.scan.report import scan

ROOT = Path(__file__).resolve().parents[2]


def model(out_shape, with_value_info=False):
    """x [2, 8] -> Relu -> h -> Clip(h, 0, 6): h's shape is known only to inference (or to h's value_info)."""
    nodes = [helper.make_node("Relu", ["x"], ["h"], name="relu"),
             helper.make_node("Clip", ["h", "lo", "hi"], ["y"], name="clip")]
    vi = [helper.make_tensor_value_info("h", T.FLOAT, [2, 8])] if with_value_info else []
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", T.FLOAT, [2, 8])],
                          [helper.make_tensor_value_info("y", T.FLOAT, out_shape)],
                          [numpy_helper.from_array(np.array(0, np.float32), "lo"),
                           numpy_helper.from_array(np.array(6, np.float32), "hi")], value_info=vi)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()


@pytest.mark.parametrize("data,shape", [
    pytest.param(model(None, with_value_info=True), [2, 8], id="value-info"),
    pytest.param(model([2, 8]), [2, 8], id="the-clips-output"),
    pytest.param(model(None), [2, 8], id="shape-inference"),
])
def test_shape_is_known_and_directml_needs_no_placeholder(data, shape):
    body = scan(data, None, ["directml:5_0"], Mode.PRESERVE).to_json()
    clip = body["clips"][0]
    assert clip["shape"] == shape
    codes = [f["code"] for f in clip["translations"][0]["findings"]]
    assert "shape-unknown" not in codes, codes  # float DirectML still drifts: its NaN handling is undocumented
    assert clip["translations"][0]["target"]["desc"]["InputTensor"]["Sizes"] == shape


def test_readme_example_model_has_shapes():
    body = scan((ROOT / "docs/example.onnx").read_bytes(), None, ["directml:5_0"], Mode.PRESERVE).to_json()
    assert [c["shape"] for c in body["clips"]] == [[1, 64]] * 5
    assert not [f for c in body["clips"] for t in c["translations"] for f in t["findings"]
                if f["code"] == "shape-unknown"]
