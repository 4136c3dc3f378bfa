"""DirectML ELEMENT_WISE_CLIP / CLIP1: desc validation per feature level, casts, ambiguity, emit(), C++ snippet."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from clipbridge.core.dtypes import ALL as ALL_DTYPES
from clipbridge.dialects.directml import DIALECT
from clipbridge.dialects.directml import emit as dm_emit
from clipbridge.dialects.directml import meaning as dm
from clipbridge.dialects.directml.dtypes import by_dml_name, dml_name
from clipbridge.dialects.directml.meaning import DOC_2022, READING_LINES
from clipbridge.dialects.directml.tensor import NEWEST_LEVEL
from clipbridge.dialects.kit.common import Mode
from clipbridge.core.dtypes import BFLOAT16, FLOAT16, FLOAT32, FLOAT64, INT8, INT32, INT64, UINT8, UINT64
from clipbridge.core.errors import SpecError
from clipbridge.core.findings import Code, Severity
from clipbridge.core.evaluate import evaluate
from clipbridge.core.meaning import Bound, Meaning, NanBound, NanInput, Order, ScaleBias, State
from clipbridge.core.numbers import parse_number
from clipbridge.dialects.directml.spec import DirectMLSpec, DirectMLTarget
from clipbridge.service.translate import translate

CLIP, CLIP1 = "ELEMENT_WISE_CLIP", "ELEMENT_WISE_CLIP1"


def tensor(dt: str = "FLOAT32", sizes=(1, 1, 1, 4), **kw) -> dict:
    return {"DataType": dt, "Sizes": list(sizes), **kw}


def spec(level="6_4", op=CLIP, dt="FLOAT32", mn=0.0, mx=6.0, sizes=(1, 1, 1, 4), inp=None, out=None,
         **desc) -> DirectMLSpec:
    d = {"InputTensor": inp or tensor(dt, sizes), "OutputTensor": out or tensor(dt, sizes), "Min": mn, "Max": mx,
         **desc}
    if op == CLIP1 and "MinMaxDataType" not in d:
        d["MinMaxDataType"] = dt
    return DirectMLSpec(dialect="directml", feature_level=level, operator=op, desc=d)


def same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b and type(a) is type(b)


# --- feature levels: dtypes and ranks ---------------------------------------------------------------------------

@pytest.mark.parametrize("level, dt, sizes", [
    pytest.param("1_0", "FLOAT32", (1, 1, 1, 4), id="fl1.0-float32-4d"),
    pytest.param("1_0", "FLOAT16", (1, 3, 2, 2), id="fl1.0-float16-4d"),
    pytest.param("2_1", "INT8", (1, 1, 1, 4), id="fl2.1-int8"),
    pytest.param("2_1", "UINT16", (1, 1, 1, 4), id="fl2.1-uint16"),
    pytest.param("2_1", "INT32", (1, 1, 2, 2), id="fl2.1-int32"),
    pytest.param("3_0", "UINT8", (4,), id="fl3.0-one-dim"),
    pytest.param("3_0", "INT16", (1,) * 8, id="fl3.0-eight-dims"),
    pytest.param("5_0", "INT64", (2, 2), id="fl5.0-int64"),
    pytest.param("5_0", "UINT64", (2,), id="fl5.0-uint64"),
    pytest.param("DML_FEATURE_LEVEL_6_4", "DML_TENSOR_DATA_TYPE_FLOAT16", (3,), id="prefixed-enums"),
    pytest.param("5.0", "float32", (3,), id="dotted-level-lower-case-type"),
])
def test_accepted(level, dt, sizes):
    m = dm.resolve(spec(level, dt=dt, mn=0, mx=1, sizes=sizes))
    assert m.state is State.DEFINED
    assert m.version.startswith(CLIP + "@")


@pytest.mark.parametrize("level, dt, sizes, loc, message", [
    pytest.param("1_0", "INT8", (1, 1, 1, 4), "desc.InputTensor.DataType",
                 "ELEMENT_WISE_CLIP at FL 1.0 does not take INT8; FL 2.1 and later take it", id="fl1.0-int8"),
    pytest.param("2_0", "UINT32", (1, 1, 1, 4), "desc.InputTensor.DataType", "FL 2.0 does not take UINT32",
                 id="fl2.0-uint32"),
    pytest.param("1_0", "FLOAT32", (4,), "desc.InputTensor.Sizes",
                 "DirectML FL 1.0 needs exactly 4 dimensions. Got: 1", id="fl1.0-one-dim"),
    pytest.param("2_1", "FLOAT32", (1, 2, 3), "desc.InputTensor.Sizes",
                 "DirectML FL 2.1 needs exactly 4 dimensions. Got: 3", id="fl2.1-three-dims"),
    pytest.param("2_1", "INT8", (1, 1, 1, 1, 4), "desc.InputTensor.Sizes",
                 "DirectML FL 2.1 needs exactly 4 dimensions. Got: 5", id="fl2.1-five-dims"),
    pytest.param("3_0", "FLOAT32", (1,) * 9, "desc.InputTensor.Sizes",
                 "DirectML FL 3.0 needs 1 to 8 dimensions. Got: 9", id="fl3.0-nine-dims"),
    pytest.param("6_4", "FLOAT32", (), "desc.InputTensor.Sizes",
                 "DirectML FL 6.4 needs 1 to 8 dimensions. Got: 0", id="fl6.4-zero-dims"),
    pytest.param("4_1", "INT64", (4,), "desc.InputTensor.DataType",
                 "ELEMENT_WISE_CLIP at FL 4.1 does not take INT64; FL 5.0 and later take it", id="fl4.1-int64"),
    pytest.param("6_4", "FLOAT64", (4,), "desc.InputTensor.DataType", "no feature level takes it",
                 id="float64-never"),
    pytest.param("6_4", "BFLOAT16", (4,), "desc.InputTensor.DataType", "Unknown DML_TENSOR_DATA_TYPE",
                 id="bfloat16-unknown"),
    pytest.param("6_4", "FLOAT32", (4, 0), "desc.InputTensor.Sizes[1]", "Sizes[1] = 0", id="zero-size"),
    pytest.param("6_4", "FLOAT32", (2**32,), "desc.InputTensor.Sizes[0]", "Sizes[0] = 4294967296",
                 id="size-beyond-uint"),
    pytest.param("7_0", "FLOAT32", (4,), "feature_level", "Unknown DirectML feature level", id="unknown-level"),
])
def test_rejected_desc(level, dt, sizes, loc, message):
    with pytest.raises(SpecError) as exc:
        dm.resolve(spec(level, dt=dt, mn=0, mx=1, sizes=sizes))
    assert message in exc.value.message, exc.value.message
    assert exc.value.loc == loc


def test_fl21_rank_message_exactly():
    with pytest.raises(SpecError) as exc:
        dm.resolve(spec("2_1", sizes=(1, 2, 3)))
    assert exc.value.message == "DirectML FL 2.1 needs exactly 4 dimensions. Got: 3"
    assert exc.value.loc == "desc.InputTensor.Sizes"


# --- tensor descs -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dt, sizes, strides, total", [
    pytest.param("FLOAT32", (1, 1, 1, 4), None, 16, id="packed-float32"),
    pytest.param("FLOAT16", (1, 1, 1, 3), None, 8, id="float16-6-bytes-rounds-to-8"),
    pytest.param("INT8", (1, 1, 1, 5), None, 8, id="int8-5-bytes-rounds-to-8"),
    pytest.param("UINT8", (1, 1, 1, 1), None, 4, id="one-byte-rounds-to-4"),
    pytest.param("INT64", (3,), None, 24, id="int64"),
    pytest.param("FLOAT32", (1, 1, 2, 3), (0, 0, 1, 2), 24, id="transposed-strides"),
    pytest.param("FLOAT16", (1, 1, 2, 3), (6, 6, 3, 1), 12, id="packed-explicit"),
    pytest.param("FLOAT16", (1, 1, 2, 3), (0, 0, 4, 1), 14 + 2, id="padded-rows-rounds-up"),
    pytest.param("INT8", (2, 3), (0, 0), 4, id="full-broadcast-one-element"),
    pytest.param("UINT16", (5, 1), (1, 0), 12, id="partial-broadcast"),
])
def test_total_tensor_size_computed(dt, sizes, strides, total):
    t = tensor(dt, sizes, **({"Strides": list(strides)} if strides else {}))
    s = spec("6_4", dt=dt, mn=0, mx=1, inp=t, out=tensor(dt, sizes))
    n = dm.normalize(s)
    assert n["desc"]["InputTensor"]["TotalTensorSizeInBytes"] == total
    assert n["desc"]["InputTensor"]["DimensionCount"] == len(sizes)
    # exactly the computed size is accepted, one byte less is not
    ok = tensor(dt, sizes, TotalTensorSizeInBytes=total, **({"Strides": list(strides)} if strides else {}))
    dm.resolve(spec("6_4", dt=dt, mn=0, mx=1, inp=ok, out=tensor(dt, sizes)))
    small = dict(ok, TotalTensorSizeInBytes=total - 1)
    with pytest.raises(SpecError) as exc:
        dm.resolve(spec("6_4", dt=dt, mn=0, mx=1, inp=small, out=tensor(dt, sizes)))
    assert exc.value.loc == "desc.InputTensor.TotalTensorSizeInBytes"
    assert f"need at least {total}" in exc.value.message


def test_larger_total_size_is_kept():
    s = spec(inp=tensor(TotalTensorSizeInBytes=1024))
    assert dm.normalize(s)["desc"]["InputTensor"]["TotalTensorSizeInBytes"] == 1024


@pytest.mark.parametrize("inp, out, loc, fragment", [
    pytest.param(tensor("FLOAT32"), tensor("FLOAT16"), "desc.OutputTensor.DataType",
                 "must have the same DataType (FLOAT32 vs FLOAT16)", id="datatype-mismatch"),
    pytest.param(tensor(sizes=(1, 1, 1, 4)), tensor(sizes=(1, 1, 4, 1)), "desc.OutputTensor.Sizes",
                 "same DimensionCount and Sizes", id="sizes-mismatch"),
    pytest.param(tensor(sizes=(4,)), tensor(sizes=(1, 4)), "desc.OutputTensor.Sizes",
                 "same DimensionCount and Sizes", id="rank-mismatch"),
    pytest.param(tensor(DimensionCount=3), tensor(), "desc.InputTensor.DimensionCount",
                 "DimensionCount is 3 but Sizes has 4 entries", id="dimension-count-wrong"),
    pytest.param(tensor(Strides=[1, 1, 1]), tensor(), "desc.InputTensor.Strides", "Strides has 3 entries",
                 id="strides-length"),
    pytest.param(tensor(Strides=[0, 0, 0, -1]), tensor(), "desc.InputTensor.Strides[3]", "Strides[3] = -1",
                 id="negative-stride"),
    pytest.param(tensor(Flags="DML_TENSOR_FLAG_WEIRD"), tensor(), "desc.InputTensor.Flags", "Unknown DML_TENSOR_FLAGS",
                 id="unknown-flag"),
    pytest.param(tensor(GuaranteedBaseOffsetAlignment=8), tensor(), "desc.InputTensor.GuaranteedBaseOffsetAlignment",
                 "power of two >= 16", id="alignment-8"),
    pytest.param(tensor(GuaranteedBaseOffsetAlignment=48), tensor(),
                 "desc.InputTensor.GuaranteedBaseOffsetAlignment", "power of two >= 16", id="alignment-48"),
    pytest.param(tensor(), tensor(TotalTensorSizeInBytes=15), "desc.OutputTensor.TotalTensorSizeInBytes",
                 "need at least 16", id="output-too-small"),
])
def test_tensor_desc_errors(inp, out, loc, fragment):
    with pytest.raises(SpecError) as exc:
        dm.resolve(spec(inp=inp, out=out))
    assert fragment in exc.value.message, exc.value.message
    assert exc.value.loc == loc


def test_alignment_16_and_owned_by_dml_are_fine():
    """Alignment 16 and the OWNED_BY_DML flag are valid: the desc resolves to the plain float32 clip to [0, 6]."""
    m = dm.resolve(spec(inp=tensor(GuaranteedBaseOffsetAlignment=16, Flags="OWNED_BY_DML")))
    plain = dm.resolve(spec())
    assert m.state is State.DEFINED and m.dtype.name == "float32"
    assert (m.lo, m.hi) == (0.0, 6.0) and m.describe() == plain.describe()


# --- CLIP1 ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("level, desc, loc, fragment", [
    pytest.param("4_1", {}, "operator", "ELEMENT_WISE_CLIP1 needs DML_FEATURE_LEVEL_5_0; FL is 4.1", id="fl4.1"),
    pytest.param("5_0", {"MinMaxDataType": "INT16"}, "desc.MinMaxDataType",
                 "MinMaxDataType must match OutputTensor.DataType (INT32). Got: INT16", id="mismatch"),
    pytest.param("5_0", {"MinMaxDataType": None}, "desc.MinMaxDataType", "needs MinMaxDataType", id="missing"),
])
def test_clip1_errors(level, desc, loc, fragment):
    s = spec(level, CLIP1, "INT32", 0, 1)
    d = s.desc.model_copy(update=desc)
    with pytest.raises(SpecError) as exc:
        dm.resolve(s.model_copy(update={"desc": d}))
    assert fragment in exc.value.message and exc.value.loc == loc


def test_min_max_data_type_belongs_to_clip1():
    with pytest.raises(SpecError) as exc:
        dm.resolve(spec("6_4", CLIP, "INT32", 0, 1, MinMaxDataType="INT32"))
    assert exc.value.loc == "desc.MinMaxDataType"


@pytest.mark.parametrize("dt, mn, mx, lo, hi", [
    pytest.param("INT32", 16777217, 2**31 - 1, 16777217, 2**31 - 1, id="int32-exact-beyond-2^24"),
    pytest.param("INT64", -(2**63), 2**63 - 1, -(2**63), 2**63 - 1, id="int64-extremes"),
    pytest.param("UINT64", 0, 2**64 - 1, 0, 2**64 - 1, id="uint64-max"),
    pytest.param("INT8", -5, 5.0, -5, 5, id="int8-integral-float"),
    pytest.param("FLOAT32", float(np.float32(0.1)), "inf", float(np.float32(0.1)), math.inf, id="float32-exact"),
    pytest.param("FLOAT16", 0.5, 65504, 0.5, 65504.0, id="float16-exact"),
])
def test_clip1_typed_bounds(dt, mn, mx, lo, hi):
    m = dm.resolve(spec("5_0", CLIP1, dt, mn, mx))
    assert same(m.lo, lo) and same(m.hi, hi)
    assert m.order is Order.MIN_WINS


@pytest.mark.parametrize("dt, mn, mx, loc, fragment", [
    pytest.param("INT32", 1.5, 2, "desc.Min", "1.5 is not a INT32 value", id="int32-fraction"),
    pytest.param("INT8", 0, 128, "desc.Max", "128 is outside INT8", id="int8-out-of-range"),
    pytest.param("UINT8", -1, 0, "desc.Min", "outside UINT8", id="uint8-negative"),
    pytest.param("INT16", "nan", 0, "desc.Min", "nan is not a INT16 value", id="int16-nan"),
    pytest.param("INT16", 0, "inf", "desc.Max", "inf is not a INT16 value", id="int16-inf"),
    pytest.param("FLOAT32", 0.1, 1, "desc.Min", "0.1 is not a FLOAT32 value", id="float32-inexact"),
    pytest.param("FLOAT16", 0, 70000, "desc.Max", "70000 is not a FLOAT16 value", id="float16-overflow"),
])
def test_clip1_typed_bound_errors(dt, mn, mx, loc, fragment):
    with pytest.raises(SpecError) as exc:
        dm.resolve(spec("5_0", CLIP1, dt, mn, mx))
    assert fragment in exc.value.message and exc.value.loc == loc


# --- CLIP: FLOAT Min/Max cast rules ------------------------------------------------------------------------------

@pytest.mark.parametrize("dt, mn, mx, lo, hi, flags", [
    pytest.param("INT8", -1.7, 1.9, -1, 1, {"lower.rounded": True, "upper.rounded": True},
                 id="int8-truncate-toward-zero"),
    pytest.param("INT8", 2.5, 3.5, 2, 3, {"lower.rounded": True}, id="int8-truncate-not-nearest-even"),
    pytest.param("INT8", -0.9, 0.9, 0, 0, {}, id="int8-both-to-zero"),
    pytest.param("UINT8", -1, 300, 0, 255, {"lower.saturated": True, "upper.saturated": True},
                 id="uint8-out-of-range-saturates"),
    pytest.param("UINT8", -0.5, 255.9, 0, 255, {"lower.saturated": False, "upper.saturated": False},
                 id="uint8-truncation-brings-inside"),
    pytest.param("INT8", "-inf", "inf", -128, 127, {"lower.saturated": True, "upper.saturated": True},
                 id="int8-infinite"),
    pytest.param("INT32", 16777217, 2**30 + 1, 16777216, 2**30, {"lower.precision_loss": True,
                                                                "upper.precision_loss": True},
                 id="int32-float32-loses-beyond-2^24"),
    pytest.param("INT32", -(2**31), 2**31 - 1, -(2**31), 2**31 - 1, {"upper.saturated": True,
                                                                     "upper.precision_loss": True},
                 id="int32-max-as-float-is-2^31-saturated"),
    pytest.param("UINT32", 0, 2**32 - 1, 0, 2**32 - 1, {"upper.saturated": True}, id="uint32-max"),
    pytest.param("FLOAT16", 1.00048828125, 1.00146484375, 1.0, 1.001953125, {},
                 id="float16-ties-to-even"),
    pytest.param("FLOAT16", 0.1, 65519, 0.0999755859375, 65504.0, {"lower.precision_loss": True},
                 id="float16-nearest"),
    pytest.param("FLOAT16", -70000, 65520, -math.inf, math.inf, {"lower.overflow": True, "upper.overflow": True},
                 id="float16-overflow-to-inf"),
    pytest.param("FLOAT16", 0, 65519.999999, 0.0, math.inf, {"upper.overflow": True},
                 id="float16-double-rounding-through-float"),
    pytest.param("FLOAT32", 0.1, 1e39, float(np.float32(0.1)), math.inf, {"upper.precision_loss": True},
                 id="float32-beyond-float-range"),
    pytest.param("FLOAT32", "nan", 1, math.nan, 1.0, {}, id="float32-nan-min"),
])
def test_clip_cast(dt, mn, mx, lo, hi, flags):
    m = dm.resolve(spec("6_4", CLIP, dt, mn, mx))
    assert same(m.lo, lo), m.lower
    assert same(m.hi, hi), m.upper
    for path, value in flags.items():
        side, flag = path.split(".")
        assert getattr(getattr(m, side), flag) is value, (path, getattr(m, side))


@pytest.mark.parametrize("dt", [pytest.param(d, id=d) for d in ("INT8", "UINT32")])
def test_clip_nan_on_integer_tensor(dt):
    with pytest.raises(SpecError) as exc:
        dm.resolve(spec("6_4", CLIP, dt, "nan", 1))
    assert "NaN" in exc.value.message and exc.value.loc == "min"


# --- ambiguity and NaN ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("dt, mn, mx, lo, hi", [
    pytest.param("INT8", 5, 1, 5, 1, id="int8"),
    pytest.param("FLOAT32", 2.5, -1.0, 2.5, -1.0, id="float32"),
    pytest.param("FLOAT16", 0.5, 0.25, 0.5, 0.25, id="float16"),
    pytest.param("UINT8", 300, 10, 255, 10, id="uint8-after-saturation"),
])
def test_clip_min_greater_than_max_is_two_readings(dt, mn, mx, lo, hi):
    """The current doc's meaning (Min), the 2022 doc's (Max) kept in alternates under its reading's name."""
    m = dm.resolve(spec("6_4", CLIP, dt, mn, mx))
    assert m.state is State.AMBIGUOUS and m.order is Order.MIN_WINS
    assert m.readings == READING_LINES == ("current-doc: max(Min, min(x, Max))", "2022-doc: min(Max, max(Min, x))")
    assert "min > max" in m.reason
    assert [name for name, _ in m.alternates] == [DOC_2022] and m.under(DOC_2022).order is Order.MAX_WINS
    x = m.dtype.array([m.dtype.lowest(), 0, m.dtype.highest()])
    assert np.all(evaluate(m, x) == lo)  # the default reading is the current doc
    assert np.all(evaluate(m.under("current-doc"), x) == lo)
    assert np.all(evaluate(m.under(DOC_2022), x) == hi)


def test_clip_truncation_can_uncross():
    m = dm.resolve(spec("6_4", CLIP, "INT8", 1.9, 1.2))
    assert (m.lo, m.hi) == (1, 1) and m.state is State.DEFINED and m.readings == () and m.alternates == ()


@pytest.mark.parametrize("dt, mn, mx", [pytest.param("INT8", 5, 1, id="int8"),
                                        pytest.param("FLOAT32", 2.5, -1.0, id="float32")])
def test_clip1_min_greater_than_max_min_wins(dt, mn, mx):
    m = dm.resolve(spec("5_0", CLIP1, dt, mn, mx))
    assert m.state is State.DEFINED and m.order is Order.MIN_WINS and m.readings == () and m.alternates == ()
    x = m.dtype.array([m.dtype.lowest(), 0, m.dtype.highest()])
    assert np.all(evaluate(m, x) == mn)


def test_dialect_readings_name_both_documents_with_their_source():
    """Dialect.readings: current-doc first (the default), then 2022-doc, each with its formula and source."""
    readings = DIALECT.readings
    assert list(readings) == ["current-doc", "2022-doc"]
    assert readings["current-doc"].startswith("max(Min, min(x, Max))") and "reference/" in readings["current-doc"]
    assert readings["2022-doc"].startswith("min(Max, max(Min, x))") and "2022" in readings["2022-doc"]


def test_crossed_clip_drifts_under_the_2022_reading_only():
    """Translate's alternates mechanism names the reading: exact under the current doc, drift under the 2022 doc."""
    r = translate(spec("6_4", CLIP, "INT8", 5, 1), ["onnx"], Mode.PRESERVE)
    t = r.translations[0]
    mgm = [f for f in t.findings if f.code is Code.MIN_GREATER_THAN_MAX]
    assert [f.severity for f in mgm] == [Severity.INFO, Severity.ERROR], [f.message for f in mgm]
    assert mgm[1].message == "under the 2022-doc reading: min > max is computed differently"
    assert t.status == "drift"


def test_nan_is_undocumented():
    m = dm.resolve(spec("6_4", CLIP, "FLOAT32", "nan", 6))
    assert m.nan_input is NanInput.UNDOCUMENTED and m.nan_bound is NanBound.UNDOCUMENTED
    # executed as: the NaN bound leaves its side open, NaN inputs propagate
    y = evaluate(m, FLOAT32.array([-1e30, 7.0, math.nan]))
    assert y[0] == np.float32(-1e30) and y[1] == 6.0 and np.isnan(y[2])


# --- ScaleBias ------------------------------------------------------------------------------------------------

def test_scale_bias_float():
    m = dm.resolve(spec("6_4", CLIP, "FLOAT32", 0, 6, ScaleBias={"Scale": 0.1, "Bias": 1}))
    assert m.scale_bias == ScaleBias(float(np.float32(0.1)), 1.0, FLOAT32, False)
    assert m.state is State.DEFINED
    x = FLOAT32.array([-20.0, 0.0, 10.0, 100.0])
    expected = np.clip((x * np.float32(0.1)).astype(np.float32) + np.float32(1), 0, 6)
    assert np.array_equal(evaluate(m, x), expected)


def test_scale_bias_integer_is_ambiguous():
    m = dm.resolve(spec("6_4", CLIP, "INT8", 0, 6, ScaleBias={"Scale": 0.5, "Bias": 0}))
    assert m.state is State.AMBIGUOUS and "ScaleBias on an integer tensor" in m.reason
    assert evaluate(m, INT8.array([-128, 3, 5, 127])).tolist() == [0, 1, 2, 6]


# --- emit ----------------------------------------------------------------------------------------------------

def meaning(dt, lo, hi, order=Order.MAX_WINS, lo_given=None, hi_given=None, **kw) -> Meaning:
    return Meaning("test", "test", dt, Bound(lo, lo if lo_given is None else lo_given),
                   Bound(hi, hi if hi_given is None else hi_given), order=order, **kw)


def target(level=None) -> DirectMLTarget:
    return DirectMLTarget(dialect="directml", feature_level=level)


def dmin(e):
    return parse_number(e.spec["desc"]["Min"])


def dmax(e):
    return parse_number(e.spec["desc"]["Max"])


@pytest.mark.parametrize("src, level, mode, op, exp_min, exp_max, exp_codes", [
    pytest.param(meaning(INT8, 2, 6, lo_given=1.5, hi_given=6.7), "6_4", Mode.PRESERVE, CLIP, 2.0, 6.0, [],
                 id="preserve-int8-effective"),
    pytest.param(meaning(INT8, 2, 6, lo_given=1.5, hi_given=6.7), "6_4", Mode.LITERAL, CLIP, 1.5, 6.7, [],
                 id="literal-copies-given"),
    pytest.param(meaning(INT32, 16777217, 2**30), "3_0", Mode.PRESERVE, CLIP, 16777216.0, float(2**30),
                 [(Code.BOUND_PRECISION, Severity.ERROR)], id="preserve-int32-fl3-no-clip1"),
    pytest.param(meaning(INT32, 16777217, 2**30), "5_0", Mode.PRESERVE, CLIP1, 16777217, 2**30,
                 [(Code.BOUND_PRECISION, Severity.INFO)], id="preserve-int32-fl5-uses-clip1"),
    pytest.param(meaning(INT64, -(2**63), 2**63 - 1), "6_4", Mode.PRESERVE, CLIP, -(2.0**63), 2.0**63, [],
                 id="preserve-int64-extremes-clip-via-saturation"),
    pytest.param(meaning(INT64, -(2**63) + 1, 2**53 + 1), "6_4", Mode.PRESERVE, CLIP1, -(2**63) + 1, 2**53 + 1,
                 [(Code.BOUND_PRECISION, Severity.INFO)], id="preserve-int64-clip1"),
    pytest.param(meaning(INT32, -(2**31), 2**31 - 1), "2_1", Mode.PRESERVE, CLIP, -2147483648.0, 2147483648.0,
                 [], id="preserve-int32-extremes-via-saturation"),
    pytest.param(meaning(FLOAT16, 0.0999755859375, 65504.0), "1_0", Mode.PRESERVE, CLIP, 0.0999755859375,
                 65504.0, [], id="preserve-float16-exact-float"),
    pytest.param(meaning(INT8, 5, 1), "6_4", Mode.PRESERVE, CLIP, 1.0, 1.0,
                 [(Code.MIN_GREATER_THAN_MAX, Severity.INFO)], id="preserve-max-wins-crossed"),
    pytest.param(meaning(INT8, 5, 1, order=Order.MIN_WINS), "6_4", Mode.PRESERVE, CLIP, 5.0, 5.0,
                 [(Code.MIN_GREATER_THAN_MAX, Severity.INFO)], id="preserve-min-wins-crossed"),
    pytest.param(meaning(INT8, 5, 1), "6_4", Mode.LITERAL, CLIP, 5, 1, [], id="literal-crossed-kept"),
])
def test_emit(src, level, mode, op, exp_min, exp_max, exp_codes):
    e = dm_emit.emit(src, target(level), mode, [2, 2, 2, 2])
    assert not e.unsupported
    assert e.spec["operator"] == op and e.spec["feature_level"] == level
    assert same(dmin(e), exp_min) and same(dmax(e), exp_max), e.spec["desc"]
    assert [(f.code, f.severity) for f in e.notes] == exp_codes
    if op == CLIP1:
        assert e.spec["desc"]["MinMaxDataType"] == dml_name(src.dtype)
        assert (e.meaning.lo, e.meaning.hi) == (src.lo, src.hi)


@pytest.mark.parametrize("shape, level, mode, sizes, code", [
    pytest.param([2, 3], "2_1", Mode.PRESERVE, [1, 1, 2, 3], Code.RANK_UNSUPPORTED, id="fl2.1-pads-to-4"),
    pytest.param([2, 3], "3_0", Mode.PRESERVE, [2, 3], None, id="fl3.0-keeps"),
    pytest.param([2, 3, 4, 5, 6], "1_0", Mode.PRESERVE, [6, 4, 5, 6],
                 Code.RANK_UNSUPPORTED, id="fl1.0-folds-to-4"),
    pytest.param([1, 2, 1, 2, 1, 2, 1, 2, 3], "3_0", Mode.PRESERVE, [2, 1, 2, 1, 2, 1, 2, 3], Code.RANK_UNSUPPORTED,
                 id="fl3.0-folds-nine-to-eight"),
    pytest.param(None, "2_1", Mode.PRESERVE, [1, 1, 1, 1], Code.SHAPE_UNKNOWN, id="no-shape-placeholder-4d"),
    pytest.param(["N", 3], "6_4", Mode.PRESERVE, [1], Code.SHAPE_UNKNOWN, id="symbolic-shape-placeholder"),
])
def test_emit_sizes(shape, level, mode, sizes, code):
    e = dm_emit.emit(meaning(FLOAT32, 0.0, 1.0), target(level), mode, shape)
    assert e.spec["desc"]["InputTensor"]["Sizes"] == sizes
    assert e.spec["desc"]["OutputTensor"]["Sizes"] == sizes
    assert [f.code for f in e.notes] == ([code] if code else [])
    count = int(np.prod(sizes))
    assert e.spec["desc"]["InputTensor"]["TotalTensorSizeInBytes"] == (count * 4 + 3) // 4 * 4


@pytest.mark.parametrize("src, shape, level, mode, code, fragment", [
    pytest.param(meaning(BFLOAT16, 0.0, 1.0), [4], "6_4", Mode.PRESERVE, Code.DTYPE_UNSUPPORTED,
                 "has no bfloat16 tensors; no feature level has them", id="bfloat16"),
    pytest.param(meaning(FLOAT64, 0.0, 1.0), [4], "6_4", Mode.PRESERVE, Code.DTYPE_UNSUPPORTED,
                 "has no float64 tensors", id="float64"),
    pytest.param(meaning(INT64, 0, 1), [4], "3_0", Mode.PRESERVE, Code.DTYPE_UNSUPPORTED,
                 "FL 3.0 has no int64 tensors; FL 5.0 and later do", id="int64-fl3"),
    pytest.param(meaning(UINT8, 0, 1), [4], "1_0", Mode.PRESERVE, Code.DTYPE_UNSUPPORTED,
                 "FL 1.0 has no uint8 tensors; FL 2.1 and later do", id="uint8-fl1"),
    pytest.param(meaning(FLOAT32, 0.0, 1.0), [2, 3], "2_1", Mode.LITERAL, Code.RANK_UNSUPPORTED,
                 "cannot take shape [2, 3] (2 dimensions)", id="literal-rank"),
    pytest.param(meaning(FLOAT32, 0.0, 1.0), [2, 0], "6_4", Mode.PRESERVE, Code.RANK_UNSUPPORTED,
                 "a zero size", id="zero-size"),
    pytest.param(meaning(INT8, math.nan, 1), [4], "6_4", Mode.PRESERVE, Code.NAN_BOUND,
                 "NaN bound on an integer tensor", id="nan-on-int"),
])
def test_emit_unsupported(src, shape, level, mode, code, fragment):
    e = dm_emit.emit(src, target(level), mode, shape)
    assert e.unsupported and e.meaning is None
    assert e.notes[-1].code is code and fragment in e.notes[-1].message


def test_emit_default_level_is_newest():
    e = dm_emit.emit(meaning(FLOAT32, 0.0, 1.0), target(), Mode.PRESERVE, [4])
    assert e.spec["feature_level"] == NEWEST_LEVEL == "6_4"


def test_emit_round_trips_through_resolve():
    e = dm_emit.emit(meaning(INT32, 16777217, 2**30), target("5_0"), Mode.PRESERVE, [4])
    again = dm.resolve(DirectMLSpec.model_validate(e.spec))
    assert (again.lo, again.hi, again.order) == (16777217, 2**30, Order.MIN_WINS)


# --- the C++ snippet ------------------------------------------------------------------------------------------

def cpp(src, level="6_4", mode=Mode.PRESERVE, shape=(1, 1, 2, 3)) -> str:
    return dm_emit.emit(src, target(level), mode, list(shape)).artifacts["cpp"]


def hexfloat(snippet: str, field: str) -> float:
    m = re.search(rf"clipDesc\.{field} = (-?0x[0-9a-f.]+p[+-]\d+)f", snippet)
    assert m, snippet
    return float.fromhex(m.group(1))


def test_cpp_clip_float16():
    s = cpp(meaning(FLOAT16, 0.0999755859375, 6.0))
    for line in ["UINT sizes[4] = {1, 1, 2, 3};", "DML_BUFFER_TENSOR_DESC bufferDesc = {};",
                 "bufferDesc.DataType = DML_TENSOR_DATA_TYPE_FLOAT16;", "bufferDesc.Flags = DML_TENSOR_FLAG_NONE;",
                 "bufferDesc.DimensionCount = 4;", "bufferDesc.TotalTensorSizeInBytes = 12;",
                 "DML_TENSOR_DESC tensorDesc = { DML_TENSOR_TYPE_BUFFER, &bufferDesc };",
                 "DML_ELEMENT_WISE_CLIP_OPERATOR_DESC clipDesc = {};", "clipDesc.ScaleBias = nullptr;",
                 "DML_OPERATOR_DESC opDesc = { DML_OPERATOR_ELEMENT_WISE_CLIP, &clipDesc };",
                 "// Feature level: DML_FEATURE_LEVEL_6_4"]:
        assert line in s, line
    assert hexfloat(s, "Min") == 0.0999755859375 and hexfloat(s, "Max") == 6.0
    assert "CLIP1" not in s


def test_cpp_clip1_int32():
    s = cpp(meaning(INT32, 16777217, 2**31 - 1), "5_0")
    for line in ["DML_ELEMENT_WISE_CLIP1_OPERATOR_DESC clipDesc = {};",
                 "clipDesc.MinMaxDataType = DML_TENSOR_DATA_TYPE_INT32;",
                 "clipDesc.Min.Int32 = 16777217;", "clipDesc.Max.Int32 = 2147483647;",
                 "DML_OPERATOR_DESC opDesc = { DML_OPERATOR_ELEMENT_WISE_CLIP1, &clipDesc };",
                 "bufferDesc.TotalTensorSizeInBytes = 24;"]:
        assert line in s, line


@pytest.mark.parametrize("src, lines", [
    pytest.param(meaning(INT64, -(2**63), 2**53 + 1), ["clipDesc.Min.Int64 = INT64_MIN;",
                                                       "clipDesc.Max.Int64 = 9007199254740993LL;"], id="int64"),
    pytest.param(meaning(INT64, -(2**53) - 1, 2**63 - 1), ["clipDesc.Min.Int64 = -9007199254740993LL;",
                                                           "clipDesc.Max.Int64 = 9223372036854775807LL;"],
                 id="int64-max"),
    pytest.param(meaning(UINT64, 2**40 + 1, 2**64 - 1), ["clipDesc.Min.UInt64 = 1099511627777ULL;",
                                                         "clipDesc.Max.UInt64 = 18446744073709551615ULL;"],
                 id="uint64"),
])
def test_cpp_clip1_64_bit_literals(src, lines):
    s = cpp(src)
    for line in lines:
        assert line in s


def test_cpp_infinities_and_scale_bias():
    s = cpp(meaning(FLOAT32, -math.inf, math.inf, scale_bias=ScaleBias(0.5, 1.0)))
    assert "clipDesc.Min = -std::numeric_limits<float>::infinity();" in s
    assert "clipDesc.Max = std::numeric_limits<float>::infinity();" in s
    assert "DML_SCALE_BIAS scaleBias = { 0x1.0000000000000p-1f /* 0.5 */, 0x1.0000000000000p+0f /* 1.0 */ };" in s
    assert "clipDesc.ScaleBias = &scaleBias;" in s


def test_cpp_literal_out_of_float_range_is_valid_cpp():
    """Literal mode copies a Min/Max beyond FLT_MAX; the FLOAT it becomes (inf) must be written as valid C++."""
    s = cpp(meaning(FLOAT32, -math.inf, math.inf, lo_given=-1e39, hi_given=1e39), mode=Mode.LITERAL)
    assert "inff" not in s, s
    assert "clipDesc.Min = -std::numeric_limits<float>::infinity();" in s
    assert "clipDesc.Max = std::numeric_limits<float>::infinity();" in s


def test_cpp_hex_floats_round_trip_every_float32_bound():
    for v in (float(np.float32(0.1)), -2.5, 3.4028234663852886e38, float(np.float32(1e-45)), -0.0):
        s = cpp(meaning(FLOAT32, v, v))
        assert hexfloat(s, "Min") == v and math.copysign(1, hexfloat(s, "Min")) == math.copysign(1, v)


def test_translate_reports_directml_as_source():
    r = translate(spec("2_1", CLIP, "INT8", -1.7, 1.9), ["onnx"])
    assert (r.meaning.lo, r.meaning.hi) == (-1, 1)
    assert r.source["desc"]["InputTensor"]["TotalTensorSizeInBytes"] == 4


@pytest.mark.parametrize("dt", [pytest.param(d, id=d.name) for d in ALL_DTYPES])
def test_dml_type_names_round_trip(dt):
    """DirectML's DML_TENSOR_DATA_TYPE names (its own table; core's DType has no DirectML column)."""
    name = dml_name(dt)
    if dt is BFLOAT16:
        assert name is None  # DML_TENSOR_DATA_TYPE has no bfloat16
    else:
        assert by_dml_name(name) is dt and name == dt.name.upper()
