"""clipbridge.core.exact: every conversion is one correctly rounded step from the exact value (issue 13).

The oracle here is independent of clipbridge.core.exact: it brackets the exact value between two neighbouring values of
the type (found by walking bit patterns from a NumPy guess, compared as Fractions) and picks the nearer, ties
to the even bit pattern, with IEEE's overflow midpoint. Budgets: CLIPBRIDGE_HYPOTHESIS_EXAMPLES (default 60).
"""

from __future__ import annotations

import math
import os
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clipbridge.core import exact
from clipbridge.core.dtypes import BFLOAT16, FLOAT16, FLOAT32, FLOAT64, INT64, DType
from clipbridge.core.numbers import parse_number, wire_number

EXAMPLES = int(os.environ.get("CLIPBRIDGE_HYPOTHESIS_EXAMPLES", "60"))
FLOAT_TYPES = (FLOAT16, BFLOAT16, FLOAT32, FLOAT64)


# --- the oracle ---------------------------------------------------------------------------------------------

def _bits(v: float, dt: DType) -> int:
    return int(np.asarray(v, dtype=np.float64).astype(dt.np_dtype).view(dt.uint_view))


def _from_bits(b: int, dt: DType) -> float:
    return float(np.asarray(b, dtype=dt.uint_view).view(dt.np_dtype))


def oracle(x: Fraction, dt: DType) -> float:
    """The value of `dt` nearest x (ties to the even pattern); at or past the overflow midpoint, inf."""
    if x == 0:
        return 0.0
    a = abs(x)
    info = ml_dtypes.finfo(dt.np_dtype) if dt is BFLOAT16 else np.finfo(dt.np_dtype)
    top_finite = Fraction(float(info.max))
    past = Fraction(2) ** (int(info.maxexp))  # the next power of two, where inf sits
    if a >= (top_finite + past) / 2:
        out = math.inf
    elif a >= top_finite:
        out = float(top_finite)
    else:
        try:
            guess = float(a)
        except OverflowError:
            guess = float(top_finite)
        b = _bits(min(guess, float(top_finite)), dt)  # a positive pattern near a; walk to the bracket
        while Fraction(_from_bits(b, dt)) > a:
            b -= 1
        while Fraction(_from_bits(b + 1, dt)) <= a:
            b += 1
        lo, hi = _from_bits(b, dt), _from_bits(b + 1, dt)
        dlo, dhi = a - Fraction(lo), Fraction(hi) - a
        out = lo if dlo < dhi or (dlo == dhi and b % 2 == 0) else hi
    return -out if x < 0 else out


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))


# --- strategies ---------------------------------------------------------------------------------------------

def _near_midpoints(dt: DType) -> st.SearchStrategy[Fraction]:
    """Values at, just below and just above the midpoint of two neighbours (normal, subnormal, top)."""
    info = ml_dtypes.finfo(dt.np_dtype) if dt is BFLOAT16 else np.finfo(dt.np_dtype)
    max_bits = _bits(float(info.max), dt)

    @st.composite
    def gen(draw: st.DrawFn) -> Fraction:
        b = draw(st.one_of(st.integers(0, 40), st.integers(max_bits - 40, max_bits), st.integers(0, max_bits)))
        lo = Fraction(_from_bits(b, dt))
        hi = Fraction(_from_bits(b + 1, dt)) if b < max_bits else Fraction(2) ** int(info.maxexp)
        mid = (lo + hi) / 2
        nudge = Fraction(draw(st.integers(-3, 3)), 2 ** draw(st.integers(60, 1200)))
        sign = draw(st.sampled_from((1, -1)))
        return sign * (mid + nudge * (hi - lo))
    return gen()


EXACT_VALUES = st.one_of(
    st.integers(-(2**130), 2**130).map(Fraction),
    st.integers(2**53, 2**70).map(Fraction),
    st.floats(allow_nan=False, allow_infinity=False).map(Fraction),
    st.fractions(max_denominator=10**30),
    st.decimals(allow_nan=False, allow_infinity=False, places=None).map(Fraction),
)


# --- properties ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dt", FLOAT_TYPES, ids=lambda d: d.name)
@settings(derandomize=True, max_examples=EXAMPLES, deadline=None)
@given(x=EXACT_VALUES)
def test_round_matches_oracle_on_exact_values(dt, x):
    assert _same(exact.round_to_format(x, dt.format), oracle(x, dt)), x


@pytest.mark.parametrize("dt", FLOAT_TYPES, ids=lambda d: d.name)
@settings(derandomize=True, max_examples=EXAMPLES, deadline=None)
@given(data=st.data())
def test_round_matches_oracle_near_midpoints_and_overflow(dt, data):
    x = data.draw(_near_midpoints(dt))
    assert _same(dt.round(x), oracle(x, dt)), x
    try:
        d = float(x)  # the double nearest it: the fast path for doubles
    except OverflowError:  # past the double range (float64's own overflow midpoint)
        return
    want = oracle(Fraction(d), dt) if d != 0 else d  # a Fraction has no sign of zero
    assert _same(dt.round(d), want) or (math.isinf(d) and dt.round(d) == d), d


@pytest.mark.parametrize("dt", FLOAT_TYPES, ids=lambda d: d.name)
@settings(derandomize=True, max_examples=EXAMPLES, deadline=None)
@given(x=st.one_of(st.integers(2**53, 2**200), st.integers(-(2**200), -(2**53))))
def test_integers_beyond_2_53_round_once(dt, x):
    assert _same(dt.round(x), oracle(Fraction(x), dt)), x


@pytest.mark.parametrize("dt", FLOAT_TYPES, ids=lambda d: d.name)
@settings(derandomize=True, max_examples=EXAMPLES, deadline=None)
@given(digits=st.text("0123456789", min_size=1, max_size=60), point=st.integers(0, 60), exp=st.integers(-330, 330),
       neg=st.booleans())
def test_decimal_strings_with_many_digits_round_once(dt, digits, point, exp, neg):
    point = min(point, len(digits))
    text = ("-" if neg else "") + digits[:point] + "." + digits[point:] + f"e{exp}"
    if text.lstrip("-").startswith("."):
        text = text.replace(".", "0.", 1)
    value = parse_number(text)
    want = Fraction(digits) / 10 ** (len(digits) - point) * Fraction(10) ** exp
    want = -want if neg else want
    assert value == want or (want == 0 and value == 0)
    assert _same(dt.round(value), oracle(want, dt)) or want == 0, text


@pytest.mark.parametrize("dt", FLOAT_TYPES, ids=lambda d: d.name)
@settings(derandomize=True, max_examples=EXAMPLES, deadline=None)
@given(xs=st.lists(st.floats(allow_nan=False, width=64), min_size=1, max_size=20))
def test_array_conversion_of_doubles_rounds_once(dt, xs):
    """The vectorized path (JSON tensors): float64 -> dt, bfloat16 included (round-to-odd through float32)."""
    got = exact.doubles_to(np.asarray(xs, dtype=np.float64), dt.np_dtype).astype(np.float64).tolist()
    want = [x if math.isinf(x) else oracle(Fraction(x), dt) for x in xs]
    assert all(_same(g, w) or (w == 0 and g == 0) for g, w in zip(got, want, strict=True)), (xs, got, want)


@pytest.mark.parametrize("dt", (FLOAT16, BFLOAT16, FLOAT32), ids=lambda d: d.name)
@settings(derandomize=True, max_examples=EXAMPLES, deadline=None)
@given(data=st.data())
def test_array_conversion_near_midpoints(dt, data):
    xs = [data.draw(_near_midpoints(dt)) for _ in range(8)]
    doubles = [float(x) for x in xs]  # the JSON doubles nearest those values
    got = exact.doubles_to(np.asarray(doubles), dt.np_dtype).astype(np.float64).tolist()
    want = [oracle(Fraction(d), dt) for d in doubles]
    assert all(_same(g, w) for g, w in zip(got, want, strict=True)), (doubles, got, want)


@settings(derandomize=True, max_examples=EXAMPLES, deadline=None)
@given(digits=st.text("0123456789", min_size=1, max_size=300), frac=st.integers(0, 300), exp=st.integers(-450, 450),
       hexa=st.booleans(), neg=st.booleans())
def test_wire_text_round_trips_exactly(digits, frac, exp, hexa, neg):
    """Whatever a wire string reads as is written back as a string (<= 400 chars) that reads back the same."""
    frac = min(frac, len(digits))
    body = digits[:len(digits) - frac] + "." + digits[len(digits) - frac:]
    text = ("-" if neg else "") + ("0x" + body + f"p{exp * 3}" if hexa else ("0" + body) + f"e{exp}")
    value = parse_number(text)
    wire = wire_number(value)
    if isinstance(value, Fraction):
        assert isinstance(wire, str) and len(wire) <= 400
    back = parse_number(wire)
    assert back == value or (math.isnan(value) and math.isnan(back))
    if isinstance(value, float):
        assert math.copysign(1, back) == math.copysign(1, value)


# --- table cases ----------------------------------------------------------------------------------------------

def _mid(a: float, b: float) -> Fraction:
    return (Fraction(a) + Fraction(b)) / 2


F16_MAX, BF16_MAX = 65504.0, float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)
F32_MAX, F64_MAX = float(np.finfo(np.float32).max), float(np.finfo(np.float64).max)


@pytest.mark.parametrize("dt, x, want", [
    pytest.param(FLOAT16, _mid(F16_MAX, 65536.0), math.inf, id="f16-overflow-midpoint-is-inf"),
    pytest.param(FLOAT16, _mid(F16_MAX, 65536.0) - Fraction(1, 2**40), F16_MAX, id="f16-just-below-midpoint-max"),
    pytest.param(BFLOAT16, _mid(BF16_MAX, 2.0**128), math.inf, id="bf16-overflow-midpoint-is-inf"),
    pytest.param(BFLOAT16, _mid(BF16_MAX, 2.0**128) - 1, BF16_MAX, id="bf16-just-below-midpoint-max"),
    pytest.param(FLOAT32, _mid(F32_MAX, 2.0**128), math.inf, id="f32-overflow-midpoint-is-inf"),
    pytest.param(FLOAT32, _mid(F32_MAX, 2.0**128) - 1, F32_MAX, id="f32-just-below-midpoint-max"),
    pytest.param(FLOAT64, (Fraction(F64_MAX) + Fraction(2) ** 1024) / 2, math.inf, id="f64-overflow-midpoint-is-inf"),
    pytest.param(FLOAT64, (Fraction(F64_MAX) + Fraction(2) ** 1024) / 2 - 1, F64_MAX, id="f64-below-midpoint-max"),
    pytest.param(FLOAT16, Fraction(1, 2**25), 0.0, id="f16-half-smallest-subnormal-ties-to-zero"),
    pytest.param(FLOAT16, Fraction(3, 2**25), 2.0**-23, id="f16-three-halves-subnormal-ties-to-even"),
    pytest.param(FLOAT16, Fraction(1, 2**25) + Fraction(1, 2**80), 2.0**-24, id="f16-above-half-subnormal-up"),
    pytest.param(BFLOAT16, Fraction(1, 2**134), 0.0, id="bf16-half-smallest-subnormal-ties-to-zero"),
    pytest.param(BFLOAT16, Fraction(3, 2**134), 2.0**-132, id="bf16-three-halves-subnormal-even"),
    pytest.param(FLOAT64, Fraction(1, 2**1075), 0.0, id="f64-half-smallest-subnormal-ties-to-zero"),
    pytest.param(FLOAT64, Fraction(1, 2**1075) + Fraction(1, 2**1200), 5e-324, id="f64-above-half-subnormal-up"),
    pytest.param(FLOAT32, Fraction(-1, 2**150), -0.0, id="f32-negative-underflow-keeps-sign"),
])
def test_round_table(dt, x, want):
    assert _same(dt.round(x), want)


# --- the four examples of issue 13, end to end ------------------------------------------------------------

def test_issue13_onnx_clip1_int_bound_rounds_once_to_float32():
    """-1152921573326323713 as a Clip-1 FLOAT attribute: the float32 nearest it, not the one of its double."""
    from clipbridge.dialects.onnx.meaning import resolve
    from clipbridge.dialects.onnx.model import build_model
    from clipbridge.dialects.onnx.spec import OnnxSpec
    m = resolve(OnnxSpec(dialect="onnx", opset=1, elem_type="FLOAT", min=-1152921573326323713, max=0))
    assert m.lo == -1.1529216420458004e18
    model = build_model(OnnxSpec(dialect="onnx", opset=1, elem_type="FLOAT", min=-1152921573326323713, max=0))
    assert next(a.f for a in model.graph.node[-1].attribute if a.name == "min") == np.float32(-1.1529216420458004e18)


def test_issue13_directml_float_min_of_an_int64_bound_rounds_once():
    """1152921573326323713 in DirectML CLIP's FLOAT Min on INT64: float32 nearest (2^60 + 2^37), not 2^60."""
    from clipbridge.dialects.directml import meaning as D
    from clipbridge.dialects.directml.cpp import cpp_snippet
    from clipbridge.dialects.directml.spec import DirectMLSpec
    t = {"DataType": "INT64", "Sizes": [1, 1, 1, 1]}
    spec = DirectMLSpec(dialect="directml", feature_level="5_0",
                        desc={"InputTensor": t, "OutputTensor": t, "Min": 1152921573326323713, "Max": 2**62})
    m = D.resolve(spec)
    assert m.lo == 2**60 + 2**37 and m.lower.precision_loss
    cpp = cpp_snippet(D.parse(spec).spec, INT64)
    assert "clipDesc.Min = 0x1.0000020000000p+60f" in cpp


def test_issue13_bfloat16_bound_below_the_overflow_midpoint_is_max_not_inf():
    from clipbridge.dialects.onnx.meaning import resolve
    from clipbridge.dialects.onnx.spec import OnnxSpec
    m = resolve(OnnxSpec(dialect="onnx", opset=13, elem_type="BFLOAT16", min=0, max=3.3961775292304597e38))
    assert m.hi == BF16_MAX and not m.upper.overflow


def test_issue13_json_double_input_as_bfloat16_rounds_once():
    from clipbridge.core.tensors import parse_json_tensor
    dt, arr = parse_json_tensor("bfloat16", [2], [1.0039062500000002, "1.00390625000000000000000000001"], 10)
    assert arr.astype(np.float64).tolist() == [1.0078125, 1.0078125]


# --- parsing exactly ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, want", [
    pytest.param("1.0039062500000000000000000000001", Fraction("1.0039062500000000000000000000001"),
                 id="decimal-beyond-double-precision"),
    pytest.param("0x1.000000000000000001p0", 1 + Fraction(1, 2**72), id="hex-beyond-double-precision"),
    pytest.param("0x1p99999", math.inf, id="hex-past-every-type-reads-inf"),
    pytest.param("-1e99999", -math.inf, id="decimal-past-every-type-reads-minus-inf"),
    pytest.param("1e-99999", 0.0, id="decimal-below-every-subnormal-reads-zero"),
    pytest.param("-0x1p-99999", -0.0, id="hex-below-every-subnormal-reads-minus-zero"),
    pytest.param("1e350", 10**350, id="integral-literal-kept-exact-within-range"),
    pytest.param(".5", 0.5, id="leading-point"),
    pytest.param("5.", 5.0, id="trailing-point"),
])
def test_parse_exact(text, want):
    got = parse_number(text)
    assert got == want or (isinstance(want, float) and _same(got, want))


@pytest.mark.parametrize("value, text", [
    pytest.param(Fraction(1, 10), "0.1", id="decimal"),
    pytest.param(Fraction(1, 10**399), "1e-399", id="tiny-decimal-with-exponent"),
    pytest.param(Fraction(-1, 400), "-0.0025", id="negative-decimal"),
    pytest.param(1 + Fraction(1, 2**72), "1000000000000000000000211758236813575084767080625169910490512847900390625e-72",
                 id="long-dyadic-as-decimal-with-exponent"),
    pytest.param(1 + Fraction(1, 2**1400), "0x" + format(2**1400 + 1, "x") + "p-1400", id="long-dyadic-as-hex"),
])
def test_wire_writes_fractions_exactly(value, text):
    assert wire_number(value) == text and parse_number(text) == value


# --- through the HTTP API ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def client():
    from fastapi.testclient import TestClient

    from clipbridge.main import create_app
    return TestClient(create_app())


def test_api_execute_bfloat16_json_double_rounds_once(client):
    r = client.post("/v1/execute", json={
        "spec": {"dialect": "onnx", "opset": 13, "elem_type": "BFLOAT16", "min": -10, "max": 10},
        "input": {"dtype": "bfloat16", "shape": [2], "data": [1.0039062500000002, "1.00390625000000000000001"]}})
    assert r.status_code == 200, r.text
    assert r.json()["output"]["data"] == [1.0078125, 1.0078125]


def test_api_decimal_string_bound_stays_exact_on_the_wire(client):
    """'1.00048828125000001' as a float16 bound: exact value just above a float16 midpoint, so it rounds up;
    the response gives the number back as the same exact string."""
    r = client.post("/v1/translate", json={
        "source": {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT16", "min": "1.00048828125000001", "max": 6},
        "targets": [{"dialect": "openvino"}], "mode": "literal"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["meaning"]["lower"]["given"] == "1.00048828125000001"
    assert body["meaning"]["lower"]["value"] == 1.0009765625  # one rounding; via the double it would be 1.0
    assert body["source"]["min"] == "1.00048828125000001"


def test_api_int64_bound_into_directml_float_rounds_once(client):
    r = client.post("/v1/translate", json={
        "source": {"dialect": "onnx", "opset": 13, "elem_type": "INT64", "min": "1152921573326323713",
                   "max": "2305843009213693952"},
        "targets": [{"dialect": "directml", "feature_level": "5_0"}], "mode": "literal"})
    assert r.status_code == 200, r.text
    tr = r.json()["translations"][0]
    assert tr["meaning"]["lower"]["value"] == str(2**60 + 2**37)
    assert "0x1.0000020000000p+60f" in tr["artifacts"]["cpp"]


def test_wire_writes_a_huge_integral_literal_back_within_the_string_limit():
    text = "-" + "9" * 300 + "e100"  # 401 characters as a plain integer
    value = parse_number(text)
    assert value == -int("9" * 300) * 10**100
    assert wire_number(value) == text and parse_number(wire_number(value)) == value


@pytest.mark.parametrize("dt_name, scale, want", [
    pytest.param("int64", 1e30, [2**63 - 1, -(2**63), 2**63 - 1], id="int64-saturates-to-max-not-wrapping"),
    pytest.param("int64", -1e30, [-(2**63), 2**63 - 1, -(2**63)], id="int64-saturates-to-min"),
    pytest.param("uint64", 1e30, [2**64 - 1, 0, 2**64 - 1], id="uint64-saturates-to-max-not-zero"),
    pytest.param("int32", 1e30, [2**31 - 1, -(2**31), 2**31 - 1], id="int32-saturates"),
])
def test_scale_bias_float_to_64bit_int_saturates_exactly(dt_name, scale, want):
    """x*Scale+Bias then the float->int cast (truncate, saturate): float(2^63-1) is 2^63, which must not wrap."""
    from clipbridge.core.dtypes import BY_NAME
    from clipbridge.kernels.array_api import clip_xp
    from clipbridge.kernels.numpy import clip_numpy
    from clipbridge.core.evaluate import apply_scale_bias
    from clipbridge.core.meaning import Bound, Meaning, ScaleBias
    dt = BY_NAME[dt_name]
    x = dt.array([dt.highest(), dt.lowest(), 5])
    assert apply_scale_bias(ScaleBias(scale, 0.0), x, dt).tolist() == want
    m = Meaning("directml", "test", dt, Bound(dt.lowest()), Bound(dt.highest()), scale_bias=ScaleBias(scale, 0.0))
    assert clip_numpy(m, x).tolist() == want
    assert clip_xp(np, m, x).tolist() == want


def test_wire_writes_a_huge_hex_integer_back_within_the_string_limit():
    text = "0x" + "f" * 300 + "p200"  # an integer of 1400 bits: 422 decimal digits
    value = -parse_number(text)
    assert isinstance(value, int) and len(str(value)) > 400
    assert len(wire_number(value)) <= 400 and parse_number(wire_number(value)) == value
