"""app/clipbridge/scan/rewrite.py: every Clip gets explicit typed bounds at opset >= 11. The output passes onnx.checker's
full check, runs in onnxruntime, gives the original's outputs on a finite probe, and computes (per the
spec) what the original computes."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper, numpy_helper

from clipbridge.core.errors import ArtifactError, UnsupportedTarget
from clipbridge.core.evaluate import evaluate
from clipbridge.scan.report import scan
from clipbridge.scan.rewrite import rewrite
from tests.scan.models import BF16, F16, F32, I8, U8, external_bound_model, init, relu6_f32
from tests.scan.models import clip_model as _clip_model
from tests.scan.models import model as _model
from tests.scan.models import vi as _vi

F64 = onnx.TensorProto.DOUBLE
FLT_MAX = float(np.finfo(np.float32).max)
NP = {F32: np.float32, F16: np.float16, F64: np.float64, I8: np.int8, U8: np.uint8, BF16: ml_dtypes.bfloat16}


def clip_model(*args, **kw) -> onnx.ModelProto:
    return _clip_model(*args, shape=[None], **kw)


def model(*args, **kw) -> onnx.ModelProto:
    return _model(*args, shape=[None], **kw)


def vi(name, elem=F32, shape=(None,)) -> onnx.ValueInfoProto:
    return _vi(name, elem, shape)


def _finite_probe(np_dtype) -> np.ndarray:
    if np.issubdtype(np_dtype, np.integer):
        info = np.iinfo(np_dtype)
        vals = [info.min, -3, -1, 0, 1, 2, 3, 100, 199, 200, 201, info.max]
        return np.array([v for v in vals if info.min <= v <= info.max], dtype=np_dtype)
    fi = np.finfo(np_dtype)
    return np.array([float(fi.min), -1e4, -6.5, -1, -0.0, 0.0, 0.5, 5.75, 6, 7, 1e4, float(fi.max)], dtype=np_dtype)


def _run(model_bytes: bytes, x: np.ndarray) -> np.ndarray:
    sess = ort.InferenceSession(model_bytes, providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})[0]


def _meanings(model_bytes: bytes) -> list:
    return [s.resolved.meaning for s in scan(model_bytes, targets=["onnx"]).sites]


def _clips(m: onnx.ModelProto) -> list[onnx.NodeProto]:
    return [n for n in m.graph.node if n.op_type == "Clip"]


def _init_value(m: onnx.ModelProto, name: str) -> np.ndarray:
    return numpy_helper.to_array(next(t for t in m.graph.initializer if t.name == name))


@pytest.mark.parametrize("build,elem,target,opset,want_opset,want_bounds", [
    pytest.param(lambda: clip_model(6, F32), F32, "openvino", None, 11, (-FLT_MAX, FLT_MAX),
                 id="clip6-defaults"),
    pytest.param(lambda: clip_model(6, F32, -1.5, 2.5), F32, "directml:5_0", None, 11, (-1.5, 2.5),
                 id="clip6-attributes"),
    pytest.param(lambda: clip_model(11, F16, None, 6, np.float16), F16, "openvino", None, 11, (-65504.0, 6.0),
                 id="clip11-float16-absent-min"),
    pytest.param(lambda: clip_model(11, F16), F16, "directml:5_0", None, 11, (-65504.0, 65504.0),
                 id="clip11-float16-absent-both"),
    pytest.param(lambda: clip_model(13, I8, -3, None, np.int8), I8, "openvino", None, 13, (-3, 127),
                 id="clip13-int8"),
    pytest.param(lambda: clip_model(13, U8, None, 200, np.uint8), U8, "directml", None, 13, (0, 200),
                 id="clip13-uint8"),
    pytest.param(lambda: clip_model(10, F32, -1, 1), F32, "onnx", 13, 13, (-1.0, 1.0),
                 id="opset10-converted-to-13"),
    pytest.param(lambda: clip_model(6, F32, 0, 6), F32, "onnx:12", 12, 12, (0.0, 6.0), id="opset6-to-12"),
])
def test_rewritten_model_is_valid_runs_and_keeps_outputs(build, elem, target, opset, want_opset, want_bounds):
    original = build()
    out = rewrite(original.SerializeToString(), target, opset)
    rewritten = onnx.load_from_string(out.model_bytes)
    onnx.checker.check_model(rewritten, full_check=True)
    assert out.opset == want_opset
    assert [(o.domain, o.version) for o in rewritten.opset_import] == [("", want_opset)]
    (clip,) = _clips(rewritten)
    assert len(clip.input) == 3 and not clip.attribute  # explicit bounds, no attributes, no defaults
    lo, hi = (_init_value(rewritten, name) for name in clip.input[1:])
    assert lo.dtype == hi.dtype == NP[elem] and lo.shape == hi.shape == ()
    assert (lo.item(), hi.item()) == want_bounds
    assert out.done == [{"path": "graph", "node": "clip", "before": out.done[0]["before"],
                         "after": out.done[0]["after"], "bounds": [str(b) for b in want_bounds]}]
    assert out.skipped == []
    assert out.headers()["X-Clipbridge-Rewritten"] == "1" and out.headers()["X-Clipbridge-Opset"] == str(want_opset)
    x = _finite_probe(NP[elem])
    np.testing.assert_array_equal(_run(out.model_bytes, x), _run(original.SerializeToString(), x))
    # Per the spec too, the rewritten clip is the original's function (and no longer relies on a default).
    (before,), (after,) = _meanings(original.SerializeToString()), _meanings(out.model_bytes)
    assert (after.lo, after.hi) == (before.lo, before.hi)
    assert not after.lower.default and not after.upper.default


@pytest.mark.parametrize("elem,want", [
    pytest.param(F16, (-math.inf, math.inf), id="float16-defaults-are-inf"),
    pytest.param(F64, (-FLT_MAX, FLT_MAX), id="double-defaults-are-flt-max"),
])
def test_clip6_defaults_keep_their_meaning_through_version_conversion(elem, want):
    """Clip-6's defaults are the FLOAT attribute literals +-FLT_MAX cast to T: +-inf in float16, +-FLT_MAX in
    double. onnx.version_converter makes them Clip-11's lowest()/max() (65504, DBL_MAX): the rewrite must write
    the original's bounds, or a double input of 1e300 would no longer be clipped to FLT_MAX."""
    original = clip_model(6, elem)
    out = rewrite(original.SerializeToString(), "onnx")
    rewritten = onnx.load_from_string(out.model_bytes)
    onnx.checker.check_model(rewritten, full_check=True)
    (clip,) = _clips(rewritten)
    assert tuple(_init_value(rewritten, n).item() for n in clip.input[1:]) == want
    (before,), (after,) = _meanings(original.SerializeToString()), _meanings(out.model_bytes)
    x = np.array([-1e300, -7e4, -1, 0, 1, 7e4, 1e300] if elem == F64 else [-np.inf, -65504, 0, 65504, np.inf],
                 dtype=NP[elem])
    np.testing.assert_array_equal(evaluate(after, x), evaluate(before, x))


def test_untyped_clip_input_is_rewritten_in_the_output():
    """The clip's input type comes from shape inference; the edit must land in the model that is returned,
    and nothing else (no inferred value_info) may be added to it."""
    original = model([helper.make_node("Relu", ["x"], ["r"], name="relu"),
                      helper.make_node("Clip", ["r"], ["y"], name="clip")], elem=F16)
    out = rewrite(original.SerializeToString(), "openvino")
    rewritten = onnx.load_from_string(out.model_bytes)
    (clip,) = _clips(rewritten)
    assert list(clip.input) == ["r", "clip_min_clipbridge", "clip_max_clipbridge"]
    assert len(rewritten.graph.value_info) == 0
    x = _finite_probe(np.float16)
    np.testing.assert_array_equal(_run(out.model_bytes, x), _run(original.SerializeToString(), x))
    # Only the clip's inputs and two initializers changed.
    del rewritten.graph.initializer[:]
    del clip.input[1:]
    assert rewritten.graph == original.graph


def test_several_clips_and_a_subgraph_get_fresh_initializer_names():
    then_g = helper.make_graph([helper.make_node("Clip", ["t"], ["o"], name="inner")], "then", [], [vi("o")])
    else_g = helper.make_graph([helper.make_node("Identity", ["t"], ["o"])], "else", [], [vi("o")])
    nodes = [helper.make_node("Clip", ["x", "lo"], ["t"], name="clip"),
             helper.make_node("If", ["c"], ["y"], name="if", then_branch=then_g, else_branch=else_g)]
    # A name the rewrite would pick is taken already.
    original = model(nodes, [init("lo", -1, np.float32), init("clip_max_clipbridge", 0, np.float32)],
                     inputs=[vi("x"), vi("c", onnx.TensorProto.BOOL, [])])
    out = rewrite(original.SerializeToString(), "openvino")
    rewritten = onnx.load_from_string(out.model_bytes)
    onnx.checker.check_model(rewritten, full_check=True)
    assert {(d["path"], d["node"]) for d in out.done} == {("graph", "clip"), ("graph/if.then_branch", "inner")}
    outer = _clips(rewritten)[0]
    assert list(outer.input) == ["x", "clip_min_clipbridge", "clip_max_clipbridge_2"]
    inner = next(a.g for a in rewritten.graph.node[1].attribute if a.name == "then_branch")
    assert [t.name for t in inner.initializer] == ["inner_min_clipbridge", "inner_max_clipbridge"]
    x = np.array([-5, -1, 0, 3.5, 1e30], np.float32)
    for c in (True, False):
        feeds = {"x": x, "c": np.array(c)}
        got = ort.InferenceSession(out.model_bytes, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
        want = ort.InferenceSession(original.SerializeToString(),
                                    providers=["CPUExecutionProvider"]).run(None, feeds)[0]
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("build,reason", [
    pytest.param(lambda: model([helper.make_node("Clip", ["x", "lo"], ["y"], name="clip")],
                               inputs=[vi("x"), vi("lo", F32, [])]), "computed at run time", id="graph-input-bound"),
    pytest.param(lambda: model([helper.make_node("Clip", ["x", "lo"], ["y"], name="clip")],
                               [init("lo", 0, np.float32)], inputs=[vi("x"), vi("lo", F32, [])]),
                 "computed at run time", id="overridable-initializer-bound"),
    pytest.param(lambda: model([helper.make_node("f", ["x"], ["y"], domain="local")], functions=[
        helper.make_function("local", "f", ["X"], ["Y"], [helper.make_node("Clip", ["X"], ["Y"], name="fclip")],
                             [helper.make_opsetid("", 13)])], extra_opsets=[helper.make_opsetid("local", 1)]),
        "model-local function", id="clip-in-a-function"),
])
def test_clips_that_cannot_be_rewritten_are_skipped_and_left_alone(build, reason):
    original = build()
    out = rewrite(original.SerializeToString(), "openvino")
    assert out.done == [] and len(out.skipped) == 1 and reason in out.skipped[0]["reason"]
    assert onnx.load_from_string(out.model_bytes) == original
    assert out.headers()["X-Clipbridge-Skipped"] == "1"


def test_min_max_pairs_are_reported_by_scan_not_rewritten():
    from tests.scan.models import minmax_model
    original = minmax_model("Min", 0, 6, np.float32, F32)
    out = rewrite(original.SerializeToString(), "openvino")
    assert out.done == [] and out.skipped == []
    assert onnx.load_from_string(out.model_bytes) == original


@pytest.mark.parametrize("data,target,opset,error,message", [
    pytest.param(lambda: external_bound_model("../../etc/passwd"), "openvino", None, ArtifactError,
                 "external data", id="external-data-refused"),
    pytest.param(lambda: relu6_f32(), "openvino", 10, UnsupportedTarget, "opset >= 11", id="opset-below-11"),
    pytest.param(lambda: relu6_f32(), "openvino", 500, UnsupportedTarget, "newer than this onnx package knows",
                 id="opset-unknown"),
    pytest.param(lambda: clip_model(500, F32, 0, 6, np.float32), "openvino", None, UnsupportedTarget,
                 "newer than this onnx package knows", id="model-opset-unknown"),
    pytest.param(lambda: relu6_f32(), "caffe2", None, UnsupportedTarget, "unknown dialect", id="bad-target"),
    pytest.param(lambda: b'<?xml version="1.0"?><net version="11"/>', "openvino", None, ArtifactError,
                 "rewrite takes an ONNX model", id="ir-refused"),
    pytest.param(lambda: b"\x08\x08\x3a\xff\xff\xff\x0f", "openvino", None, ArtifactError, "truncated",
                 id="truncated"),
])
def test_rewrite_refusals(data, target, opset, error, message):
    d = data()
    with pytest.raises(error, match=message):
        rewrite(d if isinstance(d, bytes) else d.SerializeToString(), target, opset)


def test_rewrite_never_weakens_an_exact_translation():
    """The before/after statuses: a Clip-6 whose float attribute is exact stays exact for the target."""
    out = rewrite(clip_model(6, F16, 0, 6).SerializeToString(), "openvino", 13)
    assert [(d["before"], d["after"]) for d in out.done] == [("exact", "exact")]
