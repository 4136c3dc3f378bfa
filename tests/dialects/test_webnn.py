"""WebNN clamp: the spec model (MLNumber: JS Number or BigInt), both readings (spec, chromium) against the witnesses
of the reference's drift table (more-dialects.md section 1.5), the casts as properties, emit (JavaScript
builder calls), per-reading drift in translations, and the `reading` plumbing of /v1/execute and /v1/compare.

No WebNN engine runs on Linux: the readings are checked against the witnesses the W3C text, Chromium's code and
web-platform-tests give; the emitted JavaScript is run by Node against a stand-in builder (webnn-baseline's
clamp formula) where Node is installed."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clipbridge.core import exact
from clipbridge.dialects import webnn
from clipbridge.dialects.webnn import emit as wemit
from clipbridge.dialects.webnn import js as wjs
from clipbridge.dialects.webnn import meaning as wn
from clipbridge.dialects.webnn import spec as wspec
from clipbridge.dialects.kit.common import Mode
from clipbridge.core.dtypes import FLOAT16, INT8, INT32, INT64, UINT8, UINT32, UINT64
from clipbridge.core.errors import RejectedSpec, SpecError
from clipbridge.core.findings import Code, Severity
from clipbridge.core.evaluate import evaluate
from clipbridge.core.meaning import NanBound, NanInput, Order, State
from clipbridge.dialects.onnx.spec import OnnxSpec
from clipbridge.service.translate import translate
from tests import oracle


def spec(dt: str, mn=None, mx=None, shape=None) -> wspec.WebNNSpec:
    return wspec.WebNNSpec(dialect="webnn", dataType=dt, minValue=mn, maxValue=mx, shape=shape)


def run(m, xs) -> list:
    out = evaluate(m, np.asarray(xs, dtype=m.dtype.np_dtype))
    return [m.dtype.to_python(v) for v in out]


def same(a: list, b: list) -> bool:
    return all((isinstance(p, float) and isinstance(q, float) and math.isnan(p) and math.isnan(q)) or p == q
               for p, q in zip(a, b, strict=True))


# --- data types, versions, MLNumber ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(wspec.DATA_TYPES))
def test_every_data_type(name):
    m = wn.resolve(spec(name, 0, 1))
    assert m.dtype is wspec.DATA_TYPES[name] and m.order is Order.REJECTED
    assert m.nan_input is NanInput.UNDOCUMENTED and m.nan_bound is NanBound.UNDOCUMENTED
    chromium = m.under("chromium")
    assert chromium is not m and chromium.nan_bound is NanBound.IGNORE and m.under("spec") is m


@pytest.mark.parametrize("name,why", [
    pytest.param("bfloat16", "not a WebNN MLOperandDataType", id="bf16"),
    pytest.param("float64", "not a WebNN MLOperandDataType", id="f64"),
    pytest.param("int16", "not a WebNN MLOperandDataType", id="int16"),
    pytest.param("uint16", "not a WebNN MLOperandDataType", id="uint16"),
    pytest.param("flaot32", "Did you mean 'float32'", id="typo"),
])
def test_refused_data_types(name, why):
    with pytest.raises(SpecError, match=why) as exc:
        wn.resolve(spec(name, 0, 1))
    assert exc.value.loc == "dataType"


@pytest.mark.parametrize("text", ["1", "v1", "CR", "latest", "2026-06-26"])
def test_one_version(text):
    assert wn.version_webnn(text) == "1"


def test_unknown_version():
    with pytest.raises(SpecError, match="WebNN has no op versions") as exc:
        wn.version_webnn("2")
    assert exc.value.loc == "version"


@pytest.mark.parametrize("wire,value,is_bigint,written", [
    pytest.param("9007199254740993n", 9007199254740993, True, "9007199254740993n", id="bigint-string"),
    pytest.param("-5n", -5, True, "-5n", id="negative-bigint"),
    # Written back as the project's exact integer string: read again, it is the same JS Number.
    pytest.param(9007199254740993, 9007199254740993, False, "9007199254740993", id="json-integer-is-a-number"),
    pytest.param("0.1", None, False, "0.1", id="decimal-string"),
])
def test_ml_number_wire(wire, value, is_bigint, written):
    s = spec("int64", mx=wire)
    assert isinstance(s.maxValue, wspec.BigInt) is is_bigint
    if value is not None:
        assert s.maxValue == value
    assert wn.normalize(s)["maxValue"] == written
    again = wspec.WebNNSpec.model_validate(wn.normalize(s))
    assert isinstance(again.maxValue, wspec.BigInt) is is_bigint and wn.resolve(again).hi == wn.resolve(s).hi


def test_bigint_needs_digits():
    with pytest.raises(Exception, match="Not a number"):
        spec("int64", mx="1.5n")


# --- the reference's drift table (section 1.5), one row per case, under both readings --------------------------

# (data type, minValue, maxValue, input, spec-reading output, chromium-reading output); "TypeError": rejected.
TABLE = [
    pytest.param("uint8", 3, 1, [0, 2, 9], "TypeError", "TypeError", id="min-gt-max-uint8-TypeError"),
    pytest.param("int32", 0, 0, [-5, 0, 5], [0, 0, 0], [0, 0, 0], id="min-eq-max-legal"),
    pytest.param("int64", 3.9, None, [-1], [4], [3], id="int64-min-3.9-half-even-vs-truncate"),
    pytest.param("int8", 2.5, None, [0], [2], [2], id="int8-min-2.5-ties-to-even"),
    pytest.param("int8", -2.5, 3.5, [-9, 9], [-2, 4], [-2, 3], id="int8-negative-tie-and-3.5"),
    pytest.param("uint32", None, 4294967290, [4294967295], [2147483647], [4294967290],
                 id="uint32-signed-cast-typo-WPT-7"),
    pytest.param("float32", None, None, [-math.inf, math.inf], [-math.inf, math.inf], [-math.inf, math.inf],
                 id="omitted-bounds-no-clamp-WPT-45-48"),
    pytest.param("float32", None, 6, [-math.inf], [-math.inf], [-math.inf], id="f32-no-min-keeps-minus-inf"),
    pytest.param("int8", None, None, [-128, 127], [-128, 127], [-128, 127], id="int8-omitted-type-limits"),
    pytest.param("float32", "nan", 6, [-2.0, 9.0], [-2.0, 6.0], [-2.0, 6.0], id="f32-nan-min-newer-WPT-as-omitted"),
    pytest.param("int8", "nan", None, [-2], [0], [-2], id="int8-nan-min-ConvertToInt-0-vs-omitted"),
    pytest.param("float32", 0, 6, [math.nan], [math.nan], [math.nan], id="nan-input-executed-as-propagate"),
    pytest.param("float16", "1.0004882812509095", None, [1.0], [1.0009765625], [1.0],
                 id="f16-min-one-rounding-vs-double-rounding"),
    pytest.param("float16", 65520, None, [0.0], [math.inf], [math.inf], id="f16-65520-is-inf"),
    pytest.param("float16", 65519.999, None, [0.0], [65504.0], [math.inf],
                 id="f16-65519.999-double-rounding-overflows"),
    pytest.param("int64", 9007199254740993, None, [9007199254740992], [9007199254740992], [9007199254740992],
                 id="int64-number-over-2^53-loses-precision"),
    pytest.param("int64", "9007199254740993n", None, [9007199254740992], [9007199254740993], [9007199254740993],
                 id="int64-bigint-exact"),
    pytest.param("uint64", "18446744073709551615n", None, [0], [18446744073709551615], [18446744073709551615],
                 id="uint64-bigint-top"),
    pytest.param("int8", 300, -300.5, [0], "TypeError", "TypeError", id="saturated-then-compared"),
    pytest.param("int8", 1.6, 1.4, [0, 5], "TypeError", [1, 1], id="int8-1.6-over-1.4-spec-throws-chromium-1-1"),
    pytest.param("float32", "3.4028235e38", None, [0.0], [3.4028234663852886e38], [math.inf],
                 id="f32-js-FLT_MAX-literal-saturated_cast-overflow"),
]


@pytest.mark.parametrize("dt,mn,mx,x,want_spec,want_chromium", TABLE)
def test_reference_witnesses(dt, mn, mx, x, want_spec, want_chromium):
    m = wn.resolve(spec(dt, mn, mx))
    for reading, want in (("spec", want_spec), ("chromium", want_chromium)):
        mr = m.under(reading)
        if want == "TypeError":
            assert mr.state is State.REJECTED and "step 5" in mr.reason
            with pytest.raises(RejectedSpec, match="TypeError"):
                evaluate(mr, np.asarray(x, dtype=mr.dtype.np_dtype))
        else:
            got = run(mr, x)
            assert same(got, want), (reading, got, want)


def test_onnx_gives_max_where_webnn_throws():
    """Row 'min > max': ONNX Clip-13 min=3, max=1 on uint8 gives every output 1; WebNN throws a TypeError."""
    src = OnnxSpec(dialect="onnx", opset=13, elem_type="UINT8", min=3, max=1)
    from clipbridge.service.translate import resolve_spec
    assert run(resolve_spec(src).meaning, [0, 2, 9]) == [1, 1, 1]
    tr = translate(src, ["webnn"], Mode.LITERAL).translations[0]
    assert tr.status == "unsupported"
    assert any(f.code is Code.MIN_GREATER_THAN_MAX and "TypeError" in f.message and "onnxruntime" in f.message
               for f in tr.findings)


def _oracle_nan_bound(rule: str, lo, hi, x: list[float]) -> list[float]:
    """The independent oracle's float32 clip with NaN bound rule `rule` ("ignore", "zero", "propagate")."""
    c = oracle.Clip("float32", lo, hi, nan_bound=rule)
    return [float(v) for v in oracle.clip_values(c, np.asarray(x, np.float64))]


def test_chromium_reading_is_a_decision_against_older_chromium():
    """Decision (webnn/meaning.py docstring, docs/testing.md): the chromium reading follows current
    web-platform-tests, a NaN bound acts as omitted; older Chromium read it as 0. Both are checked against the
    oracle's rule, and they must differ on x = -2 (if they ever agree, one of the two readings changed)."""
    m = wn.resolve(spec("float32", "nan", 6))
    chromium = run(m.under("chromium"), [-2.0, 3.0, 7.0])
    older = run(replace(m, nan_bound=NanBound.ZERO), [-2.0, 3.0, 7.0])
    assert same(chromium, _oracle_nan_bound("ignore", math.nan, 6.0, [-2.0, 3.0, 7.0]))
    assert same(older, _oracle_nan_bound("zero", math.nan, 6.0, [-2.0, 3.0, 7.0]))
    assert chromium[0] != older[0]


def test_older_chromium_nan_bound_as_zero():
    """Older web-platform-tests read a NaN bound as 0 (webnn#874): the NanBound.ZERO variant computes that."""
    m = wn.resolve(spec("float32", "nan", 6))
    older = replace(m, nan_bound=NanBound.ZERO)
    assert run(older, [-2.0, 3.0]) == [0.0, 3.0]
    assert wn.NOTE_OLD_NAN_BOUND in m.engine_notes and wn.NOTE_OLD_NAN_BOUND in m.under("chromium").engine_notes


REPORT_874 = json.loads((Path(__file__).parent.parent / "data" / "webnn_874.json").read_text())
NAN_BOUND_RULES = ("ignore", "zero", "propagate")
# How the test reads each reported output: the NaN-bound rule that gives it (None: no rule gives +Infinity from
# input -Infinity; a backend bug, named in NOTE_OLD_NAN_BOUND).
READ_AS = {"-inf": "ignore", "nan": "propagate", "inf": None}


@pytest.mark.parametrize("backend", [pytest.param(b, id=b.replace(" ", "-").replace("/", "-"))
                                     for b in REPORT_874["outputs"]])
def test_reported_874_outputs_read_through_the_oracle(backend):
    """webnn#874's reported output per backend (test data, tests/data/webnn_874.json) is explained by exactly the
    oracle's NaN-bound rule READ_AS names; the chromium reading (a NaN bound acts as omitted) gives a backend's
    output exactly when that rule is "ignore"."""
    x = float(REPORT_874["input"])
    out_text = REPORT_874["outputs"][backend]
    out = float(out_text)
    rules = [r for r in NAN_BOUND_RULES if same(_oracle_nan_bound(r, math.nan, math.inf, [x]), [out])]
    want = READ_AS[out_text]
    assert rules == ([want] if want else []), (backend, out_text, rules)
    m = wn.resolve(spec("float32", REPORT_874["minValue"])).under("chromium")
    assert same(run(m, [x]), [out]) == (want == "ignore")
    assert out_text.replace("inf", "Infinity").replace("nan", "NaN") in wn.NOTE_OLD_NAN_BOUND.text


def test_spec_nan_bound_passes_step_5():
    m = wn.resolve(spec("float32", "nan", "nan"))
    assert m.state is State.DEFINED and m.lower.is_nan and m.upper.is_nan


def test_uint32_typo_is_named_in_the_steps():
    m = wn.resolve(spec("uint32", None, 4294967290))
    assert any("SIGNED 32-bit" in s for s in m.upper.steps) and m.upper.saturated
    assert not m.under("chromium").upper.steps


def test_number_over_2_53_is_a_precision_step():
    m = wn.resolve(spec("int64", None, 9007199254740993))
    assert m.upper.precision_loss and "JS Number" in m.upper.steps[0]


def test_rules_name_the_erratum_and_readings():
    m = wn.resolve(spec("float32", 0, 6))
    assert any("erratum" in r for r in m.rules)
    assert [r.split(":")[0] for r in m.readings] == ["spec", "chromium"]


# --- the casts as properties --------------------------------------------------------------------------------

INT_TYPES = [INT8, UINT8, INT32, UINT32, INT64, UINT64]


@settings(derandomize=True, max_examples=300, deadline=None)
@given(d=st.floats(allow_nan=True, allow_infinity=True) | st.integers(-300, 300).map(lambda i: i / 2),
       dt=st.sampled_from([t for t in INT_TYPES if t is not UINT32]))
def test_spec_integer_cast_is_round_half_even_then_saturate(d, dt):
    """ConvertToInt (spec reading) = clipbridge.core.exact round-half-even, saturated; NaN -> 0; +-inf -> the extremes."""
    got = wn.bound_spec_webnn(d, dt, "minValue").value
    if math.isnan(d):
        want = 0
    elif math.isinf(d):
        want = dt.lowest() if d < 0 else dt.highest()
    else:
        want = dt.saturate(exact.round_half_even_exact(d))
    assert got == want


@settings(derandomize=True, max_examples=200, deadline=None)
@given(d=st.floats(allow_nan=False, allow_infinity=False) | st.integers(-300, 300).map(lambda i: i / 2))
def test_spec_uint32_cast_goes_through_signed_32(d):
    got = wn.bound_spec_webnn(d, UINT32, "maxValue").value
    assert got == max(0, INT32.saturate(exact.round_half_even_exact(d)))


@settings(derandomize=True, max_examples=300, deadline=None)
@given(d=st.floats(allow_nan=False, allow_infinity=True), dt=st.sampled_from(INT_TYPES))
def test_chromium_integer_cast_truncates_and_saturates(d, dt):
    got = wn.bound_chromium(d, dt, "minValue").value
    want = dt.saturate(exact.trunc_exact(d)) if math.isfinite(d) else (dt.lowest() if d < 0 else dt.highest())
    assert got == want


@settings(derandomize=True, max_examples=300, deadline=None)
@given(d=st.floats(allow_nan=False, width=64, min_value=-7e4, max_value=7e4))
def test_float16_readings_differ_only_by_double_rounding(d):
    spec_v = wn.bound_spec_webnn(d, FLOAT16, "minValue").value
    chromium_v = wn.bound_chromium(d, FLOAT16, "minValue").value
    assert spec_v == FLOAT16.round(d)
    assert chromium_v == FLOAT16.round(exact.to_float32(d))
    if exact.to_float32(d) == d:
        assert spec_v == chromium_v


# --- emit -----------------------------------------------------------------------------------------------------

def _tr(source, target="webnn", mode=Mode.PRESERVE):
    return translate(source, [target], mode).translations[0]


def test_js_artifact_relu6():
    tr = _tr(OnnxSpec(dialect="onnx", opset=13, elem_type="FLOAT", min=0, max=6, shape=[1, 4]))
    assert tr.target == {"dialect": "webnn", "dataType": "float32", "shape": [1, 4], "minValue": 0.0,
                         "maxValue": 6.0}
    js = tr.artifacts["webnn_js"]
    assert "const x = builder.input('x', {dataType: 'float32', shape: [1, 4]});" in js
    assert "const y = builder.clamp(x, {minValue: 0, maxValue: 6});" in js
    # float NaN inputs: ONNX propagates, WebNN does not say: drift (warning), as for DirectML.
    assert tr.status == "drift" and {f.code for f in tr.findings if f.severity is not Severity.INFO} == \
        {Code.NAN_INPUT}


def test_js_artifact_bigint_and_omitted_bound():
    tr = _tr(OnnxSpec(dialect="onnx", opset=13, elem_type="INT64", max=9007199254740993, shape=[3]))
    assert tr.status == "exact" and tr.target["maxValue"] == "9007199254740993n" and "minValue" not in tr.target
    assert "builder.clamp(x, {maxValue: 9007199254740993n});" in tr.artifacts["webnn_js"]
    assert wemit.NOTE_ORT_FLOAT in tr.meaning.engine_notes  # ORT's WebNN EP passes bounds as float


@pytest.mark.parametrize("value,text", [
    pytest.param(wspec.BigInt(5), "5n", id="bigint"), pytest.param(math.nan, "NaN", id="nan"),
    pytest.param(-math.inf, "-Infinity", id="-inf"), pytest.param(-0.0, "-0", id="neg-zero"),
    pytest.param(0.1, "0.1", id="shortest-double"), pytest.param(1e300, "1e+300", id="exponent"),
    pytest.param(9007199254740993, "9007199254740993", id="number-literal-as-written"),
])
def test_js_number(value, text):
    assert wjs.js_number(value) == text


def test_symbolic_shape_is_declared():
    tr = _tr(OnnxSpec(dialect="onnx", opset=13, elem_type="FLOAT", min=0, max=6, shape=["N", 3, None]))
    js = tr.artifacts["webnn_js"]
    assert "const N = 1;" in js and "const dim2 = 1;" in js and "shape: [N, 3, dim2]" in js
    assert any(f.code is Code.SHAPE_UNKNOWN for f in tr.findings)


def test_rank_above_five_warns():
    tr = _tr(OnnxSpec(dialect="onnx", opset=13, elem_type="FLOAT", min=0, max=6, shape=[1] * 6))
    assert any(f.code is Code.RANK_UNSUPPORTED and f.severity is Severity.WARNING for f in tr.findings)


@pytest.mark.parametrize("elem", ["BFLOAT16", "DOUBLE", "INT16", "UINT16"])
def test_types_webnn_lacks_are_unsupported(elem):
    tr = _tr(OnnxSpec(dialect="onnx", opset=13, elem_type=elem, min=0, max=6))
    assert tr.status == "unsupported" and tr.findings[0].code is Code.DTYPE_UNSUPPORTED


@pytest.mark.parametrize("source,mode,want", [
    pytest.param(OnnxSpec(dialect="onnx", opset=13, elem_type="UINT8", min=3, max=1), Mode.PRESERVE,
                 {"minValue": 1, "maxValue": 1}, id="crossed-preserved-as-min-eq-max"),
    pytest.param(OnnxSpec(dialect="onnx", opset=13, elem_type="INT8", max=6), Mode.LITERAL,
                 {"maxValue": 6}, id="literal-default-min-left-out"),
    pytest.param(OnnxSpec(dialect="onnx", opset=13, elem_type="FLOAT", max=6), Mode.PRESERVE,
                 {"minValue": -3.4028234663852886e38, "maxValue": 6.0}, id="onnx-lowest-default-written"),
])
def test_emit_values(source, mode, want):
    tr = _tr(source, mode=mode)
    assert {k: v for k, v in tr.target.items() if k in ("minValue", "maxValue")} == want


def test_uint32_high_bound_drifts_under_the_spec_reading_only():
    tr = _tr(OnnxSpec(dialect="onnx", opset=13, elem_type="UINT32", max=4294967290))
    sat = [f for f in tr.findings if f.code is Code.BOUND_SATURATION]
    assert sat and not sat[0].message.startswith("under the") and sat[0].witness.target_output == 2147483647
    assert not any(f.message.startswith("under the chromium reading") and f.severity is Severity.ERROR
                   for f in tr.findings)


@pytest.mark.parametrize("source,target,code,witness", [
    pytest.param(spec("int64", 3.9), "onnx", Code.BOUND_ROUNDING, (3, 3, 4), id="int64-3.9-to-onnx"),
    pytest.param(spec("float16", "1.0004882812509095"), "stablehlo", Code.BOUND_PRECISION, (1.0, 1.0, 1.0009765625),
                 id="f16-double-rounding-to-stablehlo"),
])
def test_translation_reports_drift_under_the_chromium_reading(source, target, code, witness):
    tr = _tr(source, target)
    hits = [f for f in tr.findings if f.message.startswith("under the chromium reading:") and f.code is code]
    assert hits and tr.status == "drift"
    w = hits[0].witness
    assert (w.input, w.source_output, w.target_output) == witness


def test_openvino_fraction_literal_into_webnn_int8_drifts_under_chromium_only():
    """OpenVINO i8 min=1.5 (ceil: 2) copied literally: the spec reading rounds half to even (2: exact), Chromium
    truncates (1): a finding under the chromium reading, with its witness."""
    from clipbridge.dialects.openvino.spec import OpenVinoSpec
    tr = _tr(OpenVinoSpec(dialect="openvino", element_type="i8", min=1.5, max=100), mode=Mode.LITERAL)
    assert tr.target["minValue"] == 1.5
    errors = [f for f in tr.findings if f.severity is Severity.ERROR]
    assert errors and all(f.message.startswith("under the chromium reading:") for f in errors)
    w = errors[0].witness
    assert (w.input, w.source_output, w.target_output) == (1, 2, 1)


def test_webnn_source_under_both_readings_to_itself_is_exact():
    m = wn.resolve(spec("int8", -3, 100))
    e = wemit.emit(m, wspec.WebNNTarget(dialect="webnn"), Mode.PRESERVE, [4])
    assert e.meaning is not None and e.meaning.lo == -3 and e.meaning.hi == 100 and not e.unsupported


def test_dialect_entry():
    d = webnn.DIALECT
    assert list(d.readings) == ["spec", "chromium"] and d.engines == {} and not d.in_defaults
    for name, example in d.examples.items():
        wn.resolve(wspec.WebNNSpec.model_validate(example))
    for code in d.rule_texts:
        Code(code)


# --- JavaScript: the artifact run by Node against webnn-baseline's clamp formula ------------------------------

STAND_IN = """
const navigator = {ml: {createContext: async () => ({})}};
class MLGraphBuilder {
  input(name, desc) { return {name, desc}; }
  // webmachinelearning/webnn-baseline src/clamp.js: defaults -Infinity/Infinity, Math.min(Math.max(x, lo), hi)
  clamp(x, {minValue = -Infinity, maxValue = Infinity} = {}) { return {x, minValue, maxValue}; }
  async build(outs) { return outs; }
}
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")
@pytest.mark.parametrize("s", [
    pytest.param(spec("float32", 0, 6, [1, 4]), id="relu6"),
    pytest.param(spec("int64", None, "9007199254740993n", [2]), id="bigint"),
    pytest.param(spec("float32", "-inf", "-0.0", ["N"]), id="inf-and-negative-zero"),
    pytest.param(spec("float16", "1.0004882812509095", None, None), id="f16-literal"),
])
def test_emitted_javascript_runs_and_carries_the_numbers(s):
    """The artifact is valid JavaScript and its literals are the MLNumbers of the spec (BigInt exact, a Number
    literal the double clipbridge resolved)."""
    js = wjs.js_text(s)
    body = STAND_IN + "(async () => {\n" + js + (
        "const c = graph.y; const show = v => typeof v === 'bigint' ? v.toString() + 'n' : "
        "(Object.is(v, -0) ? '-0' : String(v));\n"
        "console.log(JSON.stringify({dataType: c.x.desc.dataType, min: show(c.minValue), max: show(c.maxValue)}));"
        "\n})();\n")
    out = subprocess.run(["node", "-e", body], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["dataType"] == s.dataType
    for key, v in (("min", s.minValue), ("max", s.maxValue)):
        if v is None:
            assert got[key] == ("-Infinity" if key == "min" else "Infinity")
        elif isinstance(v, wspec.BigInt):
            assert got[key] == f"{int(v)}n"
        else:
            assert float(got[key]) == exact.to_double(v) or (got[key] == "-0" and v == 0)


# --- /v1/execute and /v1/compare: `reading` -----------------------------------------------------------------

I64 = {"dialect": "webnn", "dataType": "int64", "minValue": 3.9}
DML_CROSSED = {"dialect": "onnx", "opset": 13, "elem_type": "INT8", "min": 5, "max": 2}


def _post(client, path, **body):
    return client.post(path, json=body)


@pytest.mark.parametrize("reading,want", [pytest.param(None, ([4, 5], "spec"), id="default-spec"),
                                          pytest.param("spec", ([4, 5], "spec"), id="spec"),
                                          pytest.param("chromium", ([3, 5], "chromium"), id="chromium")])
def test_execute_reading(client, reading, want):
    body = {"spec": I64, "input": {"dtype": "int64", "shape": [2], "data": [-1, 5]}}
    if reading:
        body["reading"] = reading
    r = _post(client, "/v1/execute", **body)
    assert r.status_code == 200, r.text
    assert (r.json()["output"]["data"], r.json()["reading"]) == want
    assert r.json()["meaning"].endswith(f"[{want[0][0]}, 9223372036854775807]")


@pytest.mark.parametrize("spec_,semantics,reading,valid", [
    pytest.param(I64, None, "current-doc", "spec, chromium", id="directml-reading-for-webnn"),
    pytest.param(DML_CROSSED, "directml", "chromium", "current-doc, 2022-doc", id="webnn-reading-for-directml"),
    pytest.param(DML_CROSSED, "onnx", "spec", "take none", id="reading-for-onnx"),
])
def test_execute_unknown_reading_for_the_semantics_is_400(client, spec_, semantics, reading, valid):
    dtype = "int64" if spec_ is I64 else "int8"
    body = {"spec": spec_, "input": {"dtype": dtype, "shape": [1], "data": [0]}, "reading": reading}
    if semantics:
        body["semantics"] = semantics
    r = _post(client, "/v1/execute", **body)
    assert r.status_code == 400, r.text
    err = r.json()
    assert err["errors"][0]["loc"] == "reading" and valid in err["detail"]


def test_directml_readings_unchanged(client):
    for reading, want in (("current-doc", [5, 5]), ("2022-doc", [2, 2])):
        r = _post(client, "/v1/execute", spec=DML_CROSSED, semantics="directml", reading=reading,
                  input={"dtype": "int8", "shape": [2], "data": [0, 9]})
        assert r.json()["output"]["data"] == want and r.json()["reading"].startswith(reading)


def test_compare_reading(client):
    body = {"spec": I64, "input": {"dtype": "int64", "shape": [2], "data": [-1, 5]},
            "semantics": ["webnn", "onnx"], "reading": "chromium"}
    r = _post(client, "/v1/compare", **body)
    assert r.status_code == 200, r.text
    outs = {o["semantics"]: o for o in r.json()["outputs"]}
    assert outs["webnn"]["output"]["data"] == [3, 5] and outs["webnn"]["reading"] == "chromium"
    assert outs["onnx"]["reading"] is None and outs["onnx"]["output"] is not None
    r = _post(client, "/v1/compare", **{**body, "semantics": ["onnx", "openvino"]})
    assert r.status_code == 400 and r.json()["errors"][0]["loc"] == "reading"


def test_unknown_reading_name_is_a_schema_error(client):
    r = _post(client, "/v1/execute", spec=I64, reading="firefox",
              input={"dtype": "int64", "shape": [1], "data": [0]})
    assert r.status_code == 422 and "reading" in r.text


def test_default_bound_row_onnx_lowest_vs_no_clamp():
    """Row 'default bounds': f32, no min. ONNX's spec text defaults min to lowest() (-inf -> -3.4028235e38);
    WebNN leaves -Infinity alone. Literal mode leaves the option out: drift with that witness."""
    tr = _tr(OnnxSpec(dialect="onnx", opset=13, elem_type="FLOAT", max=6), mode=Mode.LITERAL)
    assert "minValue" not in tr.target
    hits = [f for f in tr.findings if f.code is Code.DEFAULT_BOUND and f.witness is not None]
    assert hits and hits[0].witness.input == -math.inf
    assert (hits[0].witness.source_output, hits[0].witness.target_output) == (-3.4028234663852886e38, -math.inf)


def test_scale_bias_row_has_no_webnn_equivalent():
    from clipbridge.dialects.directml.spec import DirectMLSpec
    src = DirectMLSpec.model_validate({"dialect": "directml", "feature_level": "5_0", "desc": {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 1, 4]},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 1, 4]}, "Min": 0, "Max": 6,
        "ScaleBias": {"Scale": 2, "Bias": 1}}})
    tr = _tr(src)
    assert tr.status == "unsupported" and tr.findings[0].code is Code.SCALE_BIAS


def test_webnn_to_webnn_compares_reading_with_reading():
    """Both sides under the same reading: a WebNN source into WebNN is exact under spec and under chromium."""
    tr = _tr(spec("int64", 3.9, None, [2]), mode=Mode.LITERAL)
    assert tr.status == "exact", [f.to_json() for f in tr.findings]


def test_execute_chromium_where_the_spec_throws(client):
    body = {"spec": {"dialect": "webnn", "dataType": "int8", "minValue": 1.6, "maxValue": 1.4},
            "input": {"dtype": "int8", "shape": [2], "data": [0, 5]}}
    assert _post(client, "/v1/execute", **body).status_code == 422  # the spec reading: TypeError
    r = _post(client, "/v1/execute", **body, reading="chromium")
    assert r.status_code == 200 and r.json()["output"]["data"] == [1, 1]


def test_execute_npy_reading_header(client):
    import io
    import urllib.parse
    buf = io.BytesIO()
    np.save(buf, np.asarray([-1, 5], dtype=np.int64), allow_pickle=False)
    for reading, want in (("chromium", [3, 5]), (None, [4, 5])):
        opts = {"spec": I64} | ({"reading": reading} if reading else {})
        r = client.post("/v1/execute.npy?request=" + urllib.parse.quote(json.dumps(opts)), content=buf.getvalue(),
                        headers={"content-type": "application/x-npy"})
        assert r.status_code == 200, r.text
        assert np.load(io.BytesIO(r.content)).tolist() == want
        assert r.headers["X-Clipbridge-Reading"] == (reading or "spec")
    opts = {"spec": I64, "reading": "2022-doc"}
    r = client.post("/v1/execute.npy?request=" + urllib.parse.quote(json.dumps(opts)), content=buf.getvalue(),
                    headers={"content-type": "application/x-npy"})
    assert r.status_code == 400 and r.json()["errors"][0]["loc"] == "request.reading"
