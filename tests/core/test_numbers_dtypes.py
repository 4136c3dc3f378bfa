"""clipbridge.core.numbers (wire numbers) and clipbridge.core.dtypes (exact value arithmetic of every element type)."""

from __future__ import annotations

import math
from fractions import Fraction
import sys

import ml_dtypes
import numpy as np
import pytest

from clipbridge.core import dtypes as D
from clipbridge.core.errors import SpecError
from clipbridge.core.numbers import JSON_SAFE_INT, MAX_NUMBER_STRING, format_number, parse_number, wire_number

FLT_MAX = float(np.finfo(np.float32).max)
DBL_MAX = sys.float_info.max
F16_TINY = 2.0**-24  # smallest positive float16 subnormal
BF16_MAX = float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)


def _same(a: float | int, b: float | int) -> bool:
    """Exact equality, NaN equal to NaN, and the sign of zero must match."""
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    return type(a) is type(b) and a == b


# --- parse_number -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("value, expected", [
    pytest.param("nan", math.nan, id="nan"),
    pytest.param("NaN", math.nan, id="nan-mixed-case"),
    pytest.param("-nan", math.nan, id="minus-nan"),
    pytest.param("inf", math.inf, id="inf"),
    pytest.param("+inf", math.inf, id="plus-inf"),
    pytest.param("-inf", -math.inf, id="minus-inf"),
    pytest.param("Infinity", math.inf, id="infinity-word"),
    pytest.param("-infinity", -math.inf, id="minus-infinity-word"),
    pytest.param("9223372036854775807", 9223372036854775807, id="int64-max-exact"),
    pytest.param("-9223372036854775808", -9223372036854775808, id="int64-min-exact"),
    pytest.param("18446744073709551615", 18446744073709551615, id="uint64-max-exact"),
    pytest.param("9007199254740993", 2**53 + 1, id="beyond-2^53-stays-exact"),
    pytest.param("123456789012345678901234567890", 123456789012345678901234567890, id="huge-int-exact"),
    pytest.param("+5", 5, id="plus-sign-int"),
    pytest.param(" 12 ", 12, id="surrounding-whitespace"),
    pytest.param("0x1.8p+1", 3.0, id="hex-float"),
    pytest.param("-0x1.8p+1", -3.0, id="negative-hex-float"),
    pytest.param("0x1p-1074", 5e-324, id="hex-smallest-subnormal-double"),
    pytest.param("0x1.fffffep+127", FLT_MAX, id="hex-flt-max"),
    pytest.param("1.5", 1.5, id="decimal-float"),
    # Decimal strings are read exactly: a value no double holds stays a Fraction (issue 13).
    pytest.param("-2.5e-3", Fraction(-1, 400), id="exponent-decimal-exact"),
    pytest.param("0.1", Fraction(1, 10), id="decimal-not-a-double-exact"),
    pytest.param("-2.5e-1", -0.25, id="exponent-float-that-is-a-double"),
    pytest.param("1e30", 10**30, id="integral-exponent-literal-is-int"),
    pytest.param("-0.0", -0.0, id="negative-zero-string"),
    pytest.param(7, 7, id="json-int"),
    pytest.param(2**70, 2**70, id="json-big-int"),
    pytest.param(0.1, 0.1, id="json-float"),
    pytest.param(-0.0, -0.0, id="json-negative-zero"),
    pytest.param(math.inf, math.inf, id="python-inf"),
])
def test_parse_number_accepts(value, expected):
    got = parse_number(value)
    assert _same(got, expected), (value, got, expected)


@pytest.mark.parametrize("value, kind", [
    pytest.param("9223372036854775807", int, id="decimal-int-string-is-int"),
    pytest.param("3.0", float, id="decimal-with-point-is-float"),
    pytest.param("0x10", float, id="hex-is-float"),
    pytest.param(3, int, id="int-stays-int"),
    pytest.param(3.0, float, id="float-stays-float"),
])
def test_parse_number_keeps_int_and_float_apart(value, kind):
    assert type(parse_number(value)) is kind


@pytest.mark.parametrize("value, fragment", [
    pytest.param(True, "boolean", id="true"),
    pytest.param(False, "boolean", id="false"),
    pytest.param(None, "NoneType", id="none"),
    pytest.param([1], "list", id="list"),
    pytest.param({"v": 1}, "dict", id="dict"),
    pytest.param("", "Not a number", id="empty-string"),
    pytest.param("abc", "Not a number", id="word"),
    pytest.param("1.2.3", "Not a number", id="two-points"),
    pytest.param("0xZZ", "Not a number", id="bad-hex"),
    pytest.param("1" * (MAX_NUMBER_STRING + 1), "characters", id="over-long-digits"),
    pytest.param("0x1." + "0" * MAX_NUMBER_STRING + "p+1", "characters", id="over-long-hex"),
    pytest.param("9" * 10000, "characters", id="very-long"),
])
def test_parse_number_rejects(value, fragment):
    with pytest.raises(SpecError) as exc:
        parse_number(value, loc="min")
    assert fragment in exc.value.message
    assert exc.value.loc == "min"


@pytest.mark.parametrize("value", [pytest.param(True, id="bool"), pytest.param("1" * (MAX_NUMBER_STRING + 1),
                                                                               id="over-long"),
                                   pytest.param("zz", id="word"), pytest.param([1], id="list")])
def test_spec_models_reject_bad_wire_numbers(value):
    from pydantic import ValidationError

    from clipbridge.dialects.onnx.spec import OnnxSpec
    with pytest.raises(ValidationError):
        OnnxSpec(dialect="onnx", opset=13, elem_type="FLOAT", min=value)


def test_spec_models_read_wire_strings_exactly():
    from clipbridge.dialects.onnx.spec import OnnxSpec
    from clipbridge.dialects.openvino.spec import OpenVinoSpec
    s = OnnxSpec(dialect="onnx", opset=13, elem_type="UINT64", min="0", max="18446744073709551615")
    assert s.max == 2**64 - 1 and type(s.max) is int
    v = OpenVinoSpec(dialect="openvino", element_type="f32", min="-inf", max="0x1.8p+1")
    assert v.min == -math.inf and v.max == 3.0
    assert s.model_dump(mode="json")["max"] == "18446744073709551615"


def test_parse_number_accepts_the_longest_allowed_string():
    text = "1" * MAX_NUMBER_STRING
    assert parse_number(text) == int(text)


def test_parse_number_error_message_truncates_the_echoed_value():
    bad = "x" * 300
    with pytest.raises(SpecError) as exc:
        parse_number(bad)
    assert bad not in exc.value.message


# --- wire_number / format_number ----------------------------------------------------------------------------

@pytest.mark.parametrize("value, expected", [
    pytest.param(None, None, id="none"),
    pytest.param(0, 0, id="zero"),
    pytest.param(JSON_SAFE_INT, JSON_SAFE_INT, id="2^53-number"),
    pytest.param(-JSON_SAFE_INT, -JSON_SAFE_INT, id="minus-2^53-number"),
    pytest.param(JSON_SAFE_INT + 1, "9007199254740993", id="2^53+1-string"),
    pytest.param(-(JSON_SAFE_INT + 1), "-9007199254740993", id="minus-2^53-1-string"),
    pytest.param(2**63 - 1, "9223372036854775807", id="int64-max-string"),
    pytest.param(2**64 - 1, "18446744073709551615", id="uint64-max-string"),
    pytest.param(math.nan, "nan", id="nan"),
    pytest.param(math.inf, "inf", id="inf"),
    pytest.param(-math.inf, "-inf", id="minus-inf"),
    pytest.param(1.5, 1.5, id="float"),
    pytest.param(FLT_MAX, FLT_MAX, id="flt-max"),
])
def test_wire_number(value, expected):
    got = wire_number(value)
    assert type(got) is type(expected) and (got == expected or got is expected)


@pytest.mark.parametrize("value", [
    pytest.param(v, id=name) for name, v in [
        ("zero", 0), ("neg-zero", -0.0), ("nan", math.nan), ("inf", math.inf), ("-inf", -math.inf),
        ("2^53+1", 2**53 + 1), ("-2^63", -(2**63)), ("2^64-1", 2**64 - 1), ("0.1", 0.1),
        ("subnormal", 5e-324), ("dbl-max", DBL_MAX), ("f16-tiny", F16_TINY), ("third", 1 / 3)]
])
def test_wire_number_round_trips_through_parse_number(value):
    assert _same(parse_number(wire_number(value)), value)


@pytest.mark.parametrize("value, expected", [
    pytest.param(None, "none", id="none"),
    pytest.param(5, "5", id="int"),
    pytest.param(2**64 - 1, "18446744073709551615", id="big-int-exact"),
    pytest.param(math.nan, "nan", id="nan"),
    pytest.param(math.inf, "inf", id="inf"),
    pytest.param(-math.inf, "-inf", id="minus-inf"),
    pytest.param(1.0, "1.0", id="integral-float"),
    pytest.param(0.1, "0.1", id="shortest-repr"),
    pytest.param(FLT_MAX, "3.4028234663852886e+38", id="flt-max-repr"),
])
def test_format_number(value, expected):
    assert format_number(value) == expected


# --- dtypes: limits ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dt, lowest, highest", [
    pytest.param(D.FLOAT32, -FLT_MAX, FLT_MAX, id="float32"),
    pytest.param(D.FLOAT16, -65504.0, 65504.0, id="float16"),
    pytest.param(D.BFLOAT16, -BF16_MAX, BF16_MAX, id="bfloat16"),
    pytest.param(D.FLOAT64, -DBL_MAX, DBL_MAX, id="float64"),
    pytest.param(D.INT8, -128, 127, id="int8"),
    pytest.param(D.INT16, -32768, 32767, id="int16"),
    pytest.param(D.INT32, -(2**31), 2**31 - 1, id="int32"),
    pytest.param(D.INT64, -(2**63), 2**63 - 1, id="int64"),
    pytest.param(D.UINT8, 0, 255, id="uint8"),
    pytest.param(D.UINT16, 0, 65535, id="uint16"),
    pytest.param(D.UINT32, 0, 2**32 - 1, id="uint32"),
    pytest.param(D.UINT64, 0, 2**64 - 1, id="uint64"),
])
def test_lowest_highest(dt, lowest, highest):
    lo, hi = dt.lowest(), dt.highest()
    assert _same(lo, lowest) and _same(hi, highest)
    assert type(lo) is (float if dt.is_float else int)


def test_bfloat16_max_is_the_documented_value():
    assert BF16_MAX == 3.3895313892515355e38


@pytest.mark.parametrize("dt", [pytest.param(d, id=d.name) for d in D.ALL])
def test_names_and_lookups(dt):
    assert D.BY_NAME[dt.name] is dt
    assert dt.itemsize * 8 == dt.bits == np.dtype(dt.np_dtype).itemsize * 8


def test_by_name_rejects_unknown():
    with pytest.raises(SpecError) as exc:
        D.by_name("float8", "dtype")
    assert "float8" in exc.value.message and exc.value.loc == "dtype"


# --- dtypes: next_up / next_down ----------------------------------------------------------------------------

@pytest.mark.parametrize("dt, value, up, down", [
    pytest.param(D.FLOAT16, 1.0, 1.0 + 2**-10, 1.0 - 2**-11, id="f16-one"),
    pytest.param(D.FLOAT16, 0.0, F16_TINY, -F16_TINY, id="f16-zero-crosses"),
    pytest.param(D.FLOAT16, -0.0, F16_TINY, -F16_TINY, id="f16-negative-zero"),
    pytest.param(D.FLOAT16, F16_TINY, 2 * F16_TINY, 0.0, id="f16-tiny-down-to-zero"),
    pytest.param(D.FLOAT16, -F16_TINY, -0.0, -2 * F16_TINY, id="f16-minus-tiny-up-to-minus-zero"),
    pytest.param(D.FLOAT16, 65504.0, math.inf, 65472.0, id="f16-max-up-is-inf"),
    pytest.param(D.FLOAT16, -65504.0, -65472.0, -math.inf, id="f16-lowest-down-is-minus-inf"),
    pytest.param(D.FLOAT16, math.inf, math.inf, 65504.0, id="f16-inf"),
    pytest.param(D.FLOAT16, -math.inf, -65504.0, -math.inf, id="f16-minus-inf"),
    pytest.param(D.FLOAT16, 2.0**-14, 2.0**-14 + F16_TINY, 2.0**-14 - F16_TINY, id="f16-smallest-normal"),
    pytest.param(D.BFLOAT16, 1.0, 1.0 + 2**-7, 1.0 - 2**-8, id="bf16-one"),
    pytest.param(D.BFLOAT16, 0.0, 2.0**-133, -(2.0**-133), id="bf16-zero-crosses"),
    pytest.param(D.BFLOAT16, BF16_MAX, math.inf, BF16_MAX - 2.0**120, id="bf16-max"),
    pytest.param(D.FLOAT32, 1.0, 1.0 + 2**-23, 1.0 - 2**-24, id="f32-one"),
    pytest.param(D.FLOAT32, 0.0, 2.0**-149, -(2.0**-149), id="f32-zero-crosses"),
    pytest.param(D.FLOAT32, FLT_MAX, math.inf, float(np.nextafter(np.float32(FLT_MAX), np.float32(0))),
                 id="f32-max"),
    pytest.param(D.FLOAT64, 1.0, math.nextafter(1.0, 2), math.nextafter(1.0, 0), id="f64-one"),
    pytest.param(D.FLOAT64, 0.0, 5e-324, -5e-324, id="f64-zero-crosses"),
    pytest.param(D.INT8, 0, 1, -1, id="i8-zero"),
    pytest.param(D.INT8, 127, 127, 126, id="i8-top-stays"),
    pytest.param(D.INT8, -128, -127, -128, id="i8-bottom-stays"),
    pytest.param(D.UINT8, 0, 1, 0, id="u8-zero-stays"),
    pytest.param(D.UINT64, 2**64 - 1, 2**64 - 1, 2**64 - 2, id="u64-top"),
    pytest.param(D.INT64, -(2**63), -(2**63) + 1, -(2**63), id="i64-bottom"),
])
def test_next_up_next_down(dt, value, up, down):
    assert _same(dt.next_up(value), up), dt.next_up(value)
    assert _same(dt.next_down(value), down), dt.next_down(value)


@pytest.mark.parametrize("dt", [pytest.param(d, id=d.name) for d in (D.FLOAT16, D.BFLOAT16, D.FLOAT32)])
def test_next_of_nan_is_nan(dt):
    assert math.isnan(dt.next_up(math.nan)) and math.isnan(dt.next_down(math.nan))


@pytest.mark.parametrize("dt", [pytest.param(d, id=d.name) for d in (D.FLOAT16, D.BFLOAT16)])
def test_next_up_walks_every_finite_value_in_order(dt):
    """Walking next_up from lowest() visits every finite value of the type exactly once, in order."""
    vals = dt.all_values().astype(np.float64)
    finite = np.unique(vals[np.isfinite(vals)])  # -0 and +0 collapse
    v = dt.lowest()
    seen = [v]
    while v < dt.highest():
        v = dt.next_up(v)
        if v != seen[-1]:
            seen.append(v)
    assert np.array_equal(np.array(seen), finite)


# --- dtypes: contains / round --------------------------------------------------------------------------------

@pytest.mark.parametrize("dt, value, expected", [
    pytest.param(D.INT8, 127, True, id="i8-127"),
    pytest.param(D.INT8, 128, False, id="i8-128"),
    pytest.param(D.INT8, -129, False, id="i8-minus-129"),
    pytest.param(D.INT8, 1.0, True, id="i8-integral-float"),
    pytest.param(D.INT8, 1.5, False, id="i8-fraction"),
    pytest.param(D.INT8, math.inf, False, id="i8-inf"),
    pytest.param(D.INT8, math.nan, False, id="i8-nan"),
    pytest.param(D.UINT8, -1, False, id="u8-negative"),
    pytest.param(D.UINT64, 2**64 - 1, True, id="u64-max"),
    pytest.param(D.UINT64, 2**64, False, id="u64-max-plus-one"),
    pytest.param(D.INT64, float(2**63), False, id="i64-2^63-as-float"),
    pytest.param(D.FLOAT16, 65504, True, id="f16-max"),
    pytest.param(D.FLOAT16, 65505, False, id="f16-beyond-max"),
    pytest.param(D.FLOAT16, 0.1, False, id="f16-0.1"),
    pytest.param(D.FLOAT16, 0.5, True, id="f16-half"),
    pytest.param(D.FLOAT16, F16_TINY, True, id="f16-subnormal"),
    pytest.param(D.FLOAT16, 1e-8, False, id="f16-below-subnormal"),
    pytest.param(D.FLOAT16, math.inf, True, id="f16-inf"),
    pytest.param(D.FLOAT16, math.nan, True, id="f16-nan"),
    pytest.param(D.FLOAT32, 2**24 + 1, False, id="f32-2^24+1"),
    pytest.param(D.FLOAT32, 2**24 + 2, True, id="f32-2^24+2"),
    pytest.param(D.FLOAT32, 2**200, False, id="f32-huge-int"),
    pytest.param(D.FLOAT64, 2**53 + 1, False, id="f64-2^53+1"),
    pytest.param(D.FLOAT64, 2**1000, True, id="f64-2^1000"),
    pytest.param(D.FLOAT64, int(DBL_MAX), True, id="f64-dbl-max-as-int"),
    pytest.param(D.BFLOAT16, 1 + 2**-7, True, id="bf16-one-plus-ulp"),
    pytest.param(D.BFLOAT16, 1 + 2**-8, False, id="bf16-half-ulp"),
])
def test_contains(dt, value, expected):
    assert dt.contains(value) is expected


@pytest.mark.parametrize("dt, value, expected", [
    pytest.param(D.FLOAT16, 65504.0, 65504.0, id="f16-max"),
    pytest.param(D.FLOAT16, 65519.0, 65504.0, id="f16-below-tie"),
    pytest.param(D.FLOAT16, 65520.0, math.inf, id="f16-tie-overflows"),
    pytest.param(D.FLOAT16, -70000, -math.inf, id="f16-overflow-negative-int"),
    pytest.param(D.FLOAT16, 1 + 2**-11, 1.0, id="f16-tie-to-even-down"),
    pytest.param(D.FLOAT16, 1 + 3 * 2**-11, 1 + 2**-9, id="f16-tie-to-even-up"),
    pytest.param(D.FLOAT16, 1 + 2**-11 + 2**-40, 1 + 2**-10, id="f16-just-above-tie"),
    pytest.param(D.FLOAT16, 0.1, 0.0999755859375, id="f16-0.1"),
    pytest.param(D.FLOAT16, 2.0**-25, 0.0, id="f16-half-tiny-ties-to-zero"),
    pytest.param(D.FLOAT16, -(2.0**-26), -0.0, id="f16-underflow-keeps-sign"),
    pytest.param(D.FLOAT16, math.nan, math.nan, id="f16-nan"),
    pytest.param(D.FLOAT32, FLT_MAX * (1 + 2**-25), FLT_MAX, id="f32-below-overflow-tie-rounds-down"),
    pytest.param(D.FLOAT32, FLT_MAX * (1 + 2**-24), math.inf, id="f32-overflow-tie-goes-to-inf"),
    pytest.param(D.FLOAT32, 3.5e38, math.inf, id="f32-overflow"),
    pytest.param(D.FLOAT32, 2**24 + 1, 16777216.0, id="f32-int-tie-to-even"),
    pytest.param(D.FLOAT32, 2**200, math.inf, id="f32-huge-int-overflows"),
    pytest.param(D.FLOAT32, -(10**400), -math.inf, id="f32-enormous-negative-int"),
    pytest.param(D.FLOAT64, 2**53 + 1, float(2**53), id="f64-int-tie-to-even"),
    pytest.param(D.FLOAT64, 10**400, math.inf, id="f64-enormous-int-overflows"),
    pytest.param(D.FLOAT64, 2**1024, math.inf, id="f64-2^1024-overflows"),
    pytest.param(D.FLOAT64, 10**308, 1e308, id="f64-10^308-is-finite"),
    pytest.param(D.FLOAT64, 2**1023 + 1, float(2**1023), id="f64-2^1023+1-is-finite"),
    pytest.param(D.FLOAT64, int(DBL_MAX), DBL_MAX, id="f64-dbl-max-as-int"),
    pytest.param(D.BFLOAT16, 1 + 2**-8, 1.0, id="bf16-tie-to-even"),
    pytest.param(D.BFLOAT16, 1 + 2**-8 + 2**-40, 1 + 2**-7, id="bf16-just-above-tie-no-double-rounding"),
    pytest.param(D.BFLOAT16, 3.4e38, math.inf, id="bf16-overflow"),
])
def test_round(dt, value, expected):
    assert _same(dt.round(value), expected), dt.round(value)


@pytest.mark.parametrize("dt", [pytest.param(d, id=d.name) for d in (D.FLOAT16, D.BFLOAT16)])
def test_round_is_nearest_even_on_every_midpoint(dt):
    """Every midpoint between neighbouring finite values, nudged up/down by a double ulp, rounds to the nearer side."""
    vals = np.unique(dt.all_values().astype(np.float64))
    vals = vals[np.isfinite(vals)][::37]
    for a in vals[:-1]:
        b = dt.next_up(float(a))
        if not math.isfinite(b):
            continue
        mid = (float(a) + b) / 2
        assert dt.round(math.nextafter(mid, -math.inf)) == float(a), (float(a), b)
        assert dt.round(math.nextafter(mid, math.inf)) == b, (float(a), b)


@pytest.mark.parametrize("dt", [pytest.param(d, id=d.name) for d in (
    D.INT8, D.UINT8, D.INT16, D.UINT16, D.FLOAT16, D.BFLOAT16)])
def test_all_values_is_every_bit_pattern(dt):
    vals = dt.all_values()
    assert vals.dtype == dt.np_dtype and vals.size == 2**dt.bits
    assert np.unique(vals.view(dt.uint_view)).size == 2**dt.bits


def test_all_values_refuses_wide_types():
    with pytest.raises(AssertionError):
        D.FLOAT32.all_values()


@pytest.mark.parametrize("dt, values", [
    pytest.param(D.INT64, [-(2**63), 2**63 - 1], id="i64-extremes"),
    pytest.param(D.UINT64, [0, 2**64 - 1], id="u64-extremes"),
    pytest.param(D.FLOAT16, [-65504.0, math.inf, -0.0], id="f16"),
])
def test_array_holds_exact_values(dt, values):
    arr = dt.array(values)
    assert arr.dtype == dt.np_dtype
    assert all(_same(dt.to_python(a), v) for a, v in zip(arr, values))


@pytest.mark.parametrize("dt, value, expected", [
    pytest.param(D.INT8, 300, 127, id="i8-high"),
    pytest.param(D.INT8, -300, -128, id="i8-low"),
    pytest.param(D.UINT8, -1, 0, id="u8-negative"),
    pytest.param(D.UINT64, 2**70, 2**64 - 1, id="u64-high"),
    pytest.param(D.INT16, 5, 5, id="in-range"),
])
def test_saturate(dt, value, expected):
    assert dt.saturate(value) == expected
