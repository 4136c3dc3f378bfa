"""ONNX Clip-1/-6/-11/-12/-13: resolve() per version, emit() in both modes, model artifacts, model-form parsing."""

from __future__ import annotations

import base64
import math

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from clipbridge.dialects.onnx import DIALECT, dtypes as onnx_dtypes
from clipbridge.dialects.onnx.dtypes import BY_ONNX_NAME, onnx_name
from clipbridge.dialects.onnx.emit import emit
from clipbridge.dialects.onnx.meaning import normalize, resolve
from clipbridge.dialects.onnx.model import ir_version_for, parse_model
from clipbridge.dialects.onnx.versions import NEWEST_OPSET, schema_for_opset
from clipbridge.dialects.kit.common import Mode
from clipbridge.core.dtypes import ALL, BFLOAT16, FLOAT16, FLOAT32, FLOAT64, INT8, INT64, UINT8, UINT64
from clipbridge.core.errors import ArtifactError, ClipBridgeError, SpecError
from clipbridge.core.findings import Code, Severity
from clipbridge.core.evaluate import evaluate
from clipbridge.core.meaning import Bound, Meaning, NanBound, NanInput, Order, ScaleBias, State, same_outputs
from clipbridge.core.numbers import parse_number
from clipbridge.dialects.onnx.spec import OnnxSpec, OnnxTarget
from clipbridge.lint.rules import RULES
from clipbridge.service.translate import translate

FLT_MAX = float(np.finfo(np.float32).max)
DBL_MAX = float(np.finfo(np.float64).max)
BF16_MAX = float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)


def spec(opset: int, elem_type: str, mn=None, mx=None, shape=None) -> OnnxSpec:
    return OnnxSpec(dialect="onnx", opset=opset, elem_type=elem_type, min=mn, max=mx, shape=shape)


def wire(e, key):
    """A bound of an emitted (JSON) spec as an exact number; None when absent."""
    v = e.spec.get(key)
    return None if v is None else parse_number(v)


def same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b and type(a) is type(b)


# --- resolve: dtype limits per version ------------------------------------------------------------------------

@pytest.mark.parametrize("opset, elem_type, schema", [
    pytest.param(1, "FLOAT", "Clip-1", id="clip1-float"),
    pytest.param(5, "DOUBLE", "Clip-1", id="opset5-is-clip1"),
    pytest.param(6, "FLOAT16", "Clip-6", id="clip6-float16"),
    pytest.param(10, "DOUBLE", "Clip-6", id="opset10-is-clip6"),
    pytest.param(11, "FLOAT", "Clip-11", id="clip11-float"),
    pytest.param(12, "INT8", "Clip-12", id="clip12-int8"),
    pytest.param(12, "UINT64", "Clip-12", id="clip12-uint64"),
    pytest.param(12, "UINT16", "Clip-12", id="clip12-uint16"),
    pytest.param(13, "BFLOAT16", "Clip-13", id="clip13-bfloat16"),
    pytest.param(13, "INT16", "Clip-13", id="clip13-int16"),
    pytest.param(21, "INT32", "Clip-13", id="opset21-is-clip13"),
    pytest.param(13, "float16", "Clip-13", id="lower-case-elem-type"),
    pytest.param(13, "TensorProto.FLOAT", "Clip-13", id="tensorproto-prefix"),
])
def test_resolve_accepts(opset, elem_type, schema):
    m = resolve(spec(opset, elem_type))
    assert m.version == schema
    assert m.state is State.DEFINED
    assert m.dtype is BY_ONNX_NAME[elem_type.upper().replace("TENSORPROTO.", "")]


@pytest.mark.parametrize("opset, elem_type, fragment", [
    pytest.param(1, "INT8", "Clip-1 does not take INT8; Clip-12 (opset 12)", id="clip1-int8"),
    pytest.param(6, "INT32", "Clip-6 does not take INT32; Clip-12", id="clip6-int32"),
    pytest.param(11, "INT8", "Clip-11 does not take INT8; Clip-12 (opset 12) and later take it", id="clip11-int8"),
    pytest.param(11, "UINT16", "Clip-11 does not take UINT16", id="clip11-uint16"),
    pytest.param(11, "BFLOAT16", "Clip-11 does not take BFLOAT16; Clip-13", id="clip11-bfloat16"),
    pytest.param(12, "BFLOAT16", "Clip-12 does not take BFLOAT16; Clip-13 (opset 13) and later take it",
                 id="clip12-bfloat16"),
    pytest.param(13, "STRING", "Unknown elem_type", id="string"),
    pytest.param(13, "BOOL", "Unknown elem_type", id="bool"),
    pytest.param(13, "FLOAT8E4M3FN", "Unknown elem_type", id="float8"),
])
def test_resolve_rejects_dtype(opset, elem_type, fragment):
    with pytest.raises(SpecError) as exc:
        resolve(spec(opset, elem_type))
    assert fragment in exc.value.message
    assert exc.value.loc == "elem_type"


# --- resolve: defaults ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("opset, elem_type, lo, hi, overflow", [
    pytest.param(6, "FLOAT16", -math.inf, math.inf, True, id="clip6-float16-flt-max-overflows-to-inf"),
    pytest.param(6, "FLOAT", -FLT_MAX, FLT_MAX, False, id="clip6-float"),
    pytest.param(6, "DOUBLE", -FLT_MAX, FLT_MAX, False, id="clip6-double-is-flt-max-not-dbl-max"),
    pytest.param(1, "DOUBLE", -DBL_MAX, DBL_MAX, False, id="clip1-summary-lowest-max"),
    pytest.param(11, "FLOAT16", -65504.0, 65504.0, False, id="clip11-float16-lowest-max"),
    pytest.param(11, "DOUBLE", -DBL_MAX, DBL_MAX, False, id="clip11-double"),
    pytest.param(12, "INT8", -128, 127, False, id="clip12-int8"),
    pytest.param(12, "UINT8", 0, 255, False, id="clip12-uint8"),
    pytest.param(12, "INT64", -(2**63), 2**63 - 1, False, id="clip12-int64"),
    pytest.param(12, "UINT64", 0, 2**64 - 1, False, id="clip12-uint64"),
    pytest.param(13, "BFLOAT16", -BF16_MAX, BF16_MAX, False, id="clip13-bfloat16"),
])
def test_defaults(opset, elem_type, lo, hi, overflow):
    m = resolve(spec(opset, elem_type))
    assert same(m.lo, lo) and same(m.hi, hi)
    assert m.lower.default and m.upper.default
    assert m.lower.given is None and m.upper.given is None
    assert m.lower.overflow is overflow and m.upper.overflow is overflow


def test_clip6_float16_default_lets_infinities_through():
    m = resolve(spec(6, "FLOAT16"))
    x = FLOAT16.array([-math.inf, -65504.0, 0.0, 65504.0, math.inf])
    assert np.array_equal(evaluate(m, x), x)
    m13 = resolve(spec(13, "FLOAT16"))
    assert evaluate(m13, x).tolist() == [-65504.0, -65504.0, 0.0, 65504.0, 65504.0]


def test_one_bound_given_other_defaults():
    m = resolve(spec(13, "INT8", mn=-3))
    assert (m.lo, m.hi) == (-3, 127)
    assert not m.lower.default and m.upper.default


@pytest.mark.parametrize("s, noted", [
    pytest.param(spec(13, "FLOAT"), True, id="clip13-float-default"),
    pytest.param(spec(11, "DOUBLE", 0), True, id="clip11-double-max-default"),
    pytest.param(spec(13, "FLOAT", 0, 1), False, id="both-given"),
    pytest.param(spec(13, "INT8"), False, id="integer-default"),
    pytest.param(spec(6, "FLOAT"), False, id="clip6-attribute-default"),
])
def test_default_engine_note_only_for_clip11_plus_float_defaults(s, noted):
    assert any(n.engine == "onnx.reference" for n in resolve(s).engine_notes) is noted


# --- resolve: attribute and typed bounds -----------------------------------------------------------------------

@pytest.mark.parametrize("opset, elem_type, mn, mx, lo, hi, flags", [
    pytest.param(6, "DOUBLE", 0.1, 1e300, float(np.float32(0.1)), math.inf, {"precision_loss": True},
                 id="clip6-double-attr-is-float32"),
    pytest.param(6, "FLOAT16", -1e5, 0.1, -math.inf, 0.0999755859375, {"overflow": True},
                 id="clip6-float16-attr-overflow"),
    pytest.param(6, "FLOAT16", 0, 65519.999999, 0.0, math.inf, {}, id="clip6-float16-double-rounding-via-float32"),
    pytest.param(1, "FLOAT", 16777217, 2.5, 16777216.0, 2.5, {"precision_loss": True}, id="clip1-int-attr"),
    pytest.param(11, "FLOAT16", 0.1, 65519.999999, 0.0999755859375, 65504.0, {"precision_loss": True},
                 id="clip11-float16-typed-rounds-once"),
    pytest.param(11, "FLOAT16", -70000, 70000, -math.inf, math.inf, {"overflow": True}, id="clip11-float16-overflow"),
    pytest.param(11, "DOUBLE", 0.1, 2**53 + 1, 0.1, float(2**53), {}, id="clip11-double-exact-0.1"),
    pytest.param(12, "INT8", -128, 127.0, -128, 127, {}, id="clip12-int8-integral-float-ok"),
    pytest.param(12, "UINT64", 0, 2**64 - 1, 0, 2**64 - 1, {}, id="clip12-uint64-max-exact"),
    pytest.param(12, "INT64", -(2**63), 2**53 + 1, -(2**63), 2**53 + 1, {}, id="clip12-int64-exact-beyond-2^53"),
    pytest.param(13, "BFLOAT16", 0.1, 1.0, 0.10009765625, 1.0, {}, id="clip13-bfloat16-nearest"),
    pytest.param(13, "FLOAT", "-inf", "inf", -math.inf, math.inf, {}, id="clip13-float-infinite"),
])
def test_bounds(opset, elem_type, mn, mx, lo, hi, flags):
    m = resolve(spec(opset, elem_type, mn, mx))
    assert same(m.lo, lo), m.lower
    assert same(m.hi, hi), m.upper
    for flag, value in flags.items():
        assert getattr(m.lower, flag) or getattr(m.upper, flag), (flag, m.lower, m.upper)


@pytest.mark.parametrize("opset, elem_type, mn, mx, loc, fragment", [
    pytest.param(12, "INT8", 1.5, None, "min", "1.5 is not a value of INT8", id="clip12-int8-fraction"),
    pytest.param(12, "INT8", None, 300, "max", "300 is outside INT8 [-128, 127]", id="clip12-int8-out-of-range"),
    pytest.param(12, "INT8", -129, None, "min", "outside INT8", id="clip12-int8-below"),
    pytest.param(12, "UINT8", -1, None, "min", "outside UINT8", id="clip12-uint8-negative"),
    pytest.param(13, "INT16", "nan", None, "min", "nan is not a value of INT16", id="clip13-int16-nan"),
    pytest.param(13, "INT32", None, "inf", "max", "inf is not a value of INT32", id="clip13-int32-inf"),
    pytest.param(13, "UINT64", None, 2**64, "max", "outside UINT64", id="clip13-uint64-2^64"),
    pytest.param(13, "INT64", "9" * 40, None, "min", "outside INT64", id="clip13-int64-huge"),
])
def test_typed_bound_errors(opset, elem_type, mn, mx, loc, fragment):
    with pytest.raises(SpecError) as exc:
        resolve(spec(opset, elem_type, mn, mx))
    assert fragment in exc.value.message
    assert exc.value.loc == loc


@pytest.mark.parametrize("opset, elem_type, value, expected", [
    pytest.param(13, "FLOAT", "9" * 400, math.inf, id="clip13-float"),
    pytest.param(13, "DOUBLE", "9" * 400, math.inf, id="clip13-double"),
    pytest.param(6, "FLOAT", "9" * 400, math.inf, id="clip6-float-attr"),
    pytest.param(13, "DOUBLE", 10**308, 1e308, id="clip13-double-10^308-is-finite"),
])
def test_huge_integer_bound_on_float_tensor(opset, elem_type, value, expected):
    """A 400-digit integer is a valid wire number; as a float bound it rounds (to inf beyond the range)."""
    m = resolve(spec(opset, elem_type, None, value))
    assert m.hi == expected


# --- resolve: order, NaN ------------------------------------------------------------------------------------

@pytest.mark.parametrize("opset, elem_type, mn, mx", [
    pytest.param(13, "INT8", 5, 1, id="clip13-int8"),
    pytest.param(13, "FLOAT", 2.5, -1.0, id="clip13-float"),
    pytest.param(12, "UINT16", 1000, 10, id="clip12-read-as-clip13"),
    pytest.param(11, "FLOAT16", 1.0, 0.5, id="clip11-read-as-clip13"),
    pytest.param(6, "FLOAT", 3.0, 2.0, id="clip6-read-as-clip13"),
])
def test_min_greater_than_max_gives_max(opset, elem_type, mn, mx):
    m = resolve(spec(opset, elem_type, mn, mx))
    assert m.crossed and m.order is Order.MAX_WINS and m.state is State.DEFINED
    x = m.dtype.all_values() if m.dtype.bits <= 16 else m.dtype.array([-1e30, -1, 0, 1, 1e30])
    y = evaluate(m, x).astype(np.float64)
    if m.dtype.is_float:
        y = y[~np.isnan(x.astype(np.float64))]
    assert np.all(y == float(mx))


def test_nan_input_propagates_and_nan_bound_gives_all_nan():
    m = resolve(spec(13, "FLOAT", "nan", 6))
    assert m.nan_input is NanInput.PROPAGATE and m.nan_bound is NanBound.PROPAGATE
    assert np.isnan(evaluate(m, FLOAT32.array([-1.0, 0.0, 7.0]))).all()
    assert any(n.engine == "onnxruntime" for n in m.engine_notes)
    ok = resolve(spec(13, "FLOAT", 0, 6))
    assert np.isnan(evaluate(ok, FLOAT32.array([math.nan]))).all()


def test_rules_cite_the_schema():
    m = resolve(spec(13, "INT8", 0, 1))
    assert m.rules[0].startswith("Clip-13")
    assert "min > max gives max" in m.rules[1]


def test_normalize_uppercases_elem_type():
    assert normalize(spec(13, "float16", 0, 1))["elem_type"] == "FLOAT16"


def test_opset_zero_is_rejected():
    with pytest.raises(SpecError):
        schema_for_opset(0)


# --- emit ----------------------------------------------------------------------------------------------------

def bound(v, given=None, **kw) -> Bound:
    return Bound(v, v if given is None else given, **kw)


def meaning(dt, lo, hi, order=Order.MAX_WINS, lo_given=None, hi_given=None, **kw) -> Meaning:
    return Meaning("test", "test", dt, bound(lo, lo_given), bound(hi, hi_given), order=order, **kw)


def codes(findings):
    return [(f.code, f.severity) for f in findings]


@pytest.mark.parametrize("src, opset, mode, exp_min, exp_max, exp_codes", [
    pytest.param(meaning(INT8, 2, 6, lo_given=1.5, hi_given=6.7), 13, Mode.PRESERVE, 2, 6, [],
                 id="preserve-writes-effective-int8"),
    pytest.param(meaning(INT8, 2, 6, lo_given=1.5, hi_given=6.7), 13, Mode.LITERAL, 1, 6,
                 [(Code.BOUND_ROUNDING, Severity.WARNING)] * 2, id="literal-truncates-fractions"),
    pytest.param(meaning(INT8, -128, 127, lo_given=-1000, hi_given=1000), 12, Mode.LITERAL, -128, 127,
                 [(Code.BOUND_SATURATION, Severity.WARNING)] * 2, id="literal-saturates"),
    pytest.param(meaning(INT8, -128, 127, lo_given=-math.inf, hi_given=math.inf), 13, Mode.LITERAL, -128, 127,
                 [(Code.INFINITE_BOUND, Severity.WARNING)] * 2, id="literal-infinite-on-int"),
    pytest.param(meaning(FLOAT64, 0.1, 1.0), 6, Mode.PRESERVE, float(np.float32(0.1)), 1.0,
                 [(Code.BOUND_PRECISION, Severity.ERROR)], id="preserve-double-into-float-attribute"),
    pytest.param(meaning(FLOAT64, 0.1, 1.0), 13, Mode.PRESERVE, 0.1, 1.0, [], id="preserve-double-typed"),
    pytest.param(meaning(FLOAT16, -65504.0, 65504.0), 6, Mode.PRESERVE, -65504.0, 65504.0, [],
                 id="preserve-float16-into-clip6"),
    pytest.param(meaning(FLOAT32, 5.0, 1.0, order=Order.MIN_WINS), 13, Mode.PRESERVE, 5.0, 5.0,
                 [(Code.MIN_GREATER_THAN_MAX, Severity.INFO)], id="preserve-min-wins-becomes-min-equals-max"),
    pytest.param(meaning(FLOAT32, 5.0, 1.0), 13, Mode.PRESERVE, 1.0, 1.0, [(Code.MIN_GREATER_THAN_MAX, Severity.INFO)],
                 id="preserve-max-wins-becomes-min-equals-max"),
    pytest.param(meaning(FLOAT32, 5.0, 1.0), 13, Mode.LITERAL, 5.0, 1.0, [], id="literal-crossed-kept"),
])
def test_emit(src, opset, mode, exp_min, exp_max, exp_codes):
    e = emit(src, OnnxTarget(dialect="onnx", opset=opset), mode, None)
    assert not e.unsupported
    assert same(wire(e, "min"), exp_min) and same(wire(e, "max"), exp_max), e.spec
    assert codes(e.notes) == exp_codes
    assert e.meaning.version == schema_for_opset(opset).name


def test_emit_literal_leaves_defaults_absent():
    src = resolve(spec(6, "FLOAT16"))
    e = emit(src, OnnxTarget(dialect="onnx", opset=13), Mode.LITERAL, None)
    assert "min" not in e.spec and "max" not in e.spec
    assert (e.meaning.lo, e.meaning.hi) == (-65504.0, 65504.0)
    p = emit(src, OnnxTarget(dialect="onnx", opset=13), Mode.PRESERVE, None)
    assert (p.meaning.lo, p.meaning.hi) == (-math.inf, math.inf)


@pytest.mark.parametrize("dt, opset, fragment", [
    pytest.param(INT8, 11, "Clip-11 (opset 11) does not take INT8; use opset 12 or later", id="int8-opset11"),
    pytest.param(BFLOAT16, 12, "use opset 13", id="bfloat16-opset12"),
    pytest.param(UINT64, 6, "Clip-6 (opset 6) does not take UINT64", id="uint64-opset6"),
])
def test_emit_unsupported_dtype(dt, opset, fragment):
    e = emit(meaning(dt, 0, 1), OnnxTarget(dialect="onnx", opset=opset), Mode.PRESERVE, None)
    assert e.unsupported and e.meaning is None and e.spec is None
    assert e.notes[0].code is Code.DTYPE_UNSUPPORTED and fragment in e.notes[0].message


@pytest.mark.parametrize("opset", [pytest.param(o, id=f"opset{o}") for o in (2, 3, 4)])
def test_emit_to_legacy_opsets_builds_a_valid_model(opset):
    """'opset: any integer >= 1; resolved to the Clip schema in force': opsets 2-4 are Clip-1."""
    e = emit(meaning(FLOAT32, 0.0, 6.0), OnnxTarget(dialect="onnx", opset=opset), Mode.PRESERVE, [4])
    assert e.meaning.version == "Clip-1"
    onnx.checker.check_model(model_of(e), full_check=True)


@pytest.mark.parametrize("opset", [pytest.param(o, id=f"opset{o}") for o in (29, 1000)])
def test_emit_to_a_future_opset_fails_only_with_a_domain_error(opset):
    try:
        e = emit(meaning(FLOAT32, 0.0, 6.0), OnnxTarget(dialect="onnx", opset=opset), Mode.PRESERVE, [4])
    except ClipBridgeError:
        return
    if e.unsupported:  # an opset the installed onnx cannot check: a status with its reason, not a crash
        assert e.notes and "opset" in e.notes[0].message and "onnx_model" not in e.artifacts
        return
    onnx.checker.check_model(model_of(e), full_check=True)


def test_emit_default_opset_is_newest():
    e = emit(meaning(INT8, 0, 1), OnnxTarget(dialect="onnx"), Mode.PRESERVE, None)
    assert e.spec["opset"] == NEWEST_OPSET == 13


# --- artifacts ------------------------------------------------------------------------------------------------

def model_of(e) -> onnx.ModelProto:
    return onnx.load_from_string(base64.b64decode(e.artifacts["onnx_model"]))


ARTIFACT_CASES = [
    pytest.param(dt, opset, id=f"{onnx_name(dt)}-opset{opset}")
    for opset in (1, 5, 6, 7, 8, 9, 10, 11, 12, 13)
    for dt in (FLOAT32, FLOAT16, FLOAT64, INT8, UINT8, INT64, UINT64, BFLOAT16)
    if dt in schema_for_opset(opset).dtypes
]


@pytest.mark.parametrize("dt, opset", ARTIFACT_CASES)
def test_model_artifact_passes_full_check(dt, opset):
    lo, hi = (dt.lowest(), dt.highest()) if not dt.is_float else (-1.5, 6.0)
    e = emit(meaning(dt, lo, hi), OnnxTarget(dialect="onnx", opset=opset), Mode.PRESERVE, [2, "N", None])
    m = model_of(e)
    onnx.checker.check_model(m, full_check=True)
    assert m.ir_version == ir_version_for(opset)
    assert [(i.domain, i.version) for i in m.opset_import] == [("", opset)]
    # and the model reads back as the spec it was built from
    back = parse_model(e.artifacts["onnx_model"], None).spec
    assert (back.opset, back.elem_type) == (opset, onnx_name(dt))
    assert same(back.min, wire(e, "min")) and same(back.max, wire(e, "max"))
    assert back.shape == [2, "N", None]


SB = ScaleBias(2.0, 1.0, FLOAT32, False)


@pytest.mark.parametrize("opset", [pytest.param(o, id=f"opset{o}") for o in (7, 8, 9, 10, 11, 12, 13)])
def test_scale_bias_model_passes_full_check_and_computes_it(opset):
    """The emitted meaning says x*Scale+Bias then clip: the model contains that arithmetic and passes the checker."""
    src = meaning(FLOAT32, 0.0, 6.0, scale_bias=SB)
    e = emit(src, OnnxTarget(dialect="onnx", opset=opset), Mode.PRESERVE, [4])
    assert not e.unsupported and e.meaning.scale_bias is not None
    assert [(f.code, f.severity) for f in e.notes] == [(Code.SCALE_BIAS, Severity.INFO)]
    m = model_of(e)
    # scale and bias are Constant nodes (IR 3 at opsets 7-8 forbids initializers that are not graph inputs)
    assert [n.op_type for n in m.graph.node if n.op_type != "Constant"] == ["Cast", "Mul", "Add", "Cast", "Clip"]
    assert not m.graph.initializer or all(i.name in ("min", "max") for i in m.graph.initializer)
    onnx.checker.check_model(m, full_check=True)


@pytest.mark.parametrize("src, opset", [
    pytest.param(meaning(FLOAT32, 0.0, 6.0, scale_bias=SB), 1, id="float-opset1"),
    pytest.param(meaning(FLOAT32, 0.0, 6.0, scale_bias=SB), 6, id="float-opset6-no-broadcasting-mul"),
    pytest.param(meaning(INT8, 0, 6, scale_bias=SB, state=State.AMBIGUOUS), 13, id="int8-opset13"),
])
def test_scale_bias_that_cannot_be_expressed_is_unsupported(src, opset):
    e = emit(src, OnnxTarget(dialect="onnx", opset=opset), Mode.PRESERVE, [4])
    assert e.unsupported and e.meaning is None and "onnx_model" not in e.artifacts
    assert e.notes[-1].code is Code.SCALE_BIAS and e.notes[-1].severity is Severity.ERROR


@pytest.mark.parametrize("src, opset", [
    pytest.param(meaning(FLOAT32, -1.5, 6.0), 6, id="clip6-float"),
    pytest.param(meaning(FLOAT16, 0.0999755859375, 65504.0), 11, id="clip11-float16"),
    pytest.param(meaning(INT8, -3, 100), 12, id="clip12-int8"),
    pytest.param(meaning(UINT8, 7, 200), 13, id="clip13-uint8"),
    pytest.param(meaning(INT64, -(2**63), 2**53 + 1), 13, id="clip13-int64-exact"),
    pytest.param(meaning(FLOAT32, 5.0, 1.0), 13, id="clip13-crossed"),
    pytest.param(meaning(FLOAT32, -1.0, 6.0, scale_bias=SB), 13, id="clip13-scale-bias"),
])
def test_reference_evaluator_runs_the_model_as_the_meaning_says(src, opset):
    from onnx.reference import ReferenceEvaluator
    e = emit(src, OnnxTarget(dialect="onnx", opset=opset), Mode.PRESERVE, [8])
    dt = src.dtype
    if dt.is_float:
        x = dt.array([-1e4, -2.0, -1.0, -0.0, 0.5, 3.0, 7.0, 1e4])
    else:
        x = dt.array([dt.lowest(), -3 if dt.lowest() < 0 else 0, 0, 1, 7, 100, 2**53 if dt.bits == 64 else 101,
                      dt.highest()])
    got = ReferenceEvaluator(model_of(e)).run(None, {"input": x})[0]
    assert same_outputs(got, evaluate(e.meaning, x)).all(), (got, evaluate(e.meaning, x))


# --- the model form ------------------------------------------------------------------------------------------

def b64(model: onnx.ModelProto) -> str:
    return base64.b64encode(model.SerializeToString()).decode()


def make(nodes, inputs, inits=(), opset=13, elem=TensorProto.FLOAT, extra_inputs=(), outputs=None,
         value_info=()) -> str:
    x = [helper.make_tensor_value_info(n, elem, [2, 3]) for n in inputs] + list(extra_inputs)
    y = outputs or [helper.make_tensor_value_info(nodes[-1].output[0], elem, [2, 3])]
    g = helper.make_graph(nodes, "g", x, y, list(inits), value_info=list(value_info))
    return b64(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                                 ir_version=ir_version_for(opset)))


def scalar(name, value, np_dtype=np.float32):
    return numpy_helper.from_array(np.array(value, dtype=np_dtype), name)


def test_parse_model_initializer_bounds():
    m = make([helper.make_node("Clip", ["x", "lo", "hi"], ["y"], name="c")], ["x"],
             [scalar("lo", 0.0), scalar("hi", 6.0)])
    p = parse_model(m, None)
    assert (p.spec.opset, p.spec.elem_type, p.spec.min, p.spec.max) == (13, "FLOAT", 0.0, 6.0)
    assert p.spec.shape == [2, 3] and p.dynamic == () and p.node_name == "c"
    r = resolve(p)
    assert (r.lo, r.hi, r.dynamic) == (0.0, 6.0, False)


def test_parse_model_int8_initializers_are_read_typed():
    m = make([helper.make_node("Clip", ["x", "lo", "hi"], ["y"])], ["x"],
             [scalar("lo", -128, np.int8), scalar("hi", 5, np.int8)], elem=TensorProto.INT8)
    p = parse_model(m, None)
    assert (p.spec.elem_type, p.spec.min, p.spec.max) == ("INT8", -128, 5)
    assert type(p.spec.min) is int
    assert p.node_name == "#0"


def test_parse_model_constant_node_bounds():
    nodes = [helper.make_node("Constant", [], ["lo"], value=numpy_helper.from_array(np.array(-1.5, np.float32))),
             helper.make_node("Constant", [], ["hi"], value_float=2.5),
             helper.make_node("Clip", ["x", "lo", "hi"], ["y"])]
    p = parse_model(make(nodes, ["x"]), None)
    assert (p.spec.min, p.spec.max, p.dynamic) == (-1.5, 2.5, ())


def test_parse_model_max_only():
    m = make([helper.make_node("Clip", ["x", "", "hi"], ["y"])], ["x"], [scalar("hi", 6.0)])
    p = parse_model(m, None)
    assert (p.spec.min, p.spec.max) == (None, 6.0)
    assert resolve(p).lo == -FLT_MAX


def test_parse_model_graph_input_bound_is_dynamic():
    lo = helper.make_tensor_value_info("lo", TensorProto.FLOAT, [])
    m = make([helper.make_node("Clip", ["x", "lo", "hi"], ["y"])], ["x"], [scalar("hi", 6.0)], extra_inputs=[lo])
    p = parse_model(m, None)
    assert p.dynamic == ("min",)
    assert resolve(p).dynamic
    r = translate(OnnxSpec(dialect="onnx", model=m), ["openvino"])
    t = r.translations[0]
    assert t.status == "unsupported" and t.findings[0].code is Code.DYNAMIC_BOUNDS


def test_parse_model_computed_bound_is_dynamic():
    nodes = [helper.make_node("Neg", ["a"], ["lo"]), helper.make_node("Clip", ["x", "lo"], ["y"])]
    m = make(nodes, ["x"], [scalar("a", 1.0)])
    assert parse_model(m, None).dynamic == ("min",)


def test_parse_model_initializer_that_is_also_a_graph_input_is_dynamic():
    """An initializer named like a graph input is only a default: the caller may feed another value (IR >= 4)."""
    lo = helper.make_tensor_value_info("lo", TensorProto.FLOAT, [])
    m = make([helper.make_node("Clip", ["x", "lo"], ["y"])], ["x"], [scalar("lo", 0.0)], extra_inputs=[lo])
    assert parse_model(m, None).dynamic == ("min",)


def test_parse_model_external_data_is_never_followed():
    t = scalar("lo", 0.0)
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    t.external_data.add(key="location", value="/etc/passwd")
    m = make([helper.make_node("Clip", ["x", "lo"], ["y"])], ["x"], [t])
    with pytest.raises(ArtifactError, match="external file"):  # refused (4xx), never opened
        parse_model(m, None)


def test_parse_model_clip6_attributes():
    m = make([helper.make_node("Clip", ["x"], ["y"], min=-1.0, max=0.5)], ["x"], opset=6)
    p = parse_model(m, None)
    assert (p.spec.opset, p.spec.min, p.spec.max) == (6, -1.0, 0.5)
    assert resolve(p).version == "Clip-6"


def test_parse_model_infers_the_type_of_an_intermediate():
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Clip", ["r", "lo", "hi"], ["y"])]
    m = make(nodes, ["x"], [scalar("lo", 0, np.float16), scalar("hi", 6, np.float16)], elem=TensorProto.FLOAT16)
    p = parse_model(m, None)
    assert (p.spec.elem_type, p.spec.min, p.spec.max) == ("FLOAT16", 0.0, 6.0)


def _two_clips() -> str:
    nodes = [helper.make_node("Clip", ["x", "lo"], ["a"], name="first"),
             helper.make_node("Relu", ["a"], ["b"], name="relu"),
             helper.make_node("Clip", ["b", "", "hi"], ["y"], name="second")]
    return make(nodes, ["x"], [scalar("lo", 1.0), scalar("hi", 2.0)])


@pytest.mark.parametrize("node, exp_min, exp_max, name", [
    pytest.param("first", 1.0, None, "first", id="by-name-first"),
    pytest.param("second", None, 2.0, "second", id="by-name-second"),
    pytest.param(0, 1.0, None, "first", id="by-index-0"),
    pytest.param(2, None, 2.0, "second", id="by-graph-index-2"),
])
def test_parse_model_picks_the_named_node(node, exp_min, exp_max, name):
    p = parse_model(_two_clips(), node)
    assert (p.spec.min, p.spec.max, p.node_name) == (exp_min, exp_max, name)


@pytest.mark.parametrize("node, fragment", [
    pytest.param(None, "the model has 2 Clip nodes; name one with 'node'", id="several-clips-need-node"),
    pytest.param("nope", "no Clip node named 'nope'", id="unknown-name"),
    pytest.param(1, "node index 1 is not a Clip node", id="index-of-relu"),
    pytest.param(7, "node index 7 is not a Clip node", id="index-out-of-range"),
])
def test_parse_model_node_errors(node, fragment):
    with pytest.raises(SpecError) as exc:
        parse_model(_two_clips(), node)
    assert fragment in exc.value.message and exc.value.loc == "node"


@pytest.mark.parametrize("payload, fragment", [
    pytest.param(make([helper.make_node("Relu", ["x"], ["y"])], ["x"]), "no Clip node", id="no-clip"),
    pytest.param(base64.b64encode(b"\xff\xfe garbage \x00\x01 bytes").decode(), "protobuf decoding failed",
                 id="garbage-bytes"),
    pytest.param("not base64 !!!", "not valid base64", id="not-base64"),
    pytest.param(base64.b64encode(onnx.ModelProto(ir_version=7).SerializeToString()).decode(), "has no graph",
                 id="no-graph"),
    pytest.param(b64(helper.make_model(helper.make_graph([helper.make_node("Clip", ["x"], ["y"])], "g",
                                                          [helper.make_tensor_value_info("x", 1, [1])],
                                                          [helper.make_tensor_value_info("y", 1, [1])]),
                                       opset_imports=[helper.make_opsetid("com.example", 1)])),
                 "no default-domain", id="no-default-opset"),
])
def test_parse_model_artifact_errors(payload, fragment):
    with pytest.raises(ArtifactError) as exc:
        parse_model(payload, None)
    assert fragment in exc.value.message
    assert exc.value.loc == "model"


def test_parse_model_string_tensor_has_no_clip_meaning():
    g = helper.make_graph([helper.make_node("Clip", ["x"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.STRING, [1])],
                          [helper.make_tensor_value_info("y", TensorProto.STRING, [1])])
    with pytest.raises(SpecError) as exc:
        parse_model(b64(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])), None)
    assert "no meaning for element type STRING" in exc.value.message and exc.value.loc == "model"


def test_model_form_through_translate():
    m = make([helper.make_node("Clip", ["x", "lo", "hi"], ["y"])], ["x"], [scalar("lo", 0.0), scalar("hi", 6.0)])
    r = translate(OnnxSpec(dialect="onnx", model=m), ["openvino"])
    assert r.source["elem_type"] == "FLOAT" and r.source["min"] == 0.0 and r.source["max"] == 6.0
    assert r.translations[0].status == "exact"



# --- ONNX's type names and elem_type codes (app/clipbridge/dialects/onnx/dtypes.py) ----------------------------------------

@pytest.mark.parametrize("dt", [pytest.param(d, id=d.name) for d in ALL])
def test_onnx_names_and_elem_types_round_trip(dt):
    """Every dtype has its TensorProto.DataType name, and the elem_type code of that name reads back as it."""
    assert onnx_dtypes.by_onnx_name(onnx_name(dt)) is dt and BY_ONNX_NAME[onnx_name(dt)] is dt
    assert TensorProto.DataType.Name(onnx_dtypes.elem_type(dt)) == onnx_name(dt)
    assert onnx_dtypes.from_elem_type(onnx_dtypes.elem_type(dt)) is dt
    assert helper.tensor_dtype_to_np_dtype(onnx_dtypes.elem_type(dt)) == dt.np_dtype


@pytest.mark.parametrize("code", [pytest.param(8, id="STRING"), pytest.param(9, id="BOOL"),
                                  pytest.param(14, id="COMPLEX64"), pytest.param(999, id="unknown-code")])
def test_from_elem_type_rejects_non_numeric(code):
    with pytest.raises(SpecError) as exc:
        onnx_dtypes.from_elem_type(code, "model")
    assert exc.value.loc == "model"


def test_onnx_names_keep_the_order_of_the_dtype_table():
    """Unknown elem_type errors list the names in this order."""
    assert list(BY_ONNX_NAME) == ["FLOAT", "FLOAT16", "BFLOAT16", "DOUBLE", "INT8", "INT16", "INT32", "INT64",
                                  "UINT8", "UINT16", "UINT32", "UINT64"]
    assert onnx_dtypes.by_onnx_name("STRING") is None


# --- the catalogue: examples and rule texts (app/clipbridge/dialects/onnx/catalogue.py) ------------------------------------

def test_examples_are_the_inspector_s_with_the_starting_spec_first():
    """The specs of app/clipbridge/static/examples.js (TEMPLATES.onnx first, as "start"); each resolves."""
    assert list(DIALECT.examples) == ["start", "relu6-f16", "min-gt-max", "int64-big", "clip6-defaults"]
    assert DIALECT.examples["start"] == {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "min": 0, "max": 6}
    for ex in DIALECT.examples.values():
        assert DIALECT.resolve(OnnxSpec.model_validate(ex)).meaning.state is State.DEFINED


def test_rule_texts_cover_every_code_and_the_unresolved_clip():
    """ONNX's catalogue rows (once the `builtin` table of app/clipbridge/lint/rules.py): one per finding code, plus the
    scan's unresolved-clip, each citing its source."""
    assert set(DIALECT.rule_texts) == {c.value for c in Code} | {"unresolved-clip"}
    assert all(rule and src for rule, src in DIALECT.rule_texts.values())
    assert RULES["unresolved-clip"].dialects["onnx"] == DIALECT.rule_texts["unresolved-clip"]
