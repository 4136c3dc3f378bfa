"""The oracle itself (tests/oracle.py, tests/oracle_meaning.py): checked against ONNX's own published Clip test
data, NumPy's and ml_dtypes' conversions, and the sentences of the spec texts, so that a wrong oracle fails here
before it passes or fails anything else. Nothing here imports clipbridge."""

from __future__ import annotations

import math
import random

import ml_dtypes
import numpy as np
import pytest

from tests import oracle
from tests.oracle_meaning import int_to_float

ONNX_NAMES = {np.dtype(np.float32): "FLOAT", np.dtype(np.int8): "INT8", np.dtype(np.float16): "FLOAT16"}


def _onnx_backend_cases() -> list:
    from onnx.backend.test.case.node import collect_testcases
    with np.errstate(all="ignore"):
        cases = [c for c in collect_testcases("Clip") if not c.name.endswith("_expanded")]
    return [pytest.param(c, id=c.name) for c in cases]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("case", _onnx_backend_cases())
def test_onnx_backend_clip_cases(case):
    """ONNX's own node tests (shipped in the onnx wheel): the oracle computes each expected output."""
    node = case.model.graph.node[-1]
    names = [i.name for i in case.model.graph.input]
    inputs, outputs = case.data_sets[0]
    given = dict(zip(names, inputs))
    x = given["x"]
    spec = {"dialect": "onnx", "opset": case.model.opset_import[0].version, "elem_type": ONNX_NAMES[x.dtype]}
    for side, name in zip(("min", "max"), list(node.input[1:]) + ["", ""]):
        spec[side] = given[name].item() if name else None
    got = oracle.outputs(spec, x.reshape(-1))
    assert oracle.same(got, outputs[0].reshape(-1)).all(), (spec, got, outputs[0])


def test_round_float_agrees_with_numpy_and_ml_dtypes():
    """Nearest, ties to even, overflow to inf: NumPy's float64 -> float16/float32 casts are correctly rounded, and
    so is ml_dtypes' float32 -> bfloat16 (float32 inputs: one rounding)."""
    rng = random.Random(3)
    doubles = [rng.uniform(-1e5, 1e5) for _ in range(3000)] + [rng.uniform(-1e-6, 1e-6) for _ in range(1000)]
    halves = oracle.all_values("float16").astype(np.float64)
    finite = halves[np.isfinite(halves)]
    doubles += list((finite[:-1] + finite[1:]) / 2)[::50]  # exact ties
    doubles += [65504.0, 65519.99, 65520.0, -65520.0, 1e-8, 5.9604644775390625e-08 / 2]
    for t, np_t in (("float16", np.float16), ("float32", np.float32)):
        want = np.asarray(doubles).astype(np_t).astype(np.float64)
        got = np.asarray([oracle.round_float(d, t) for d in doubles])
        assert oracle.same(got, want).all(), t
    f32 = np.asarray(doubles, np.float32)
    want = f32.astype(ml_dtypes.bfloat16).astype(np.float64)
    got = np.asarray([oracle.round_float(float(v), "bfloat16") for v in f32])
    assert oracle.same(got, want).all()


def test_int_to_float_is_round_float():
    rng = random.Random(5)
    ints = [rng.randrange(-2**63, 2**63) for _ in range(2000)] + [2**24 + 1, 2**24 + 3, -2**63, 2**63 - 1, 65520]
    for t in ("float16", "bfloat16", "float32", "float64"):
        with np.errstate(over="ignore"):
            got = int_to_float(np.asarray(ints, np.int64), t)
        assert np.array_equal(got, [oracle.round_float(i, t) for i in ints]), t


def onnx(opset, t, lo, hi):
    return {"dialect": "onnx", "opset": opset, "elem_type": t, "min": lo, "max": hi}


def ov(t, lo, hi):
    return {"dialect": "openvino", "element_type": t, "min": lo, "max": hi}


def dml(t, lo, hi, op="DML_OPERATOR_ELEMENT_WISE_CLIP"):
    tensor = {"DataType": t, "Sizes": [1, 1, 1, 4]}
    return {"dialect": "directml", "operator": op, "desc": {"InputTensor": tensor, "Min": lo, "Max": hi}}


@pytest.mark.parametrize("spec, reading, lo, hi", [
    # onnx-clip.txt, Clip-6: "max - FLOAT (default is (3.402823e+38))": FLT_MAX overflows float16 to inf
    pytest.param(onnx(6, "FLOAT16", None, None), "current", -math.inf, math.inf, id="onnx6-f16-defaults"),
    # Clip-11+: "They default to numeric_limits::lowest() and numeric_limits::max()"
    pytest.param(onnx(13, "FLOAT16", None, None), "current", -65504.0, 65504.0, id="onnx13-f16-defaults"),
    pytest.param(onnx(12, "INT8", None, 5), "current", -128, 5, id="onnx12-int8-default-min"),
    # openvino-clamp-1.rst: "ceil is used to convert min ... floor is used to convert max"
    pytest.param(ov("i8", 1.5, 4.5), "current", 2, 4, id="openvino-ceil-floor"),
    pytest.param(ov("u8", -0.7, -0.2), "current", 0, 0, id="openvino-saturated"),
    # directml remarks: "cast to the tensor data type (... integers means truncating toward zero)"
    pytest.param(dml("INT8", 1.7, -1.7), "current", 1, -1, id="directml-truncates"),
    pytest.param(dml("FLOAT16", 0.1, 70000.0), "current", 0.0999755859375, math.inf, id="directml-f16-nearest"),
])
def test_bounds_as_the_texts_state(spec, reading, lo, hi):
    c = oracle.clip_of(spec, reading)
    assert (c.lo, c.hi) == (lo, hi)


@pytest.mark.parametrize("spec, reading, want", [
    # onnx-clip.txt, Clip-13: "When 'min' is greater than 'max', the clip operator sets all ... to ... 'max'"
    pytest.param(onnx(13, "FLOAT", 5.0, 1.0), "current", [1.0, 1.0, 1.0], id="onnx13-crossed-gives-max"),
    # directml current page f(x) = max(Min, min(x, Max)); the 2022 page min(Max, max(Min, x))
    pytest.param(dml("FLOAT32", 5.0, 1.0), "current", [5.0, 5.0, 5.0], id="directml-current-gives-min"),
    pytest.param(dml("FLOAT32", 5.0, 1.0), "2022", [1.0, 1.0, 1.0], id="directml-2022-gives-max"),
    # openvino formula min(max(x, min), max) once ceil/floor cross the bounds: max
    pytest.param(ov("i32", 2.2, 2.7), "current", [2, 2, 2], id="openvino-crossed-by-rounding"),
])
def test_crossed_bounds_as_the_texts_state(spec, reading, want):
    t = oracle.clip_of(spec).out
    x = np.asarray([-10, 3, 10], dtype=oracle.NP[t])
    assert oracle.outputs(spec, x, reading).tolist() == want


@pytest.mark.parametrize("spec", [
    pytest.param(ov("f32", 5.0, 1.0), id="openvino-min-gt-max"),
    pytest.param(ov("f32", "nan", 1.0), id="openvino-nan"),
    pytest.param(onnx(12, "INT8", 0.5, 3), id="onnx12-int8-fraction"),
    pytest.param(onnx(11, "INT8", 0, 3), id="onnx11-takes-no-int8"),
    pytest.param(onnx(12, "BFLOAT16", 0, 3), id="onnx12-takes-no-bfloat16"),
])
def test_the_texts_refuse(spec):
    with pytest.raises(oracle.Refused):
        oracle.clip_of(spec)
