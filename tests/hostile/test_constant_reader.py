"""Issue 34: every constant the clip-like patterns, diff and fix read goes through one checked reader
(app/clipbridge/scan/constant_reader.py): a tensor of any type, dims or encoding in any place they read is a value, no
constant, or a 4xx naming it; never another exception, never a 5xx."""

from __future__ import annotations

import onnx
import pytest
from hypothesis import HealthCheck, given, settings

from clipbridge.core.errors import ClipBridgeError
from clipbridge.fix.apply import find_sites
from clipbridge.scan.patterns import find
from tests.hostile.places import clip_like_models


@settings(max_examples=300, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(model=clip_like_models())
def test_the_patterns_and_fix_read_any_constant_safely(model):
    m = onnx.load_from_string(model)
    for read in (find, lambda m: find_sites(m)):
        try:
            read(m)
        except ClipBridgeError as exc:
            assert 400 <= exc.status < 500 and exc.loc
        except onnx.shape_inference.InferenceError:
            pass  # fix infers shapes first (in its sandboxed child, where the route turns this into a 400)


@settings(max_examples=30, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(model=clip_like_models())
def test_inspect_and_diff_never_5xx_on_any_constant(hostile_client, model):
    for r in (hostile_client.post("/v1/models/inspect", content=model,
                                  headers={"content-type": "application/octet-stream"}),
              hostile_client.post("/v1/models/diff", files={"model": ("m.onnx", model)})):
        assert r.status_code < 500, (r.status_code, r.text[:300])


@pytest.mark.parametrize("value", ["abc", [1.0, 2.0]], ids=["string", "floats"])
def test_an_attribute_of_the_wrong_type_is_a_400(value):
    from onnx import TensorProto, helper
    node = helper.make_node("HardSigmoid", ["x"], ["y"], name="n")
    node.attribute.append(helper.make_attribute("alpha", value))
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])
    with pytest.raises(ClipBridgeError, match="attribute 'alpha' of HardSigmoid node 'n'"):
        find(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))
