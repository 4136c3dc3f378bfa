"""Core ML MIL clip: resolve() (iOS15 gives beta on alpha > beta; iOS17 rejects alpha >= beta; NaN undocumented),
emit() (the MIL text coremltools builds), translations with findings, and coremltools itself: its iOS17 builder
check and its value_inference (const inputs fold on Linux) against evaluate()."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clipbridge.dialects import coreml as cml
from clipbridge.dialects.coreml import meaning as cml_meaning, mil as cml_mil, spec as cml_spec
from clipbridge.dialects import registry
from clipbridge.dialects.kit.common import Mode
from clipbridge.core.drift import critical_points
from clipbridge.core.dtypes import FLOAT16, FLOAT32
from clipbridge.core.errors import RejectedSpec, SpecError
from clipbridge.core.findings import Code
from clipbridge.core.evaluate import evaluate
from clipbridge.core.meaning import NanBound, NanInput, Order, State, same_outputs
from clipbridge.dialects.onnx.spec import OnnxSpec
from clipbridge.service.translate import translate
from tests import oracle


def spec(opset: str, alpha, beta, dtype: str = "fp32", shape=None) -> cml_spec.CoreMLSpec:
    return cml_spec.CoreMLSpec(dialect="coreml", opset=opset, dtype=dtype, alpha=alpha, beta=beta, shape=shape)


@pytest.mark.parametrize("opset,definition", [
    pytest.param("iOS13", "iOS15", id="ios13"), pytest.param("iOS15", "iOS15", id="ios15"),
    pytest.param("ios16", "iOS15", id="ios16-resolves-down"), pytest.param("iOS17", "iOS17", id="ios17"),
    pytest.param("iOS18", "iOS17", id="ios18-resolves-down"),
])
def test_opset_resolution(opset, definition):
    assert cml_meaning.definition_coreml(cml_meaning.opset_coreml(opset)) == definition
    assert cml_meaning.resolve(spec(opset, 0, 1)).version == f"clip ({definition})"


@pytest.mark.parametrize("s,x,want", [
    pytest.param(spec("iOS15", 0.0, 5.0), [[-1.2, 2, -3.4], [4.5, -5, 6.7]], [[0, 2, 0], [4.5, 0, 5]],
                 id="test_builder_clip_eval"),
    pytest.param(spec("iOS15", 5, 2), [0.0, 3.0, 9.0], [2.0, 2.0, 2.0], id="6.1-ios15-alpha-gt-beta-gives-beta"),
    pytest.param(spec("iOS15", 1, 1), [0.0, 3.0], [1.0, 1.0], id="6.1-ios15-equal-ok"),
    pytest.param(spec("iOS17", 0, 6), [math.nan, -1.0, 7.0], [math.nan, 0.0, 6.0], id="nan-executes-as-propagate"),
    pytest.param(spec("iOS15", 0, 70000, "fp16"), [65504.0, math.inf], [65504.0, math.inf],
                 id="fp16-beta-overflows-to-inf"),
])
def test_meaning_on_named_cases(s, x, want):
    m = cml_meaning.resolve(s)
    dt = m.dtype.np_dtype
    assert same_outputs(evaluate(m, np.asarray(x, dt)), np.asarray(want, dt)).all()


@pytest.mark.parametrize("s", [
    pytest.param(spec("iOS17", 1, 1), id="6.1-ios17-equal-rejected"),
    pytest.param(spec("iOS17", 6, 4), id="6.1-ios17-alpha-gt-beta-rejected"),
    pytest.param(spec("iOS18", 6, 4), id="ios18-uses-ios17"),
    pytest.param(spec("iOS17", 1.0001, 1.0002, "fp16"), id="equal-after-fp16-rounding"),
])
def test_ios17_rejects(s):
    m = cml_meaning.resolve(s)
    assert m.state is State.REJECTED and "should be smaller than `beta` value" in m.reason
    with pytest.raises(RejectedSpec):
        evaluate(m, np.zeros(2, m.dtype.np_dtype))


def test_variants():
    m15, m17 = cml_meaning.resolve(spec("iOS15", 0, 6)), cml_meaning.resolve(spec("iOS17", 0, 6))
    assert m15.order is Order.MAX_WINS and m17.order is Order.REJECTED and m17.state is State.DEFINED
    for m in (m15, m17):
        assert m.nan_input is NanInput.UNDOCUMENTED and m.nan_bound is NanBound.UNDOCUMENTED
        assert any("not documented" in r for r in m.rules)
    assert cml_meaning.resolve(spec("iOS17", "nan", 6)).state is State.DEFINED  # NaN >= 6 is false: builds


@pytest.mark.parametrize("s,field,msg", [
    pytest.param(spec("iOS12", 0, 1), "opset", "Unknown Core ML opset", id="opset"),
    pytest.param(spec("iOS17", 0, 1, "int32"), "dtype", "Unknown Core ML clip dtype", id="6.1-fp16-fp32-only"),
])
def test_spec_errors(s, field, msg):
    with pytest.raises(SpecError, match=msg) as exc:
        cml_meaning.resolve(s)
    assert exc.value.loc == field


# --- translations ------------------------------------------------------------------------------------------------

def _onnx(mn, mx, et="FLOAT"):
    return OnnxSpec(dialect="onnx", opset=13, elem_type=et, min=mn, max=mx)


@pytest.mark.parametrize("source,version,mode,status,code", [
    pytest.param(_onnx(0, 6), None, Mode.PRESERVE, "drift", Code.NAN_INPUT, id="onnx-nan-undocumented"),
    pytest.param(_onnx(1, 1), "iOS17", Mode.PRESERVE, "unsupported", Code.MIN_GREATER_THAN_MAX,
                 id="6.1-onnx-clip-1-1-ios17-valueerror"),
    pytest.param(_onnx(1, 1), "iOS15", Mode.PRESERVE, "drift", Code.NAN_INPUT, id="onnx-clip-1-1-ios15-builds"),
    pytest.param(_onnx(6, 4), "iOS16", Mode.LITERAL, "drift", Code.NAN_INPUT, id="onnx-crossed-ios16-beta-too"),
    pytest.param(_onnx(0, 6, "INT8"), None, Mode.PRESERVE, "unsupported", Code.DTYPE_UNSUPPORTED, id="int8"),
    pytest.param(_onnx(0, 70000, "FLOAT"), "iOS17", Mode.PRESERVE, "drift", Code.NAN_INPUT, id="fp32-70000"),
])
def test_translate_into_coreml(source, version, mode, status, code):
    tr = translate(source, [cml_spec.target(version)], mode).translations[0]
    assert tr.status == status, [f.to_json() for f in tr.findings]
    assert code in {f.code for f in tr.findings}
    if status == "drift":  # only the undocumented NaN: no bound or order finding
        assert {f.code for f in tr.findings if f.severity.value != "info"} == {Code.NAN_INPUT}


def test_tflite_crossed_to_coreml_ios15():
    """TFLite's min-wins crossed clip: iOS15 clip gives beta, so preserve writes alpha = beta = min."""
    from clipbridge.dialects.tflite.spec import TfliteSpec
    src = TfliteSpec(dialect="tflite", op="MINIMUM_MAXIMUM", min=6, max=4)
    tr = translate(src, [cml_spec.target("iOS15")]).translations[0]
    assert tr.target["alpha"] == tr.target["beta"] == 6.0
    lit = translate(src, [cml_spec.target("iOS15")], Mode.LITERAL).translations[0]
    f = next(f for f in lit.findings if f.code is Code.MIN_GREATER_THAN_MAX)
    assert f.witness.source_output == 6.0 and f.witness.target_output == 4.0  # TFLite -> min, Core ML -> beta


@pytest.mark.parametrize("target,status", [
    pytest.param("onnx", "drift", id="to-onnx-nan-undocumented"),
    pytest.param("stablehlo", "drift", id="to-stablehlo"),
    pytest.param("tflite", "drift", id="to-tflite"),
])
def test_translate_from_coreml(target, status):
    tr = translate(spec("iOS17", 0, 6), [target]).translations[0]
    assert tr.status == status and Code.NAN_INPUT in {f.code for f in tr.findings}


def test_translate_rejected_source():
    with pytest.raises(RejectedSpec, match="should be smaller"):
        translate(spec("iOS17", 6, 4), ["onnx"])


def test_registry_and_interface():
    d = registry.get("coreml")
    assert d is cml.DIALECT and not d.in_defaults
    assert d.check_version("ios16") == "iOS16" and d.capability()["dialect"] == "coreml"
    for ex in d.examples.values():
        cml_meaning.resolve(cml_spec.CoreMLSpec.model_validate(ex))


# --- coremltools itself: the builder's iOS17 check, the MIL artifact, value_inference vs evaluate() -------------

def _ct():
    return pytest.importorskip("coremltools")


@pytest.mark.parametrize("opset,alpha,beta,raises", [
    pytest.param("iOS15", 1.0, 1.0, False, id="ios15-equal-builds"),
    pytest.param("iOS15", 6.0, 4.0, False, id="ios15-crossed-builds"),
    pytest.param("iOS16", 6.0, 4.0, False, id="ios16-crossed-builds"),
    pytest.param("iOS17", 1.0, 1.0, True, id="ios17-equal-raises"),
    pytest.param("iOS17", 6.0, 4.0, True, id="ios17-crossed-raises"),
    pytest.param("iOS18", 6.0, 4.0, True, id="ios18-crossed-raises"),
    pytest.param("iOS17", "nan", 4.0, False, id="ios17-nan-alpha-builds"),
    pytest.param("iOS17", -0.0, 0.0, True, id="ios17-minus-zero-vs-zero-raises"),
    pytest.param("iOS17", 0.2, 0.1, True, id="ios17-message-prints-float32"),
])
@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
def test_builder_agrees_on_rejection(opset, alpha, beta, raises, dtype):
    _ct()
    s = spec(opset, alpha, beta, dtype)
    m = cml_meaning.resolve(s)
    if raises:
        with pytest.raises(ValueError) as exc:
            cml_mil.build_program(s)
        assert str(exc.value) == m.reason  # the quoted text is coremltools' own
    else:
        cml_mil.build_program(s)
        assert m.state is State.DEFINED


def test_mil_text_builds_on_linux():
    _ct()
    tr = translate(OnnxSpec(dialect="onnx", opset=13, elem_type="FLOAT16", min=0, max=6, shape=[2, "N"]),
                   [cml_spec.target("iOS17")]).translations[0]
    text = tr.artifacts["coreml_mil"]
    assert "clip(x=%inp, alpha=0.0, beta=6.0" in text and "fp16" in text and "CoreML7" in text  # iOS17 = spec 7


CASES = [pytest.param(o, a, b, d, id=f"{o}-{d}-{a}-{b}") for o, a, b, d in (
    ("iOS15", 0, 6, "fp32"), ("iOS15", 5, 2, "fp32"), ("iOS15", 1, 1, "fp16"), ("iOS17", -1, 1, "fp16"),
    ("iOS17", 0.1, 0.2, "fp32"), ("iOS17", 1e-45, 1e-40, "fp32"), ("iOS15", "-inf", "inf", "fp32"),
    ("iOS15", -0.0, 0.0, "fp32"), ("iOS17", 6e-8, 65504, "fp16"))]


@pytest.mark.parametrize("opset,alpha,beta,dtype", CASES)
def test_value_inference_agrees_with_the_meaning(opset, alpha, beta, dtype):
    """coremltools computes the clip of const inputs itself (value_inference): a differential test of the reading."""
    _ct()
    s = spec(opset, alpha, beta, dtype)
    m = cml_meaning.resolve(s)
    x = critical_points(m.dtype, [m])
    got = cml_mil.value_inference_coreml(s, x)
    assert got.dtype == m.dtype.np_dtype
    bad = ~same_outputs(got, evaluate(m, x))
    assert not bad.any(), list(zip(x[bad], got[bad]))


@pytest.mark.parametrize("opset,alpha,beta,dtype", [
    pytest.param("iOS15", "nan", 6, "fp32", id="ios15-nan-alpha"),
    pytest.param("iOS17", 0, "nan", "fp16", id="ios17-nan-beta"),
])
def test_value_inference_nan_bound(opset, alpha, beta, dtype):
    """Decision, not an engine bug (docs/testing.md, "Decisions"): Core ML documents no NaN alpha/beta and
    clipbridge executes an undocumented NaN bound as ignored. Two checks that can each fail: evaluate() computes
    the independent oracle's "ignore" rule, and coremltools' value_inference computes what NOTE_FOLD_NAN_BOUND
    says it does (every output NaN)."""
    _ct()
    s = spec(opset, alpha, beta, dtype)
    m = cml_meaning.resolve(s)
    assert m.nan_bound is NanBound.UNDOCUMENTED and cml_meaning.NOTE_FOLD_NAN_BOUND in m.engine_notes
    x = critical_points(m.dtype, [m])
    decided = oracle.clip_values(oracle.Clip(m.dtype.name, m.lo, m.hi, nan_bound="ignore"),
                                 oracle.widen(x, m.dtype.name))
    assert oracle.same(evaluate(m, x), decided).all()
    assert np.isnan(cml_mil.value_inference_coreml(s, x).astype(np.float64)).all()


@settings(derandomize=True, max_examples=25, deadline=None)
@given(a=st.floats(-1e4, 1e4, width=16), b=st.floats(-1e4, 1e4, width=16))
def test_value_inference_property_fp16(a, b):
    _ct()
    s = spec("iOS15", a, b, "fp16")
    m = cml_meaning.resolve(s)
    x = FLOAT16.all_values()[::257]
    assert same_outputs(cml_mil.value_inference_coreml(s, x), evaluate(m, x)).all()
    m17 = cml_meaning.resolve(spec("iOS17", a, b, "fp16"))
    assert (m17.state is State.REJECTED) == (a >= b)


LEAVES = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(),
                   st.sampled_from(list(cml_spec.OPSETS) + list(cml_spec.DTYPES)
                                   + ["ios17", "iOS12", "macOS14", "nan", "-inf", "inf", "0x1p-149", "float16", ""]),
                   st.text(max_size=6), st.lists(st.integers(-1, 3), max_size=3))


@st.composite
def coreml_bodies(draw):
    body = {"dialect": "coreml", **draw(st.dictionaries(st.sampled_from(
        ["opset", "dtype", "alpha", "beta", "shape"]), LEAVES, max_size=5))}
    path = draw(st.sampled_from(["/v1/translate", "/v1/execute", "/v1/compare"]))
    if path == "/v1/translate":
        return path, {"source": body, "targets": draw(st.sampled_from([None, ["coreml"], ["onnx", "tflite"],
                                                                       [{"dialect": "coreml", "version": "iOS15"}]]))}
    return path, {"spec": body, "backend": "numpy",
                  "semantics": draw(st.sampled_from([None, "coreml", "onnx",
                                                     {"dialect": "coreml", "version": "iOS16"}])),
                  "input": {"dtype": draw(st.sampled_from(["float32", "float16", "int8"])), "shape": [2],
                            "data": draw(st.lists(st.integers(-3, 300), min_size=2, max_size=2))}}


@settings(max_examples=60, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=coreml_bodies())
def test_coreml_bodies_never_5xx(client, case):
    path, body = case
    r = client.post(path, content=json.dumps(body).encode(), headers={"content-type": "application/json"})
    assert r.status_code < 500, (path, body, r.text[:500])


def test_translate_into_coreml_api(client):
    r = client.post("/v1/translate", json={"source": {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "min": 1,
                                                      "max": 1}, "targets": ["coreml", {"dialect": "coreml",
                                                                                        "version": "iOS16"}]})
    assert r.status_code == 200, r.text
    a, b = r.json()["translations"]
    assert a["status"] == "unsupported" and "should be smaller" in a["findings"][0]["message"]
    assert b["status"] == "drift" and b["target"]["opset"] == "iOS16"


@pytest.mark.skipif(__import__("sys").platform == "darwin", reason="on macOS the model runs")
def test_program_converts_but_does_not_run_on_linux():
    """The emitted program converts to an ML Program (iOS17: specification version 8); predict needs macOS."""
    ct = _ct()
    prog = cml_mil.build_program(spec("iOS17", 0, 6, shape=[4]))
    model = ct.convert(prog, convert_to="mlprogram", minimum_deployment_target=ct.target.iOS17, skip_model_load=True)
    assert model.get_spec().specificationVersion == 8
    with pytest.raises(Exception, match="only supported on macOS"):
        model.predict({"inp": np.zeros(4, np.float32)})
