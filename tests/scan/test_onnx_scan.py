"""app/clipbridge/scan/onnx_scan.py through app/clipbridge/scan/report.scan: every Clip opset, bounds from every kind of constant,
dynamic and absent bounds, Min/Max pairs (checked against onnxruntime), ScaleBias candidates, subgraphs and
model-local functions, dtypes, and the translations each site gets (the same as /v1/translate's)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import ml_dtypes
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper, numpy_helper
from pydantic import TypeAdapter

from clipbridge.core.errors import ArtifactError
from clipbridge.core.evaluate import evaluate
from clipbridge.core.meaning import Order
from clipbridge.scan.report import scan, target_from_text, worst_status
from clipbridge.service.specs import Spec
from clipbridge.service.translate import translate
from tests.scan.models import (BF16, F16, F32, I8, I32, I64, U8, clip_model, cyclic_model, external_bound_model,
                               external_tensor, init, minmax_model, model, vi)

TARGETS = ["onnx", "openvino", "directml", "onnx:11", "directml:5_0", "openvino:opset1"]
TARGET_OBJECTS = [target_from_text(t) for t in TARGETS]
FLT_MAX = float(np.finfo(np.float32).max)
F64 = onnx.TensorProto.DOUBLE


def const_node(out: str, **attr) -> onnx.NodeProto:
    return helper.make_node("Constant", [], [out], name=f"{out}_const", **attr)


def clip13(ins, inits=(), elem=F32, nodes_before=(), **kw) -> onnx.ModelProto:
    return model([*nodes_before, helper.make_node("Clip", ins, ["y"], name="clip")], inits, elem=elem, **kw)


@dataclass
class Expect:
    pattern: str
    dtype: str | None
    lo: float | int | None = None
    hi: float | int | None = None
    error: str | None = None
    codes: set[str] = field(default_factory=set)  # the site's own finding codes
    dynamic: bool = False
    path: str = "graph"


F16_MAX = 65504.0
CASES = [
    # --- Clip-1 and Clip-6: float attributes ----------------------------------------------------------------
    pytest.param(lambda: clip_model(1, F32, -1, 1), Expect("Clip-1", "float32", -1.0, 1.0), id="clip1-attrs"),
    pytest.param(lambda: clip_model(1, F32), Expect("Clip-1", "float32", -FLT_MAX, FLT_MAX), id="clip1-no-attrs"),
    pytest.param(lambda: clip_model(6, F32, 0, 6), Expect("Clip-6", "float32", 0.0, 6.0), id="clip6-attrs"),
    pytest.param(lambda: clip_model(6, F32), Expect("Clip-6", "float32", -FLT_MAX, FLT_MAX),
                 id="clip6-defaults-float"),
    pytest.param(lambda: clip_model(6, F16), Expect("Clip-6", "float16", -math.inf, math.inf),
                 id="clip6-defaults-float16-overflow-to-inf"),
    pytest.param(lambda: clip_model(6, F16, 0.1, None), Expect("Clip-6", "float16", float(np.float16(0.1)),
                                                                math.inf), id="clip6-float16-attr-cast"),
    pytest.param(lambda: clip_model(6, F64, None, 0.1), Expect("Clip-6", "float64", -FLT_MAX,
                                                                float(np.float32(0.1))),
                 id="clip6-double-attr-is-float32"),
    pytest.param(lambda: clip_model(10, F32, -2, 2), Expect("Clip-6", "float32", -2.0, 2.0),
                 id="opset10-is-clip6"),
    # --- Clip-11+: typed inputs -------------------------------------------------------------------------------
    pytest.param(lambda: clip_model(11, F32, 0, 6, np.float32), Expect("Clip-11", "float32", 0.0, 6.0),
                 id="clip11-initializers"),
    pytest.param(lambda: clip_model(11, F16), Expect("Clip-11", "float16", -F16_MAX, F16_MAX),
                 id="clip11-float16-absent-bounds"),
    pytest.param(lambda: clip_model(11, F32, None, 6, np.float32), Expect("Clip-11", "float32", -FLT_MAX, 6.0),
                 id="clip11-absent-min-empty-name"),
    pytest.param(lambda: clip_model(12, I8, -5, 5, np.int8), Expect("Clip-12", "int8", -5, 5),
                 id="clip12-int8"),
    pytest.param(lambda: clip_model(13, F32, 0, 6, np.float32), Expect("Clip-13", "float32", 0.0, 6.0),
                 id="clip13-initializers"),
    pytest.param(lambda: clip_model(18, F32, 0, 6, np.float32), Expect("Clip-13", "float32", 0.0, 6.0),
                 id="opset18-is-clip13"),
    pytest.param(lambda: clip_model(13, F32, 3, 1, np.float32), Expect("Clip-13", "float32", 3.0, 1.0),
                 id="clip13-min-greater-than-max"),
    # --- where a bound's value comes from ---------------------------------------------------------------------
    pytest.param(lambda: clip13(["x", "lo", "hi"], nodes_before=[
        const_node("lo", value=numpy_helper.from_array(np.array(-1, np.float32))),
        const_node("hi", value=numpy_helper.from_array(np.array(1, np.float32)))]),
        Expect("Clip-13", "float32", -1.0, 1.0), id="constant-node-value"),
    pytest.param(lambda: clip13(["x", "lo", "hi"], nodes_before=[const_node("lo", value_float=-0.5),
                                                                 const_node("hi", value_float=0.5)]),
                 Expect("Clip-13", "float32", -0.5, 0.5), id="constant-node-value-float"),
    pytest.param(lambda: clip13(["x", "lo", "hi"], elem=I64, nodes_before=[const_node("lo", value_int=-7),
                                                                           const_node("hi", value_int=7)]),
                 Expect("Clip-13", "int64", -7, 7), id="constant-node-value-int"),
    pytest.param(lambda: clip13(["x", "lo2", "hi1"], [init("lo", 0, np.float32), init("hi", 6, np.float32)],
                                nodes_before=[helper.make_node("Identity", ["lo"], ["lo1"]),
                                              helper.make_node("Identity", ["lo1"], ["lo2"]),
                                              helper.make_node("Identity", ["hi"], ["hi1"])]),
                 Expect("Clip-13", "float32", 0.0, 6.0), id="identity-chain-to-initializers"),
    pytest.param(lambda: clip13(["x", "lo1", ""], nodes_before=[
        const_node("lo", value_float=1.0), helper.make_node("Identity", ["lo"], ["lo1"])]),
        Expect("Clip-13", "float32", 1.0, FLT_MAX), id="identity-after-constant-node"),
    pytest.param(lambda: clip13(["x"]), Expect("Clip-13", "float32", -FLT_MAX, FLT_MAX), id="absent-bounds"),
    pytest.param(lambda: clip13(["x", "", ""]), Expect("Clip-13", "float32", -FLT_MAX, FLT_MAX),
                 id="absent-bounds-empty-names"),
    # --- dynamic bounds ---------------------------------------------------------------------------------------
    pytest.param(lambda: clip13(["x", "lo", "hi"], [init("hi", 6, np.float32)],
                                inputs=[vi("x"), vi("lo", F32, [])]),
                 Expect("Clip-13", "float32", error=None, codes={"dynamic-bounds"}, dynamic=True),
                 id="dynamic-graph-input"),
    pytest.param(lambda: clip13(["x", "lo", "hi"], [init("lo", 0, np.float32), init("hi", 6, np.float32)],
                                inputs=[vi("x"), vi("lo", F32, [])]),
                 Expect("Clip-13", "float32", codes={"dynamic-bounds"}, dynamic=True),
                 id="dynamic-initializer-that-is-a-graph-input"),
    pytest.param(lambda: clip13(["x", "lo", "hi"], [init("a", 1, np.float32), init("hi", 6, np.float32)],
                                nodes_before=[helper.make_node("Neg", ["a"], ["lo"], name="neg")]),
                 Expect("Clip-13", "float32", codes={"dynamic-bounds"}, dynamic=True), id="dynamic-computed-bound"),
    # --- dtypes ---------------------------------------------------------------------------------------------
    pytest.param(lambda: clip_model(13, I8, -128, 127, np.int8), Expect("Clip-13", "int8", -128, 127), id="int8"),
    pytest.param(lambda: clip_model(13, U8, 3, 250, np.uint8), Expect("Clip-13", "uint8", 3, 250), id="uint8"),
    pytest.param(lambda: clip_model(13, F16, 0, 6, np.float16), Expect("Clip-13", "float16", 0.0, 6.0),
                 id="float16"),
    pytest.param(lambda: clip_model(13, BF16, 0, 6.5, ml_dtypes.bfloat16), Expect("Clip-13", "bfloat16", 0.0, 6.5),
                 id="bfloat16"),
    pytest.param(lambda: clip_model(13, I64, -(2 ** 62) - 1, 2 ** 53 + 1, np.int64),
                 Expect("Clip-13", "int64", -(2 ** 62) - 1, 2 ** 53 + 1), id="int64-beyond-double"),
    # --- errors: an error site, not an exception --------------------------------------------------------------
    pytest.param(lambda: clip_model(6, I32, 0, 6), Expect("Clip-6", "int32", error="Clip-6 does not take INT32"),
                 id="clip6-int32-unsupported"),
    pytest.param(lambda: clip_model(11, I8, 0, 6, np.int8), Expect("Clip-11", "int8",
                                                                    error="Clip-11 does not take INT8"),
                 id="clip11-int8-unsupported"),
    pytest.param(lambda: clip_model(12, BF16, 0, 6, ml_dtypes.bfloat16),
                 Expect("Clip-12", "bfloat16", error="Clip-12 does not take BFLOAT16"), id="clip12-bfloat16"),
    pytest.param(lambda: clip13(["x", "lo"], [init("lo", 0, np.float32)], elem=F16),
                 Expect("Clip-13", "float16", error="the min bound is float32 but the input is float16"),
                 id="bound-type-differs-from-input"),
    pytest.param(lambda: clip13(["x", "lo"], [init("lo", [0, 1], np.float32)]),
                 Expect("Clip-13", "float32", error="takes a scalar"), id="non-scalar-bound"),
    pytest.param(lambda: model([helper.make_node("Clip", ["x"], ["y"], name="clip", min=1)], opset=6),
                 Expect("Clip-6", "float32", error="must be a float"), id="clip6-int-attribute"),
    # --- types not in value_info ------------------------------------------------------------------------------
    pytest.param(lambda: model([helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Clip", ["r"], ["y"],
                                                                                        name="clip")],
                               elem=F16, opset=13),
                 Expect("Clip-13", "float16", -F16_MAX, F16_MAX), id="type-by-shape-inference"),
    pytest.param(lambda: model([helper.make_node("Mystery", ["x"], ["r"], domain="custom"),
                                helper.make_node("Clip", ["r", "lo"], ["y"], name="clip")],
                               [init("lo", 0, np.float16)], elem=F16, opset=13,
                               extra_opsets=[helper.make_opsetid("custom", 1)]),
                 Expect("Clip-13", "float16", 0.0, F16_MAX), id="type-from-the-bound-when-nothing-else"),
    # --- declared shapes ---------------------------------------------------------------------------------------
    pytest.param(lambda: clip_model(13, F32, 0, 6, np.float32, shape=[-1, 3]),
                 Expect("Clip-13", "float32", 0.0, 6.0), id="negative-dim-is-unknown"),
    pytest.param(lambda: clip_model(13, F32, 0, 6, np.float32, shape=[2 ** 62] * 3),
                 Expect("Clip-13", "float32", error="2^63-1"), id="shape-past-int64-is-an-error-site"),
    pytest.param(lambda: model([helper.make_node("Mystery", ["x"], ["r"], domain="custom"),
                                helper.make_node("Clip", ["r"], ["y"], name="clip")], elem=F16, opset=13,
                               extra_opsets=[helper.make_opsetid("custom", 1)]),
                 Expect("Clip-13", None, error="cannot infer the element type", codes={"shape-unknown"}),
                 id="type-unknown"),
]


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b and type(a) is type(b)


def _one_site(m: onnx.ModelProto):
    result = scan(m.SerializeToString(), targets=TARGETS)
    assert len(result.sites) == 1, [s.pattern for s in result.sites]
    return result, result.sites[0], result.to_json()["clips"][0]


@pytest.mark.parametrize("build,want", CASES)
def test_clip_sites(build, want: Expect):
    result, site, clip = _one_site(build())
    assert site.pattern == want.pattern
    assert clip["dtype"] == want.dtype
    assert site.path == want.path
    assert {f["code"] for f in clip["findings"]} == want.codes
    if want.error:
        assert want.error in (site.error or ""), site.error
        assert clip["translations"] == [] and worst_status(result) == "unsupported"
        return
    assert site.error is None, site.error
    m = site.resolved.meaning
    assert m.dynamic is want.dynamic
    if want.dynamic:
        assert all(t["findings"][0]["code"] == "dynamic-bounds" for t in clip["translations"])
        # issue 37: towards ONNX itself (a Clip no older than the source's) the bound stays an input: exact
        status = {t["label"]: t["status"] for t in clip["translations"]}
        assert status["onnx"] == "exact" and all(v == "unsupported" for k, v in status.items()
                                                 if not k.startswith("onnx")), status
        return
    assert _same(m.lo, want.lo) and _same(m.hi, want.hi), (m.lo, m.hi)
    assert len(clip["translations"]) == len(TARGETS)


@pytest.mark.parametrize("build,want", [c for c in CASES if not c.values[1].error and not c.values[1].dynamic])
def test_site_translations_equal_translate_of_the_compact_spec(build, want):
    """What /v1/models/inspect says per target is what /v1/translate says for the clip's compact spec."""
    _, _, clip = _one_site(build())
    spec = TypeAdapter(Spec).validate_python(clip["spec"])
    expected = translate(spec, TARGET_OBJECTS).to_json()
    assert clip["meaning"] == expected["meaning"]
    got = [(t["status"], [f["code"] for f in t["findings"]], t["target"]) for t in clip["translations"]]
    ref = [(t["status"], [f["code"] for f in t["findings"]], t["target"]) for t in expected["translations"]]
    assert got == ref


def test_translations_are_exactly_translate_one_for_every_site_of_a_mixed_model():
    """Several clips in one model, each with its own row: statuses, codes and messages line up one to one."""
    nodes = [helper.make_node("Clip", ["x", "a", "b"], ["t"], name="first"),
             helper.make_node("Clip", ["t", "", "c"], ["y"], name="second")]
    m = model(nodes, [init("a", 0, np.float16), init("b", 6, np.float16), init("c", 1e4, np.float16)], elem=F16)
    body = scan(m.SerializeToString(), targets=["onnx:12", "openvino", "directml:5_0"]).to_json()
    assert [c["node"] for c in body["clips"]] == ["first", "second"]
    for c in body["clips"]:
        ref = translate(TypeAdapter(Spec).validate_python(c["spec"]),
                        [target_from_text(t) for t in ("onnx:12", "openvino", "directml:5_0")]).to_json()
        assert [t["findings"] for t in c["translations"]] == [t["findings"] for t in ref["translations"]]
        assert [t["status"] for t in c["translations"]] == [t["status"] for t in ref["translations"]]
    assert body["summary"]["clips"] == 2 and body["summary"]["unresolved"] == 0


# --- Min/Max pairs --------------------------------------------------------------------------------------------

def _probe(np_dtype, a, b) -> np.ndarray:
    """The critical values: both bounds, their neighbours, between, beyond, extremes (and NaN/inf/-0)."""
    if np.issubdtype(np_dtype, np.integer):
        info = np.iinfo(np_dtype)
        vals = {info.min, info.max, 0, a - 1, a, a + 1, b - 1, b, b + 1, (a + b) // 2}
        return np.array(sorted(v for v in vals if info.min <= v <= info.max), dtype=np_dtype)
    vals = [-np.inf, np.inf, np.nan, -0.0, 0.0, a, b, (a + b) / 2, a - 0.25, a + 0.25, b - 0.25, b + 0.25,
            float(np.finfo(np_dtype).min), float(np.finfo(np_dtype).max)]
    return np.array(vals, dtype=np_dtype)


def _ort(m: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})[0]


def _same_array(a: np.ndarray, b: np.ndarray) -> bool:
    if a.dtype.kind == "f":
        return bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))
    return bool(np.array_equal(a, b))


@pytest.mark.parametrize("outer,a,b,np_dtype,elem", [
    pytest.param("Min", 0.0, 6.0, np.float32, F32, id="min-max-f32"),
    pytest.param("Max", 0.0, 6.0, np.float32, F32, id="max-min-f32"),
    pytest.param("Min", 2.0, 1.0, np.float32, F32, id="min-max-f32-a-gt-b"),
    pytest.param("Max", 2.0, 1.0, np.float32, F32, id="max-min-f32-a-gt-b"),
    pytest.param("Min", -1.5, 3.25, np.float16, F16, id="min-max-f16"),
    pytest.param("Max", 3.0, -3.0, np.float16, F16, id="max-min-f16-a-gt-b"),
    pytest.param("Min", -3, 100, np.int8, I8, id="min-max-int8"),
    pytest.param("Max", 5, -5, np.int8, I8, id="max-min-int8-a-gt-b"),
    pytest.param("Min", 10, 5, np.int32, I32, id="min-max-int32-a-gt-b"),
])
def test_min_max_pairs_mean_what_onnxruntime_computes(outer, a, b, np_dtype, elem):
    m = minmax_model(outer, a, b, np_dtype, elem)
    result = scan(m.SerializeToString(), targets=TARGETS)
    (site,) = result.sites
    assert site.pattern == ("Min(Max(x, a), b)" if outer == "Min" else "Max(Min(x, b), a)")
    assert site.nodes == ("inner", "outer") and site.input == "x" and site.output == "y"
    meaning = site.resolved.meaning
    assert meaning.order is (Order.MAX_WINS if outer == "Min" else Order.MIN_WINS)
    assert (meaning.lo, meaning.hi) == (a, b)
    assert meaning.crossed is (a > b)
    if a > b:
        assert meaning.describe().endswith("max-wins" if outer == "Min" else "min-wins")
    x = _probe(np_dtype, a, b)
    want = _ort(m, x)
    got = evaluate(meaning, x)
    assert _same_array(got.astype(np_dtype), want), (x, got, want)
    # Each target gets a translation (crossed min-wins has no Clip-13 form with the same bounds, but one
    # with min = max = a; OpenVINO/DirectML take it too).
    assert [label for label, _ in result.translations[0]] == TARGETS


@pytest.mark.parametrize("outer", ["Min", "Max"])
def test_uncrossed_pairs_translate_like_their_clip13(outer):
    m = minmax_model(outer, -1.0, 1.0, np.float32, F32)
    (clip,) = scan(m.SerializeToString(), targets=TARGETS).to_json()["clips"]
    assert clip["spec"] == {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "shape": [None],
                            "min": -1.0, "max": 1.0}
    ref = translate(TypeAdapter(Spec).validate_python(clip["spec"]), TARGET_OBJECTS).to_json()
    assert [(t["status"], [f["code"] for f in t["findings"]]) for t in clip["translations"]] == \
        [(t["status"], [f["code"] for f in t["findings"]]) for t in ref["translations"]]


# Issue 14: a one-sided Max(x, a) / Min(x, b) with a constant is a clip (the dynamo exporter's clamp(min=a)),
# and a constant tensor bound is a per-element clip: these pair lookalikes are not *pairs*, and each one-sided
# node among them is its own clip.
@pytest.mark.parametrize("nodes,inits,patterns", [
    pytest.param([helper.make_node("Max", ["x", "a"], ["t"]), helper.make_node("Min", ["t", "x"], ["y"])],
                 [init("a", 0, np.float32)], ["Max(x, a)"], id="outer-operand-not-constant"),
    pytest.param([helper.make_node("Max", ["x", "a"], ["t"]), helper.make_node("Max", ["t", "b"], ["y"])],
                 [init("a", 0, np.float32), init("b", 1, np.float32)], ["Max(x, a)", "Max(x, a)"], id="max-of-max"),
    pytest.param([helper.make_node("Max", ["x", "a", "b"], ["t"]), helper.make_node("Min", ["t", "b"], ["y"])],
                 [init("a", 0, np.float32), init("b", 1, np.float32)], ["Min(x, b)"], id="three-input-max"),
    pytest.param([helper.make_node("Max", ["x", "z"], ["t"]), helper.make_node("Min", ["t", "x"], ["y"])],
                 [], [], id="no-constant-at-all"),
])
def test_min_max_lookalikes_are_not_pairs(nodes, inits, patterns):
    sites = scan(model(nodes, inits, inputs=[vi("x"), vi("z")]).SerializeToString()).sites
    assert [s.pattern for s in sites] == patterns


def test_vector_bound_pair_is_a_per_element_clip():
    nodes = [helper.make_node("Max", ["x", "a"], ["t"]), helper.make_node("Min", ["t", "b"], ["y"])]
    (site,) = scan(model(nodes, [init("a", 0, np.float32), init("b", [1, 2, 3, 4], np.float32)]
                         ).SerializeToString()).sites
    m = site.resolved.meaning
    assert site.pattern == "Min(Max(x, a), b)" and m.lo == 0.0 and m.upper_tensor.values == (1.0, 2.0, 3.0, 4.0)


def test_ir3_initializers_listed_as_inputs_are_constants():
    """IR 3 requires every initializer to be a graph input too; only from IR 4 does that make it overridable."""
    nodes = [helper.make_node("Max", ["x", "a"], ["t"], name="inner"),
             helper.make_node("Min", ["t", "b"], ["y"], name="outer")]
    inits = [init("a", 0, np.float32), init("b", 6, np.float32)]
    inputs = [vi("x"), vi("a", F32, []), vi("b", F32, [])]
    (site,) = scan(model(nodes, inits, opset=8, ir_version=3, inputs=inputs).SerializeToString()).sites
    assert (site.resolved.meaning.lo, site.resolved.meaning.hi) == (0.0, 6.0)
    assert scan(model(nodes, inits, opset=8, ir_version=4, inputs=inputs).SerializeToString()).sites == []


def _external_minmax() -> onnx.ModelProto:
    nodes = [helper.make_node("Max", ["x", "a"], ["t"], name="inner"),
             helper.make_node("Min", ["t", "b"], ["y"], name="outer")]
    return model(nodes, [external_tensor("a", "weights.bin"), init("b", 6, np.float32)])


@pytest.mark.parametrize("build,fragment", [
    pytest.param(lambda: external_bound_model("weights.bin"), "the min bound is a constant of the model whose "
                 "value was not read", id="clip-min-external"),
    pytest.param(_external_minmax, "the lower bound of Min(Max(x, a), b) is a constant whose value was not read",
                 id="min-max-lower-external"),
])
def test_external_bounds_are_never_read(build, fragment):
    """Issue 46: a clip whose bound is external data (which did not come with the model) is listed unresolved,
    with the reason; never dropped, never read. (Before issue 46 a Clip's external bound was a dynamic bound,
    translated as such: it is a constant of the model, only unread, so "dynamic" was the wrong reason.)"""
    body = scan(build().SerializeToString()).to_json()
    (clip,) = body["clips"]
    assert fragment in clip["error"] and "stored as external data, which is never followed" in clip["error"]
    assert clip["translations"] == [] and body["summary"]["unresolved"] == 1


@pytest.mark.parametrize("dims,shape,error", [
    pytest.param([-1, 4], [None, 4], None, id="negative-dim-is-unknown"),
    pytest.param([2 ** 62] * 3, [2 ** 62] * 3, "2^63-1", id="shape-past-int64"),
])
def test_min_max_declared_shapes(dims, shape, error):
    nodes = [helper.make_node("Max", ["x", "a"], ["t"], name="inner"),
             helper.make_node("Min", ["t", "b"], ["y"], name="outer")]
    m = model(nodes, [init("a", 0, np.float32), init("b", 6, np.float32)], shape=dims)
    (site,) = scan(m.SerializeToString()).sites
    assert site.shape == shape
    assert (error in site.error) if error else site.error is None


def test_min_max_with_a_bound_of_another_type_is_an_error_site():
    nodes = [helper.make_node("Max", ["x", "a"], ["t"], name="inner"),
             helper.make_node("Min", ["t", "b"], ["y"], name="outer")]
    m = model(nodes, [init("a", 0, np.float32), init("b", 6, np.float16)])
    (site,) = scan(m.SerializeToString()).sites
    assert "upper bound is float16 but the input is float32" in site.error


# --- ScaleBias candidates ----------------------------------------------------------------------------------

@pytest.mark.parametrize("nodes,inits,elem,scale_bias,severity", [
    pytest.param([helper.make_node("Mul", ["x", "s"], ["m"], name="mul"),
                  helper.make_node("Add", ["m", "b"], ["t"], name="add")],
                 [init("s", 0.5, np.float32), init("b", 1.0, np.float32)], F32,
                 {"scale": 0.5, "bias": 1.0, "nodes": ["mul", "add"]}, "warning", id="mul-then-add"),
    pytest.param([helper.make_node("Mul", ["s", "x"], ["t"], name="mul")], [init("s", 2.0, np.float32)], F32,
                 {"scale": 2.0, "bias": 0.0, "nodes": ["mul"]}, "info", id="mul-only-constant-first"),
    pytest.param([helper.make_node("Add", ["x", "b"], ["t"], name="add")], [init("b", -3.0, np.float16)], F16,
                 {"scale": 1.0, "bias": -3.0, "nodes": ["add"]}, "info", id="add-only-float16"),
    pytest.param([helper.make_node("Add", ["x", "b"], ["t"], name="add")], [init("b", 3, np.int8)], I8,
                 {"scale": 1.0, "bias": 3, "nodes": ["add"]}, None, id="int8-candidate-without-finding"),
    pytest.param([helper.make_node("Mul", ["x", "s"], ["t"], name="mul")], [init("s", [1, 2, 3, 4], np.float32)],
                 F32, None, None, id="vector-scale-is-not-a-candidate"),
    pytest.param([helper.make_node("Mul", ["x", "x"], ["t"], name="mul")], [], F32, None, None,
                 id="square-is-not-a-candidate"),
])
def test_scale_bias_candidates(nodes, inits, elem, scale_bias, severity):
    np_dtype = {F32: np.float32, F16: np.float16, I8: np.int8}[elem]
    clip = helper.make_node("Clip", ["t", "lo", "hi"], ["y"], name="clip")
    m = model([*nodes, clip], [*inits, init("lo", 0, np_dtype), init("hi", 6, np_dtype)], elem=elem)
    (c,) = scan(m.SerializeToString()).to_json()["clips"]
    assert c["scale_bias"] == scale_bias
    sb = [f for f in c["findings"] if f["code"] == "scale-bias"]
    assert [f["severity"] for f in sb] == ([severity] if severity else [])
    if severity == "warning":
        assert "rounds once (fused) or twice" in sb[0]["message"]
    assert c["error"] is None and c["meaning"]["scale_bias"] is None  # the clip's own meaning is unchanged


# --- subgraphs and functions ----------------------------------------------------------------------------------

def _branch(name: str, lo: str, hi: str) -> onnx.GraphProto:
    return helper.make_graph([helper.make_node("Clip", ["x", lo, hi], ["o"], name=f"{name}_clip")], name, [],
                             [vi("o")])


def test_clips_in_if_branches_use_outer_scope_bounds():
    if_node = helper.make_node("If", ["cond"], ["y"], name="if", then_branch=_branch("then", "lo", "hi"),
                               else_branch=_branch("else", "hi", "lo"))
    m = model([if_node], [init("lo", 0, np.float32), init("hi", 6, np.float32)],
              inputs=[vi("x"), vi("cond", onnx.TensorProto.BOOL, [])])
    body = scan(m.SerializeToString(), targets=["onnx"]).to_json()
    got = sorted((c["path"], c["node"], c["spec"]["min"], c["spec"]["max"], c["dtype"]) for c in body["clips"])
    assert got == [("graph/if.else_branch", "else_clip", 6.0, 0.0, "float32"),
                   ("graph/if.then_branch", "then_clip", 0.0, 6.0, "float32")]


def test_clip_in_a_loop_body_with_body_types_and_inner_constants():
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         const_node("blo", value=numpy_helper.from_array(np.array(-1, np.float16))),
         helper.make_node("Clip", ["v_in", "blo", "hi"], ["v_out"], name="body_clip")],
        "body", [vi("i", I64, []), vi("cond_in", onnx.TensorProto.BOOL, []), vi("v_in", F16, [4])],
        [vi("cond_out", onnx.TensorProto.BOOL, []), vi("v_out", F16, [4])])
    loop = helper.make_node("Loop", ["trip", "", "x"], ["y"], name="loop", body=body)
    m = model([loop], [init("trip", 3, np.int64), init("hi", 1, np.float16)], elem=F16)
    (clip,) = scan(m.SerializeToString(), targets=["onnx"]).to_json()["clips"]
    assert (clip["path"], clip["node"], clip["dtype"]) == ("graph/loop.body", "body_clip", "float16")
    assert (clip["spec"]["min"], clip["spec"]["max"]) == (-1.0, 1.0)
    assert clip["translations"][0]["status"] == "exact"


def test_inner_names_shadow_outer_ones():
    """A subgraph input named like an outer initializer is the input, a run-time value: dynamic."""
    body = helper.make_graph([helper.make_node("Identity", ["c"], ["c2"]),
                              helper.make_node("Clip", ["v", "lo"], ["v2"], name="body_clip")], "body",
                             [vi("i", I64, []), vi("c", onnx.TensorProto.BOOL, []), vi("v"), vi("lo", F32, [])],
                             [vi("c2", onnx.TensorProto.BOOL, []), vi("v2")])
    m = model([helper.make_node("Loop", ["trip", "", "x"], ["y"], name="loop", body=body)],
              [init("trip", 1, np.int64), init("lo", 0, np.float32)])
    (site,) = scan(m.SerializeToString()).sites
    assert site.resolved.meaning.dynamic


def test_clips_in_nested_if_branches():
    inner_if = helper.make_node("If", ["c"], ["o"], name="inner_if", then_branch=_branch("t", "lo", "hi"),
                                else_branch=_branch("e", "lo", "hi"))
    then_g = helper.make_graph([inner_if], "outer_then", [], [vi("o")])
    outer_if = helper.make_node("If", ["c"], ["y"], name="outer_if", then_branch=then_g,
                                else_branch=_branch("oe", "lo", "hi"))
    m = model([outer_if], [init("lo", 0, np.float32), init("hi", 6, np.float32)],
              inputs=[vi("x"), vi("c", onnx.TensorProto.BOOL, [])])
    paths = sorted(s.path for s in scan(m.SerializeToString()).sites)
    assert paths == ["graph/outer_if.else_branch", "graph/outer_if.then_branch/inner_if.else_branch",
                     "graph/outer_if.then_branch/inner_if.then_branch"]


def _function(clip_inputs, nodes_before=(), value_info=()) -> onnx.FunctionProto:
    fn = helper.make_function("local", "f", ["X"], ["Y"],
                              [*nodes_before, helper.make_node("Clip", ["X", *clip_inputs], ["Y"], name="fclip")],
                              [helper.make_opsetid("", 13)])
    fn.value_info.extend(value_info)
    return fn


LOCAL = [helper.make_opsetid("local", 1)]


def test_clip_in_a_model_local_function_takes_its_dtype_from_the_call_site():
    fn = _function([])  # no bounds: nothing in the function says the type
    m = model([helper.make_node("f", ["x"], ["y"], domain="local", name="call")], elem=F16, functions=[fn],
              extra_opsets=LOCAL)
    (clip,) = scan(m.SerializeToString(), targets=["onnx"]).to_json()["clips"]
    assert (clip["path"], clip["node"], clip["dtype"]) == ("function local:f", "fclip", "float16")
    assert "min" not in clip["spec"] and "max" not in clip["spec"]  # absent in the model, so in the spec
    assert (clip["meaning"]["lower"]["value"], clip["meaning"]["upper"]["value"]) == (-F16_MAX, F16_MAX)


def test_function_bounds_from_its_constant_nodes():
    fn = _function(["lo", "hi"], [const_node("lo", value=numpy_helper.from_array(np.array(1, np.int8))),
                                  const_node("hi", value=numpy_helper.from_array(np.array(9, np.int8)))])
    m = model([helper.make_node("f", ["x"], ["y"], domain="local", name="call")], elem=I8, functions=[fn],
              extra_opsets=LOCAL)
    (clip,) = scan(m.SerializeToString(), targets=["onnx"]).to_json()["clips"]
    assert (clip["dtype"], clip["spec"]["min"], clip["spec"]["max"]) == ("int8", 1, 9)


def test_function_called_with_two_types_cannot_be_typed():
    fn = _function([])
    m = model([helper.make_node("f", ["x"], ["a"], domain="local"),
               helper.make_node("Cast", ["a"], ["b"], to=F16),
               helper.make_node("f", ["b"], ["y"], domain="local")],
              elem=F32, outputs=[vi("y", F16)], functions=[fn], extra_opsets=LOCAL,
              value_info=[vi("a"), vi("b", F16)])
    (site,) = scan(m.SerializeToString()).sites
    assert "cannot infer the element type" in site.error


def test_function_called_on_an_untyped_intermediate_gets_its_type_from_inference():
    """The call site's argument has no value_info (Relu's output): onnx shape inference gives it."""
    fn = _function([])
    m = model([helper.make_node("Relu", ["x"], ["r"]), helper.make_node("f", ["r"], ["y"], domain="local")],
              elem=F16, functions=[fn], extra_opsets=LOCAL)
    (site,) = scan(m.SerializeToString()).sites
    assert site.error is None and site.dtype.name == "float16"


def test_function_value_info_is_used():
    fn = _function([], value_info=[vi("X", BF16, [4])])
    m = model([helper.make_node("f", ["x"], ["y"], domain="local")], elem=BF16, functions=[fn],
              extra_opsets=LOCAL)
    (site,) = scan(m.SerializeToString()).sites
    assert site.dtype.name == "bfloat16" and site.pattern == "Clip-13"


def test_function_opset_is_its_own():
    """A function importing opset 6 holds a Clip-6, whatever the model's opset."""
    fn = helper.make_function("local", "f", ["X"], ["Y"], [helper.make_node("Clip", ["X"], ["Y"], min=0.0)],
                              [helper.make_opsetid("", 6)])
    m = model([helper.make_node("f", ["x"], ["y"], domain="local")], functions=[fn], extra_opsets=LOCAL)
    (site,) = scan(m.SerializeToString()).sites
    assert site.pattern == "Clip-6" and site.resolved.meaning.hi == FLT_MAX


# --- malformed graphs -------------------------------------------------------------------------------------

def test_cyclic_graph_is_an_artifact_error():
    with pytest.raises(ArtifactError, match="cyclic"):
        scan(cyclic_model().SerializeToString())


def test_self_loop_and_cycle_in_a_subgraph_are_artifact_errors():
    self_loop = model([helper.make_node("Add", ["x", "t"], ["t"], name="selfish"),
                       helper.make_node("Clip", ["t"], ["y"])])
    with pytest.raises(ArtifactError, match="selfish"):
        scan(self_loop.SerializeToString())
    cyc = helper.make_graph([helper.make_node("Relu", ["b"], ["a"]), helper.make_node("Relu", ["a"], ["b"]),
                             helper.make_node("Identity", ["b"], ["o"])], "cyc", [], [vi("o")])
    m = model([helper.make_node("If", ["c"], ["y"], then_branch=cyc, else_branch=cyc)],
              inputs=[vi("x"), vi("c", onnx.TensorProto.BOOL, [])])
    with pytest.raises(ArtifactError, match="cyclic"):
        scan(m.SerializeToString())


def test_no_default_opset_makes_each_clip_an_error_site():
    """Without an ai.onnx import a node named Clip is not the standard op: said per clip, not a failed scan."""
    m = clip_model(13, F32, 0, 6, np.float32)
    del m.opset_import[:]
    m.opset_import.append(helper.make_opsetid("custom", 1))
    result = scan(m.SerializeToString())
    (site,) = result.sites
    assert "imports no ai.onnx opset" in site.error
    assert worst_status(result) == "unsupported"


def test_model_info():
    body = scan(clip_model(13, F32, 0, 6, np.float32).SerializeToString()).to_json()
    assert body["format"] == "onnx"
    assert body["model"] == {"bytes": len(clip_model(13, F32, 0, 6, np.float32).SerializeToString()),
                             "ir_version": 8, "producer": "clipbridge-tests", "opsets": {"ai.onnx": 13},
                             "graph": "g", "nodes": 1, "functions": 0, "tensors_not_read": 0,
                             "external_tensors": []}
    assert [t["label"] for t in body["targets"]] == ["onnx", "openvino", "directml"]
