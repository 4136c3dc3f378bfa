"""TensorRT kCLIP: resolve() (float attributes, alpha wins, the two NaN readings), the section 6.2 witnesses of
../shared/reference/more-dialects.md, onnx-tensorrt's Clip importer as findings, translations and the API-call
artifacts. No TensorRT runs here: the header's formula max(alpha, min(beta, x)) is the oracle.

The default reading is the header (the specification, as for every dialect; issue 37): a NaN input is undocumented
and executed as propagate. The section 6.2 NaN witness (NaN -> alpha, NVIDIA/TensorRT#4773) is the observed
reading's: a finding with `reading: "observed"`, never a default one."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clipbridge.dialects import tensorrt
from clipbridge.dialects.tensorrt import catalogue as trt_cat
from clipbridge.dialects.tensorrt import emit as trt_emit
from clipbridge.dialects.tensorrt import meaning as trt
from clipbridge.dialects.tensorrt import spec as trt_spec
from clipbridge.dialects import tosa
from clipbridge.dialects.kit.common import Mode
from clipbridge.core.errors import SpecError
from clipbridge.core.findings import Code, Severity
from clipbridge.core.evaluate import evaluate
from clipbridge.core.meaning import NanBound, NanInput, Order, State, same_outputs
from clipbridge.dialects.onnx.spec import OnnxSpec
from clipbridge.service.translate import translate
from tests.dialects._readings import default_status, under


def spec(dtype: str, alpha, beta, reading: str | None = None, shape=None,
         version: str = "10") -> trt_spec.TensorRtSpec:
    """A kCLIP spec; `reading` None leaves the spec's own default (header)."""
    pinned = {"reading": reading} if reading is not None else {}
    return trt_spec.TensorRtSpec(dialect="tensorrt", version=version, dtype=dtype, alpha=alpha, beta=beta,
                                 shape=shape, **pinned)


def _codes(tr) -> set[Code]:
    return {f.code for f in tr.findings}


@pytest.mark.parametrize("name,want", [
    pytest.param("float32", "float32", id="float32"),
    pytest.param("kHALF", "float16", id="datatype-enum-name"),
    pytest.param("INT8", "int8", id="int8-any-case"),
])
def test_dtypes(name, want):
    m = trt.resolve(spec(name, 0, 1))
    assert m.dtype.name == want and m.order is Order.MIN_WINS and m.state is State.DEFINED
    assert trt.normalize(spec(name, 0, 1))["dtype"] == want


@pytest.mark.parametrize("name,msg", [
    pytest.param("int32", "elementwise kMAX/kMIN", id="int32-elementwise-in-parser"),
    pytest.param("uint8", "rejects UINT8", id="uint8"),
    pytest.param("fp32", "Did you mean 'float32'", id="near-miss"),
])
def test_refused_dtypes(name, msg):
    with pytest.raises(SpecError, match=msg) as exc:
        trt.resolve(spec(name, 0, 1))
    assert exc.value.loc == "dtype"


@pytest.mark.parametrize("dtype,alpha,beta,lo,hi,flag", [
    pytest.param("float32", 0.1, 6, float(np.float32(0.1)), 6.0, "precision_loss", id="float32-attribute"),
    pytest.param("float16", "0x1.0020000001p+0", 2, 1.0, 2.0, "precision_loss",
                 id="float16-double-rounding-float-then-half"),
    pytest.param("float16", 0, 70000, 0.0, math.inf, "overflow", id="float16-overflow-to-inf"),
    pytest.param("int8", -2.5, 100.5, -2, 100, "rounded", id="int8-ties-to-even"),
    pytest.param("int8", 3.5, 3.5, 4, 4, "rounded", id="int8-tie-up-to-even"),
    pytest.param("int8", -1000, 200, -128, 127, "saturated", id="int8-saturated"),
    pytest.param("int8", "-inf", "inf", -128, 127, "saturated", id="int8-infinities"),
])
def test_bound_rules(dtype, alpha, beta, lo, hi, flag):
    m = trt.resolve(spec(dtype, alpha, beta))
    assert (m.lo, m.hi) == (lo, hi)
    assert getattr(m.lower, flag) or getattr(m.upper, flag)


def test_double_rounding_differs_from_one_rounding():
    """1 + 2^-11 + 2^-40: float rounds it to the float16 tie 1 + 2^-11, which goes to even (1.0); one rounding
    (StableHLO's f16 literal) gives 1 + 2^-10. A drift with a witness from the comparison."""
    src = translate(spec("float16", "0x1.0020000001p+0", 2), ["stablehlo"], Mode.LITERAL).translations[0]
    assert src.status == "drift" and src.meaning.lo == 1.0009765625


def test_nan_alpha_on_int8_is_refused():
    with pytest.raises(SpecError, match="int8") as exc:
        trt.resolve(spec("int8", "nan", 1))
    assert exc.value.loc == "alpha"


@pytest.mark.parametrize("reading,nan_input,note,shows", [
    pytest.param(None, NanInput.UNDOCUMENTED, True, "specification", id="default-is-the-header"),
    pytest.param("header", NanInput.UNDOCUMENTED, True, "specification", id="header-with-engine-note"),
    pytest.param("observed", NanInput.TO_LOWER, False, "observed", id="observed-pinned"),
])
def test_readings(reading, nan_input, note, shows):
    """The default is the specification (the header); the observed engine is a reading, the dialect's engine one."""
    m = trt.resolve(spec("float32", 0, 6, reading))
    assert m.nan_input is nan_input and (trt.NOTE_NAN in m.engine_notes) is note
    assert m.nan_bound is NanBound.UNDOCUMENTED and m.to_json()["shows"] == shows
    assert list(tensorrt.DIALECT.readings)[0] == "header" and tensorrt.DIALECT.engine_reading == "observed"


@pytest.mark.parametrize("pinned,own,other", [
    pytest.param("header", NanInput.UNDOCUMENTED, ("observed", NanInput.TO_LOWER), id="default-header"),
    pytest.param("observed", NanInput.TO_LOWER, ("header", NanInput.UNDOCUMENTED), id="spec-pins-observed"),
])
def test_both_readings_on_one_meaning(pinned, own, other):
    """The resolved meaning is the spec's reading's (header unless pinned); the other is in `alternates`, so a
    request's `reading` picks either (clipbridge.service.execute.with_reading), and the reported label is the meaning's own."""
    from clipbridge.service.execute import Semantics, with_reading
    m = trt.resolve(spec("float32", 0, 6, pinned))
    assert m.nan_input is own and [n for n, _ in m.alternates] == [other[0]]
    assert m.under(other[0]).nan_input is other[1] and m.under(pinned) is m
    # Each meaning says what it is: the specification (header) or the reading's name (observed).
    assert {m.to_json()["shows"], m.under(other[0]).to_json()["shows"]} == {"specification", "observed"}
    assert [r.split(":")[0] for r in m.readings] == list(trt_cat.READINGS)
    sem = Semantics("tensorrt", m, trt.normalize(spec("float32", 0, 6, pinned)))
    for reading, want_label, want_out in ((None, pinned, m), (other[0], other[0], m.under(other[0])),
                                          (pinned, pinned, m)):
        got, label = with_reading(sem, reading)
        assert label == want_label and got.meaning is want_out and got.reading == reading


@settings(derandomize=True, max_examples=60)
@given(st.floats(-1e6, 1e6, width=32), st.floats(-1e6, 1e6, width=32),
       st.lists(st.floats(width=32, allow_nan=True), min_size=1, max_size=8))
def test_readings_differ_only_on_nan_inputs(alpha, beta, xs):
    """observed and header share the header's formula: they agree on every non-NaN input, and a NaN input gives
    alpha (observed) or NaN (header, the default, executed as propagate)."""
    m = trt.resolve(spec("float32", alpha, beta))
    x = np.asarray(xs, np.float32)
    a, b = evaluate(m.under("observed"), x), evaluate(m, x)
    nan = np.isnan(x)
    assert same_outputs(a[~nan], b[~nan]).all()
    assert (a[nan] == np.float32(m.lo)).all() and np.isnan(b[nan]).all()


def test_unknown_reading_and_version():
    with pytest.raises(SpecError, match="Did you mean 'header'") as exc:
        trt.resolve(spec("float32", 0, 6, "headers"))
    assert exc.value.loc == "reading"
    assert trt.version_tensorrt("10.16") == "10" and trt.version_tensorrt("v8") == "8"
    with pytest.raises(SpecError, match="Unknown TensorRT version"):
        trt.resolve(spec("float32", 0, 6, version="7"))


# --- section 6.2 of the reference: the drift witnesses ----------------------------------------------------------

@pytest.mark.parametrize("dtype,alpha,beta,reading,x,want", [
    pytest.param("float32", 3, 1, "observed", [0.0, 2.0, 9.0], [3.0, 3.0, 3.0], id="6.2-min-gt-max-all-alpha"),
    pytest.param("float32", 0, 6, "observed", [math.nan], [0.0], id="6.2-nan-input-to-lower-bound"),
    pytest.param("float32", 0, 6, "header", [math.nan], [math.nan], id="header-reading-executes-propagate"),
    pytest.param("float32", 0, 6, None, [math.nan, 9.0], [math.nan, 6.0], id="default-is-the-header"),
    pytest.param("float16", -1, 1, "observed", [math.nan, -2.0, 2.0], [-1.0, -1.0, 1.0], id="6.2-fp16-float-bounds"),
    pytest.param("int8", -2.5, 2.5, "observed", [-128, -3, 3, 127], [-2, -2, 2, 2], id="int8-rounded-bounds"),
])
def test_evaluate_witnesses(dtype, alpha, beta, reading, x, want):
    m = trt.resolve(spec(dtype, alpha, beta, reading))
    got = evaluate(m, np.asarray(x, dtype=m.dtype.np_dtype))
    assert same_outputs(got, np.asarray(want, dtype=m.dtype.np_dtype)).all()


ONNX = dict(dialect="onnx", opset=13, elem_type="FLOAT")


# reading: the reading the witness holds under (None: the default, the header). The NaN -> alpha witnesses of
# section 6.2 are TensorRT's observed engine: findings and witnesses with reading "observed".
@pytest.mark.parametrize("source,mode,status,code,witness,reading", [
    pytest.param(OnnxSpec(**ONNX, min=3, max=1), Mode.LITERAL, "drift", Code.MIN_GREATER_THAN_MAX, (1.0, 3.0), None,
                 id="6.2-crossed-onnx-all-1-tensorrt-all-3"),
    pytest.param(OnnxSpec(**ONNX, min=3, max=1), Mode.PRESERVE, "drift", Code.NAN_INPUT, ("nan", 1.0), "observed",
                 id="6.2-crossed-preserved-as-alpha-eq-beta-nan-remains"),
    pytest.param(OnnxSpec(**ONNX, min=0, max=6), Mode.PRESERVE, "drift", Code.NAN_INPUT, ("nan", 0.0), "observed",
                 id="6.2-nan-input-to-lower-bound"),
    pytest.param(OnnxSpec(dialect="onnx", opset=13, elem_type="FLOAT16", max=6), Mode.LITERAL, "drift",
                 Code.DEFAULT_BOUND, None, None, id="parser-default-minus-flt-max-is-minus-inf-in-half"),
])
def test_onnx_into_tensorrt(source, mode, status, code, witness, reading):
    tr = translate(source, ["tensorrt"], mode).translations[0]
    assert tr.status == status, [f.to_json() for f in tr.findings]
    assert code in _codes(tr)
    if witness is not None:
        f = next(f for f in tr.findings if f.code is code and f.witness is not None)
        w = f.witness
        assert f.reading == w.reading == reading
        src_out, tgt_out = witness
        assert (math.isnan(w.source_output) if src_out == "nan" else w.source_output == src_out)
        assert w.target_output == tgt_out


@pytest.mark.parametrize("mode", [Mode.PRESERVE, Mode.LITERAL])
def test_nan_to_alpha_is_never_a_default_finding(mode):
    """Under the default (the header) a NaN input is undocumented: a warning with no witness; the NaN -> alpha drift
    is the observed reading's, as data (`reading`) and in the message."""
    tr = translate(OnnxSpec(**ONNX, min=0, max=6), ["tensorrt"], mode).translations[0]
    nan = [f for f in tr.findings if f.code is Code.NAN_INPUT]
    default = [f for f in nan if f.reading is None]
    assert [(f.severity, f.witness) for f in default] == [(Severity.WARNING, None)]
    observed = [f for f in nan if f.reading == "observed"]
    assert len(observed) == 1 and observed[0].severity is Severity.ERROR
    assert observed[0].witness.reading == "observed" and observed[0].message.startswith("under the observed reading")


@pytest.mark.parametrize("elem_type,status,severity,text", [
    pytest.param("FLOAT", "drift", Severity.INFO, "getSingleValueAsFloat", id="float-via-kclip"),
    pytest.param("INT32", "unsupported", Severity.INFO, "kMAX(input, min) then kMIN", id="int32-elementwise"),
    pytest.param("INT64", "unsupported", Severity.INFO, "kMAX(input, min) then kMIN", id="int64-elementwise"),
    pytest.param("UINT8", "unsupported", Severity.ERROR, "rejects a UINT8", id="uint8-rejected"),
])
def test_onnx_tensorrt_parser_findings(elem_type, status, severity, text):
    tr = translate(OnnxSpec(dialect="onnx", opset=13, elem_type=elem_type, min=0, max=6), ["tensorrt"]).translations[0]
    assert tr.status == status
    f = next(f for f in tr.findings if text in f.message)
    assert f.severity is severity and "onnx-tensorrt" in f.target_behaviour


# --- to and from TOSA: min > max (TensorRT alpha vs TOSA error) and NaN (IGNORE vs to-lower) -----------------------

# status: under the default readings (TensorRT: the header, NaN undocumented); other: the other reading and the
# non-info finding codes only it adds (TensorRT's observed NaN -> alpha against TOSA PROPAGATE drifts; it matches
# TOSA IGNORE). A default header source is written as PROPAGATE (the NaN rule it documents nothing against).
@pytest.mark.parametrize("source,target,mode,status,check,other", [
    pytest.param(spec("float32", 3, 1), "tosa", Mode.PRESERVE, "drift",
                 {"min_val": 3.0, "max_val": 3.0, "nan_mode": "PROPAGATE"}, ("observed", [Code.NAN_INPUT]),
                 id="crossed-to-tosa-min-eq-max-propagate"),
    pytest.param(spec("float32", 3, 1), "tosa", Mode.LITERAL, "unsupported", None, ("observed", []),
                 id="crossed-to-tosa-error-if"),
    pytest.param(spec("float32", 0, 6), "tosa", Mode.PRESERVE, "drift", {"nan_mode": "PROPAGATE"},
                 ("observed", [Code.NAN_INPUT]), id="header-to-tosa-nan-undocumented"),
    pytest.param(spec("float32", 0, 6, "observed"), "tosa", Mode.PRESERVE, "exact", {"nan_mode": "IGNORE"},
                 ("header", [Code.NAN_INPUT]), id="observed-pinned-to-tosa-ignore"),
    pytest.param(tosa.spec.TosaSpec(dialect="tosa", dtype="fp16", min_val=-1, max_val=1, nan_mode="IGNORE"), "tensorrt",
                 Mode.PRESERVE, "drift", {"alpha": -1.0, "beta": 1.0}, ("observed", []),
                 id="tosa-ignore-to-tensorrt-undocumented-observed-exact"),
    pytest.param(tosa.spec.TosaSpec(dialect="tosa", dtype="fp32", min_val=0, max_val=6), "tensorrt", Mode.PRESERVE,
                 "drift", None, ("observed", [Code.NAN_INPUT]), id="tosa-propagate-to-tensorrt-nan-drift"),
    pytest.param(spec("int8", -2.5, 100), "tosa", Mode.PRESERVE, "exact", {"min_val": -2, "max_val": 100},
                 ("observed", []), id="int8-rounded-bound-to-tosa"),
])
def test_tensorrt_and_tosa(source, target, mode, status, check, other):
    tr = translate(source, [target], mode).translations[0]
    assert default_status(tr) == status, [f.to_json() for f in tr.findings]
    reading, codes = other
    assert [f.code for f in under(tr, reading)] == codes
    assert all(f.reading == reading for f in under(tr, reading))
    assert tr.status == ("drift" if codes else status)
    for k, v in (check or {}).items():
        assert tr.target[k] == v


@pytest.mark.parametrize("target,status,code", [
    pytest.param("onnx", "drift", Code.NAN_INPUT, id="to-onnx-nan"),
    pytest.param("stablehlo", "drift", Code.NAN_INPUT, id="to-stablehlo-nan"),
    pytest.param("openvino", "drift", Code.NAN_INPUT, id="to-openvino-nan"),
])
def test_translate_from_tensorrt(target, status, code):
    tr = translate(spec("float32", 0, 6), [target]).translations[0]
    assert tr.status == status and code in _codes(tr), [f.to_json() for f in tr.findings]


def test_crossed_to_onnx_writes_min_eq_max():
    tr = translate(spec("int8", 3, 1), ["onnx"]).translations[0]
    assert tr.status == "exact" and tr.target["min"] == tr.target["max"] == 3


# --- artifacts and the oracle -----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype,alpha,beta,py,cpp", [
    pytest.param("float32", 0, 6, "layer.alpha = 0.0\nlayer.beta = 6.0", "layer->setAlpha(0.0F);", id="relu6"),
    pytest.param("float32", "-inf", 0.1, 'layer.alpha = -float("inf")\nlayer.beta = 0.10000000149011612',
                 "-std::numeric_limits<float>::infinity()", id="inf-and-float32-value"),
    pytest.param("int8", -2.5, 7, "layer.alpha = -2.0", "layer->setBeta(7.0F);", id="int8-scale-comment"),
])
def test_api_artifacts(dtype, alpha, beta, py, cpp):
    e = trt_emit.emit(trt.resolve(spec(dtype, alpha, beta)), trt_spec.TensorRtTarget(dialect="tensorrt"),
                      Mode.PRESERVE, None)
    assert "network.add_activation(x, trt.ActivationType.CLIP)" in e.artifacts["tensorrt_python"]
    assert py in e.artifacts["tensorrt_python"] and cpp in e.artifacts["tensorrt_cpp"]
    assert ("set_dynamic_range" in e.artifacts["tensorrt_python"]) is (dtype == "int8")


@settings(derandomize=True, max_examples=300, deadline=None)
@given(x=st.floats(width=32) | st.sampled_from([math.nan, -0.0]),
       alpha=st.floats(-10, 10, width=32), beta=st.floats(-10, 10, width=32))
def test_meaning_is_the_header_formula(x, alpha, beta):
    """max(alpha, min(beta, x)) on float32, any alpha/beta order; a NaN input stays NaN under the default (header)
    and is read as alpha under the observed reading."""
    m = trt.resolve(spec("float32", alpha, beta))
    a, b = np.float32(alpha), np.float32(beta)
    for meaning, nan_out in ((m, np.float32("nan")), (m.under("observed"), a)):
        want = nan_out if math.isnan(x) else max(a, min(b, np.float32(x)))
        got = evaluate(meaning, np.asarray([x], dtype=np.float32))
        assert same_outputs(got, np.asarray([want], dtype=np.float32)).all()


def test_translate_api_names_tensorrt(client):
    r = client.post("/v1/translate", json={"source": {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT",
                                                      "min": 3, "max": 1}, "targets": ["tensorrt"],
                                           "mode": "literal"})
    assert r.status_code == 200, r.text
    tr = r.json()["translations"][0]
    assert tr["status"] == "drift" and "add_activation" in tr["artifacts"]["tensorrt_python"]
    r = client.post("/v1/execute", json={"spec": {"dialect": "tensorrt", "dtype": "float32", "alpha": 0, "beta": 6},
                                         "input": {"dtype": "float32", "shape": [3], "data": [-1, 9, "nan"]}})
    assert r.status_code == 200, r.text
    body = r.json()  # the default is the specification: the header leaves NaN undocumented (executed as propagate)
    assert body["output"]["data"] == [0.0, 6.0, "nan"] and body["shows"] == "specification"
    assert body["reading"] == "header"
    r = client.post("/v1/translate", json={"source": {"dialect": "tensorrt", "dtype": "fp32", "alpha": 0, "beta": 1}})
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == "spec.dtype"


@pytest.mark.parametrize("name", list(trt_cat.EXAMPLES))
def test_examples_and_rule_texts(name):
    m = trt.resolve(trt_spec.TensorRtSpec.model_validate(trt_cat.EXAMPLES[name]))
    assert m.state is State.DEFINED
    assert set(tensorrt.DIALECT.rule_texts) <= {c.value for c in Code}


@pytest.mark.parametrize("alpha,code", [
    pytest.param(100.7, Code.BOUND_ROUNDING, id="fraction-rounds-not-a-precision-loss"),
    pytest.param("2.50000000000000001", Code.BOUND_PRECISION, id="float-step-makes-a-tie-then-even"),
])
def test_int8_bound_code(alpha, code):
    """An int8 bound's code: rounding when nearest-even of the number itself moves it, precision when the float
    attribute's rounding does (2.50000000000000001 is 3 exactly rounded, 2 after float makes it a tie)."""
    m = trt.resolve(spec("int8", alpha, 120))
    assert m.lower.rounded and m.lower.precision_loss is (code is Code.BOUND_PRECISION)
