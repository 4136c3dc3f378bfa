"""Drift findings, one table per code: source spec -> translate() -> the code, the status, and real witnesses."""

from __future__ import annotations

import base64
import math
import re

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from clipbridge.dialects.kit.common import Mode
from clipbridge.core.drift import critical_points, status_of
from clipbridge.core.findings import Code, Severity
from clipbridge.core.evaluate import evaluate
from clipbridge.core.meaning import Order, same_outputs
from clipbridge.dialects.pytorch.spec import PyTorchSpec
from clipbridge.dialects.stablehlo.spec import StableHloSpec
from clipbridge.dialects.directml.spec import DirectMLSpec, DirectMLTarget
from clipbridge.dialects.onnx.spec import OnnxSpec, OnnxTarget
from clipbridge.dialects.openvino.spec import OpenVinoSpec, OpenVinoTarget
from clipbridge.service.translate import translate

P, L = Mode.PRESERVE, Mode.LITERAL
EXACT, DRIFT, UNSUPPORTED = "exact", "drift", "unsupported"


def onnx(opset, et, mn=None, mx=None, shape=None):
    return OnnxSpec(dialect="onnx", opset=opset, elem_type=et, min=mn, max=mx, shape=shape)


def ov(et, mn, mx, shape=None):
    return OpenVinoSpec(dialect="openvino", element_type=et, min=mn, max=mx, shape=shape)


def dml(dt, mn, mx, level="6_4", op="ELEMENT_WISE_CLIP", sizes=(1, 1, 1, 4), strides=None, **desc):
    t = {"DataType": dt, "Sizes": list(sizes)}
    if strides is not None:
        t["Strides"] = list(strides)
    d = {"InputTensor": t, "OutputTensor": {"DataType": dt, "Sizes": list(sizes)}, "Min": mn, "Max": mx, **desc}
    if op == "ELEMENT_WISE_CLIP1":
        d["MinMaxDataType"] = dt
    return DirectMLSpec(dialect="directml", feature_level=level, operator=op, desc=d)


def shlo(et, mn, mx, shape=None):
    return StableHloSpec(dialect="stablehlo", element_type=et, min=mn, max=mx, shape=shape)


def O(opset=None):  # noqa: E743
    return OnnxTarget(dialect="onnx", opset=opset)


def V(version=None):
    return OpenVinoTarget(dialect="openvino", version=version)


def D(level=None):
    return DirectMLTarget(dialect="directml", feature_level=level)


def graph_input_model() -> OnnxSpec:
    """An ONNX model whose Clip min is a graph input: computed at run time."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    lo = helper.make_tensor_value_info("lo", TensorProto.FLOAT, [])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])
    hi = numpy_helper.from_array(np.array(6.0, np.float32), "hi")
    g = helper.make_graph([helper.make_node("Clip", ["x", "lo", "hi"], ["y"])], "g", [x, lo], [y], [hi])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=7)
    return OnnxSpec(dialect="onnx", model=base64.b64encode(m.SerializeToString()).decode())


# (source, target, mode, code, status, severity of that code's finding, witness expected: True/False/None)
CASES = [
    # bound-rounding
    pytest.param(ov("i8", 1.5, 100), D(), L, Code.BOUND_ROUNDING, DRIFT, Severity.ERROR, True,
                 id="rounding-openvino-ceil-vs-directml-truncate"),
    pytest.param(dml("INT8", -100, -1.5), V(), L, Code.BOUND_ROUNDING, DRIFT, Severity.ERROR, True,
                 id="rounding-directml-truncate-vs-openvino-floor"),
    pytest.param(ov("i16", 0.5, 6.5), O(13), L, Code.BOUND_ROUNDING, DRIFT, Severity.WARNING, True,
                 id="rounding-openvino-ceil-vs-onnx-literal-truncate"),
    # bound-saturation
    pytest.param(dml("INT32", 2147483600, 2147483647), O(13), L, Code.BOUND_SATURATION, DRIFT, Severity.ERROR,
                 True, id="saturation-directml-float-2^31-saturates-vs-onnx"),
    pytest.param(dml("INT32", 2147483600, 2147483647), V(), L, Code.BOUND_SATURATION, DRIFT, Severity.ERROR,
                 True, id="saturation-directml-float-2^31-saturates-vs-openvino"),
    pytest.param(ov("i8", -1000, 1000), O(12), L, Code.BOUND_SATURATION, DRIFT, Severity.WARNING, False,
                 id="saturation-onnx-literal-writes-saturated-values"),
    # bound-precision
    pytest.param(onnx(13, "INT32", 16777217, 2**30), D("3_0"), P, Code.BOUND_PRECISION, DRIFT, Severity.ERROR,
                 True, id="precision-int32-beyond-2^24-fl3-has-no-clip1"),
    pytest.param(onnx(13, "INT32", 16777217, 2**30), D("6_4"), L, Code.BOUND_PRECISION, DRIFT, Severity.ERROR,
                 True, id="precision-int32-literal-float-min"),
    pytest.param(onnx(13, "INT32", 16777217, 2**30), D("5_0"), P, Code.BOUND_PRECISION, EXACT, Severity.INFO,
                 False, id="precision-int32-fl5-switches-to-clip1"),
    pytest.param(onnx(13, "INT64", 2**53 + 1, 2**60), V(), P, Code.BOUND_PRECISION, DRIFT, Severity.ERROR, True,
                 id="precision-int64-beyond-double-attribute"),
    pytest.param(onnx(13, "DOUBLE", 0.1, 1.0), O(6), P, Code.BOUND_PRECISION, DRIFT, Severity.ERROR, True,
                 id="precision-double-into-clip6-float-attribute"),
    pytest.param(onnx(13, "DOUBLE", 0.1, 1.0), O(6), L, Code.BOUND_PRECISION, DRIFT, Severity.ERROR, True,
                 id="precision-double-literal-clip6"),
    # default-bound
    pytest.param(onnx(6, "DOUBLE"), O(13), L, Code.DEFAULT_BOUND, DRIFT, Severity.ERROR, True,
                 id="default-clip6-double-flt-max-vs-clip13-dbl-max"),
    pytest.param(onnx(6, "FLOAT16"), O(13), L, Code.DEFAULT_BOUND, DRIFT, Severity.ERROR, True,
                 id="default-clip6-float16-inf-vs-clip13-65504"),
    pytest.param(onnx(13, "FLOAT16", 0), O(6), L, Code.DEFAULT_BOUND, DRIFT, Severity.ERROR, True,
                 id="default-clip13-float16-max-vs-clip6-inf"),
    # min-greater-than-max
    pytest.param(onnx(13, "INT8", 5, 1), V(), L, Code.MIN_GREATER_THAN_MAX, UNSUPPORTED, Severity.ERROR, False,
                 id="crossed-openvino-refuses"),
    pytest.param(onnx(13, "INT8", 5, 1), V(), P, Code.MIN_GREATER_THAN_MAX, EXACT, Severity.INFO, False,
                 id="crossed-openvino-preserve-min-equals-max"),
    pytest.param(onnx(13, "INT8", 5, 1), D(), L, Code.MIN_GREATER_THAN_MAX, DRIFT, Severity.ERROR, True,
                 id="crossed-onnx-max-vs-directml-current-doc-min"),
    pytest.param(onnx(13, "FLOAT", 2.5, -1.0), D(), P, Code.MIN_GREATER_THAN_MAX, DRIFT, Severity.INFO, False,
                 id="crossed-onnx-float-to-directml-preserve"),
    # DirectML CLIP's min > max: the current doc's meaning (Min) is emitted exactly; the 2022 doc's (Max, its
    # alternate) drifts, with a witness under that reading.
    pytest.param(dml("INT8", 5, 1), O(13), P, Code.MIN_GREATER_THAN_MAX, DRIFT, Severity.ERROR, True,
                 id="crossed-directml-2022-doc-to-onnx"),
    pytest.param(dml("INT8", 5, 1), V(), P, Code.MIN_GREATER_THAN_MAX, DRIFT, Severity.ERROR, True,
                 id="crossed-directml-2022-doc-to-openvino"),
    pytest.param(dml("INT8", 5, 1), D(), P, Code.MIN_GREATER_THAN_MAX, DRIFT, Severity.ERROR, True,
                 id="crossed-directml-2022-doc-to-directml-preserve"),
    pytest.param(dml("INT8", 5, 1, level="5_0", op="ELEMENT_WISE_CLIP1"), O(13), L, Code.MIN_GREATER_THAN_MAX,
                 DRIFT, Severity.ERROR, True, id="crossed-clip1-min-wins-vs-onnx-max-wins"),
    pytest.param(dml("INT8", 5, 1, level="5_0", op="ELEMENT_WISE_CLIP1"), O(13), P, Code.MIN_GREATER_THAN_MAX,
                 EXACT, Severity.INFO, False, id="crossed-clip1-preserve-min-equals-max"),
    # nan-input
    pytest.param(onnx(13, "FLOAT", 0, 6), D(), P, Code.NAN_INPUT, DRIFT, Severity.WARNING, False,
                 id="nan-input-onnx-propagates-directml-undocumented"),
    pytest.param(dml("FLOAT16", 0, 6), V(), P, Code.NAN_INPUT, DRIFT, Severity.WARNING, False,
                 id="nan-input-directml-to-openvino"),
    # nan-bound
    pytest.param(onnx(13, "FLOAT", "nan", 6), D(), P, Code.NAN_BOUND, DRIFT, Severity.ERROR, True,
                 id="nan-bound-onnx-all-nan-vs-directml-ignored"),
    pytest.param(dml("FLOAT32", "nan", 6), O(13), P, Code.NAN_BOUND, DRIFT, Severity.ERROR, True,
                 id="nan-bound-directml-ignored-vs-onnx-all-nan"),
    pytest.param(onnx(13, "FLOAT", "nan", 6), V(), P, Code.NAN_BOUND, UNSUPPORTED, Severity.ERROR, False,
                 id="nan-bound-openvino-preserve-refuses"),
    pytest.param(onnx(13, "FLOAT16", 0, "nan"), V(), L, Code.NAN_BOUND, UNSUPPORTED, Severity.ERROR, False,
                 id="nan-bound-openvino-literal-rejected"),
    # infinite-bound
    pytest.param(onnx(13, "FLOAT", "-inf", "inf"), V(), P, Code.INFINITE_BOUND, EXACT, Severity.INFO, False,
                 id="infinite-ir-attribute-note"),
    pytest.param(ov("i8", "-inf", 5), O(13), L, Code.INFINITE_BOUND, DRIFT, Severity.WARNING, False,
                 id="infinite-on-int-onnx-literal"),
    # float16-bound-overflow
    pytest.param(onnx(13, "FLOAT16", 0, 65519.999999), D(), L, Code.FLOAT16_BOUND_OVERFLOW, DRIFT, Severity.ERROR,
                 True, id="f16-overflow-directml-float-then-half-double-rounds"),
    pytest.param(onnx(13, "FLOAT16", 0, 65519.999999), O(6), L, Code.FLOAT16_BOUND_OVERFLOW, DRIFT,
                 Severity.ERROR, True, id="f16-overflow-clip6-float-attribute"),
    # dtype-unsupported
    pytest.param(onnx(13, "BFLOAT16", 0, 1), D(), P, Code.DTYPE_UNSUPPORTED, UNSUPPORTED, Severity.ERROR, False,
                 id="dtype-bfloat16-directml"),
    pytest.param(onnx(13, "DOUBLE", 0, 1), D(), P, Code.DTYPE_UNSUPPORTED, UNSUPPORTED, Severity.ERROR, False,
                 id="dtype-double-directml"),
    pytest.param(onnx(13, "INT8", 0, 1), O(11), P, Code.DTYPE_UNSUPPORTED, UNSUPPORTED, Severity.ERROR, False,
                 id="dtype-int8-onnx11"),
    pytest.param(onnx(13, "BFLOAT16", 0, 1), O(12), L, Code.DTYPE_UNSUPPORTED, UNSUPPORTED, Severity.ERROR, False,
                 id="dtype-bfloat16-onnx12"),
    pytest.param(ov("i64", 0, 1), D("4_1"), P, Code.DTYPE_UNSUPPORTED, UNSUPPORTED, Severity.ERROR, False,
                 id="dtype-int64-directml-fl4.1"),
    pytest.param(ov("u8", 0, 1), D("1_0"), P, Code.DTYPE_UNSUPPORTED, UNSUPPORTED, Severity.ERROR, False,
                 id="dtype-uint8-directml-fl1.0"),
    # version-unsupported
    pytest.param(onnx(13, "FLOAT", 0, 1), O(99), P, Code.VERSION_UNSUPPORTED, UNSUPPORTED, Severity.ERROR, False,
                 id="onnx-opset-beyond-installed-onnx"),
    # rank-unsupported
    pytest.param(onnx(13, "INT8", 0, 1, shape=[2, 3]), D("2_1"), P, Code.RANK_UNSUPPORTED, EXACT, Severity.INFO,
                 False, id="rank-2d-padded-for-fl2.1"),
    pytest.param(onnx(13, "INT8", 0, 1, shape=[1] * 9 + [2]), D("3_0"), P, Code.RANK_UNSUPPORTED, EXACT,
                 Severity.INFO, False, id="rank-10d-folded-for-fl3.0"),
    pytest.param(onnx(13, "INT8", 0, 1, shape=[2, 3]), D("2_1"), L, Code.RANK_UNSUPPORTED, UNSUPPORTED,
                 Severity.ERROR, False, id="rank-literal-refuses"),
    pytest.param(ov("u16", 0, 1, shape=[2, 0]), D("3_0"), P, Code.RANK_UNSUPPORTED, UNSUPPORTED, Severity.ERROR,
                 False, id="rank-zero-size"),
    # scale-bias
    pytest.param(dml("FLOAT32", 0, 6, ScaleBias={"Scale": 2, "Bias": 1}), O(13), P, Code.SCALE_BIAS, DRIFT,
                 Severity.INFO, False, id="scale-bias-float-to-onnx-nodes"),
    pytest.param(dml("FLOAT16", 0, 6, ScaleBias={"Scale": 0.5, "Bias": -1}), V(), P, Code.SCALE_BIAS, DRIFT,
                 Severity.INFO, False, id="scale-bias-float16-to-openvino-nodes"),
    pytest.param(dml("INT8", 0, 6, ScaleBias={"Scale": 0.5, "Bias": 1}), O(13), P, Code.SCALE_BIAS, UNSUPPORTED,
                 Severity.ERROR, False, id="scale-bias-int8-not-expressible-in-onnx"),
    pytest.param(dml("INT16", 0, 6, ScaleBias={"Scale": 0.5, "Bias": 1}), V(), L, Code.SCALE_BIAS, UNSUPPORTED,
                 Severity.ERROR, False, id="scale-bias-int16-not-expressible-in-openvino"),
    pytest.param(dml("FLOAT32", 0, 6, ScaleBias={"Scale": 2, "Bias": 1}), O(6), P, Code.SCALE_BIAS, UNSUPPORTED,
                 Severity.ERROR, False, id="scale-bias-clip6-has-no-broadcasting-mul"),
    pytest.param(dml("UINT8", 0, 6, ScaleBias={"Scale": 0.5, "Bias": 1}), D(), P, Code.SCALE_BIAS, DRIFT,
                 Severity.WARNING, False, id="scale-bias-int8-to-directml-still-ambiguous"),
    # strides
    pytest.param(dml("INT8", 0, 6, sizes=(1, 1, 2, 3), strides=(0, 0, 1, 2)), O(13), P, Code.STRIDES, EXACT,
                 Severity.INFO, False, id="strides-transposed-to-onnx"),
    pytest.param(dml("UINT16", 0, 6, sizes=(2, 3), strides=(0, 1)), V(), P, Code.STRIDES, EXACT, Severity.INFO,
                 False, id="strides-broadcast-to-openvino"),
    # dynamic-bounds
    pytest.param(graph_input_model(), V(), P, Code.DYNAMIC_BOUNDS, UNSUPPORTED, Severity.ERROR, False,
                 id="dynamic-graph-input-min"),
    pytest.param(graph_input_model(), D(), L, Code.DYNAMIC_BOUNDS, UNSUPPORTED, Severity.ERROR, False,
                 id="dynamic-graph-input-min-literal"),
    # engine-behaviour
    pytest.param(onnx(13, "INT64", 0, 6), V(), P, Code.ENGINE_BEHAVIOUR, EXACT, Severity.INFO, False,
                 id="engine-openvino-int64-in-32-bit"),
    pytest.param(onnx(13, "FLOAT", 0, 6), V(), P, Code.ENGINE_BEHAVIOUR, EXACT, Severity.INFO, False,
                 id="engine-openvino-nan-to-min"),
    pytest.param(onnx(13, "FLOAT", "nan", 6), O(12), P, Code.ENGINE_BEHAVIOUR, EXACT, Severity.INFO, False,
                 id="engine-onnxruntime-ignores-nan-bound"),
    # tensor-bounds
    pytest.param(shlo("i32", [5, 10, 15], [10, 15, 20], [3]), O(13), P, Code.TENSOR_BOUNDS, EXACT, Severity.INFO,
                 False, id="tensor-stablehlo-to-onnx-max-then-min"),
    pytest.param(shlo("f32", [0, "nan", 2], [1, 2, 1], [3]), O(18), L, Code.TENSOR_BOUNDS, EXACT, Severity.INFO,
                 False, id="tensor-stablehlo-nan-and-crossed-to-onnx18"),
    pytest.param(shlo("i32", [5, 10, 15], [10, 15, 20], [3]), D(), P, Code.TENSOR_BOUNDS, UNSUPPORTED,
                 Severity.ERROR, False, id="tensor-stablehlo-to-directml-scalars-only"),
    pytest.param(shlo("i32", [0, 1], 6, [2]), V(), P, Code.TENSOR_BOUNDS, EXACT, Severity.INFO, False,
                 id="tensor-stablehlo-to-openvino-maximum-then-minimum"),
    pytest.param(shlo("f32", [0, 1], 6, [2]), O(7), P, Code.TENSOR_BOUNDS, UNSUPPORTED, Severity.ERROR, False,
                 id="tensor-onnx7-has-no-broadcasting-max"),
    pytest.param(shlo("i16", [3, 3, 3], 9, [3]), D(), P, Code.TENSOR_BOUNDS, EXACT, Severity.INFO, False,
                 id="tensor-uniform-is-a-scalar-for-directml"),
    pytest.param(shlo("f64", [0.1, 0.1], 1.0, [2]), O(6), P, Code.TENSOR_BOUNDS, DRIFT, Severity.INFO, False,
                 id="tensor-uniform-scalar-then-clip6-drift"),
    pytest.param(onnx(13, "FLOAT"), O(11), L, Code.ENGINE_BEHAVIOUR, EXACT, Severity.INFO, False,
                 id="engine-onnx-reference-keeps-inf-for-absent-bound"),
    # dtype-promotion
    pytest.param(PyTorchSpec(dialect="pytorch", dtype="int32", min=1.5), O(13), P, Code.DTYPE_PROMOTION, DRIFT,
                 Severity.ERROR, True, id="promotion-pytorch-int32-float-min-vs-onnx-int32"),
    pytest.param(PyTorchSpec(dialect="pytorch", dtype="int32", min=1.5), O(13), L, Code.DTYPE_PROMOTION, DRIFT,
                 Severity.ERROR, True, id="promotion-pytorch-literal-onnx-truncates-like-torchscript"),
]


def check_witnesses(result, t) -> int:
    """Every witness reproduces under both meanings and really differs; returns how many were checked."""
    src, tgt = result.meaning, t.meaning
    n = 0
    for f in t.findings:
        w = f.witness
        if w is None:
            continue
        assert tgt is not None, f
        dt = src.dtype
        x = dt.array([w.input])
        named = re.match(r"under the (\S+) reading: ", f.message)  # a witness of that reading's meanings
        reading = named.group(1) if named else None
        ys, yt = evaluate(src.under(reading), x), evaluate(tgt.under(reading), x)
        if src.has_tensor_bounds or tgt.has_tensor_bounds:
            # The witness holds at some position of the per-element clip: x there gives both outputs.
            ys, yt = np.broadcast_arrays(ys, yt)
            at = (same_outputs(ys, src.out_dtype.array([w.source_output]))
                  & same_outputs(yt, tgt.out_dtype.array([w.target_output])))
            assert (at & ~same_outputs(ys, yt)).any(), (f.code, w, ys, yt)
            n += 1
            continue
        # Each output in its own dtype (a promoting source returns float32 for an int32 input).
        assert same_outputs(ys, src.out_dtype.array([w.source_output]))[0], (f.code, w, ys)
        assert same_outputs(yt, tgt.out_dtype.array([w.target_output]))[0], (f.code, w, yt)
        assert not same_outputs(ys, yt)[0], (f.code, w)
        n += 1
    return n


@pytest.mark.parametrize("source, target, mode, code, status, severity, witness", CASES)
def test_finding(source, target, mode, code, status, severity, witness):
    r = translate(source, [target], mode)
    t = r.translations[0]
    found = [f for f in t.findings if f.code is code]
    assert found, f"{code.value} not in {[f.code.value for f in t.findings]}"
    assert t.status == status, [(f.code.value, f.severity.value, f.message) for f in t.findings]
    assert severity in {f.severity for f in found}, [(f.severity.value, f.message) for f in found]
    if witness is True:
        assert any(f.witness is not None for f in found), found
    elif witness is False:
        assert all(f.witness is None for f in found), found
    check_witnesses(r, t)


@pytest.mark.parametrize("source, target, mode, code, status, severity, witness", CASES)
def test_status_agrees_with_findings(source, target, mode, code, status, severity, witness):
    t = translate(source, [target], mode).translations[0]
    assert t.status == status_of(t.findings, t.status == UNSUPPORTED)
    if t.status == EXACT:
        assert all(f.severity is Severity.INFO for f in t.findings if f.code is not Code.ENGINE_BEHAVIOUR)


def test_every_code_is_covered_by_a_case():
    wanted = set(Code) - {Code.SHAPE_UNKNOWN}
    covered = {p.values[3] for p in CASES if not p.marks}
    assert wanted <= covered, wanted - covered



# (source, target, mode, code that must NOT appear, status)
ABSENT = [
    pytest.param(ov("u8", 1.5, 6.5), D(), P, Code.BOUND_ROUNDING, EXACT, id="rounding-preserve-writes-effective-ints"),
    pytest.param(onnx(6, "DOUBLE"), O(13), P, Code.DEFAULT_BOUND, EXACT, id="default-preserve-writes-it-explicitly"),
    pytest.param(onnx(13, "FLOAT", "nan", 6), O(12), P, Code.NAN_BOUND, EXACT, id="nan-bound-both-propagate"),
    pytest.param(dml("INT8", 0, 6, sizes=(1, 1, 2, 3), strides=(6, 6, 3, 1)), O(13), P, Code.STRIDES, EXACT,
                 id="packed-strides-are-dense"),
    pytest.param(onnx(13, "INT8", 0, 6), D(), P, Code.NAN_INPUT, EXACT, id="no-nan-on-integers"),
    pytest.param(onnx(13, "INT8", 0, 6, shape=[2, 3]), D("3_0"), P, Code.RANK_UNSUPPORTED, EXACT,
                 id="rank-2-fine-on-fl3.0"),
    pytest.param(onnx(13, "UINT8", 3, 3), V(), L, Code.MIN_GREATER_THAN_MAX, EXACT, id="equal-bounds-not-crossed"),
]


@pytest.mark.parametrize("source, target, mode, code, status", ABSENT)
def test_no_finding(source, target, mode, code, status):
    r = translate(source, [target], mode)
    t = r.translations[0]
    assert code not in {f.code for f in t.findings}, t.findings
    assert t.status == status, [(f.code.value, f.severity.value, f.message) for f in t.findings]
    check_witnesses(r, t)


# --- specific witnesses -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("source, target, mode, code, expected", [
    pytest.param(ov("i8", 1.5, 100), D(), L, Code.BOUND_ROUNDING, (1, 2, 1), id="rounding-at-the-bound"),
    pytest.param(dml("INT32", 2147483600, 2147483647), O(13), L, Code.BOUND_SATURATION,
                 (2147483646, 2147483647, 2147483646), id="saturation-just-below-max"),
    pytest.param(onnx(13, "INT32", 16777217, 2**30), D("3_0"), P, Code.BOUND_PRECISION,
                 (16777216, 16777217, 16777216), id="precision-at-2^24"),
    pytest.param(onnx(6, "FLOAT16"), O(13), L, Code.DEFAULT_BOUND, (-math.inf, -math.inf, -65504.0),
                 id="default-minus-inf"),
    pytest.param(onnx(13, "FLOAT16", 0, 65519.999999), D(), L, Code.FLOAT16_BOUND_OVERFLOW,
                 (math.inf, 65504.0, math.inf), id="overflow-inf-input"),
    pytest.param(PyTorchSpec(dialect="pytorch", dtype="int32", min=1.5), O(13), P, Code.DTYPE_PROMOTION,
                 (-2147483648, 1.5, 2), id="promotion-float32-fraction-vs-int32-ceil"),
])
def test_witness_values(source, target, mode, code, expected):
    t = translate(source, [target], mode).translations[0]
    w = next(f.witness for f in t.findings if f.code is code and f.witness is not None)
    assert (w.input, w.source_output, w.target_output) == expected


def test_ambiguous_source_is_not_exact_under_the_other_reading():
    """An exact claim is a promise for every input; an ambiguous DirectML min > max has two documented outputs."""
    r = translate(dml("INT8", 5, 1), [D()], P)
    t = r.translations[0]
    x = r.meaning.dtype.all_values()
    ys, yt = evaluate(r.meaning.under("2022-doc"), x), evaluate(t.meaning.under("2022-doc"), x)
    differs = not same_outputs(ys, yt).all()
    assert differs
    assert t.status != EXACT, [(f.code.value, f.severity.value, f.message) for f in t.findings]


def test_crossed_directml_to_directml_literal_is_exact_under_both_readings():
    """The same CLIP desc on both sides: each document's formula gives both sides the same output."""
    r = translate(dml("INT8", 5, 1), [D()], L)
    t = r.translations[0]
    assert t.status == EXACT, [(f.code.value, f.severity.value, f.message) for f in t.findings]
    x = r.meaning.dtype.all_values()
    for reading in ("current-doc", "2022-doc"):
        assert same_outputs(evaluate(r.meaning.under(reading), x), evaluate(t.meaning.under(reading), x)).all()


def test_cross_dialect_scale_bias_precision_warning_is_reported():
    """compare() warns that DirectML does not document ScaleBias precision; the merged findings keep that warning."""
    t = translate(dml("FLOAT32", 0, 6, ScaleBias={"Scale": 2, "Bias": 1}), [O(13)], P).translations[0]
    sb = [f for f in t.findings if f.code is Code.SCALE_BIAS]
    assert any(f.severity is not Severity.INFO for f in sb), [(f.severity.value, f.message) for f in sb]


def test_crossed_readings_are_named():
    r = translate(dml("INT8", 5, 1), [O(13)], P)
    f = [f for f in r.translations[0].findings if f.code is Code.MIN_GREATER_THAN_MAX][-1]
    assert r.meaning.order is Order.MIN_WINS and [name for name, _ in r.meaning.alternates] == ["2022-doc"]
    assert r.meaning.readings == ("current-doc: max(Min, min(x, Max))", "2022-doc: min(Max, max(Min, x))")
    assert f.message.startswith("under the 2022-doc reading: ")


def test_critical_points_include_bounds_and_neighbours():
    r = translate(onnx(13, "INT8", 5, 9), [V()], P)
    pts = set(critical_points(r.meaning.dtype, [r.meaning]).tolist())
    assert {4, 5, 6, 8, 9, 10, -128, 127, 0} <= pts


def test_witness_json_is_wire_safe():
    t = translate(onnx(6, "FLOAT16"), [O(13)], L).translations[0]
    w = next(f for f in t.findings if f.witness is not None).witness.to_json()
    assert w.pop("reading") is None  # the default readings (issue 37: readings are data)
    assert all(isinstance(v, (int, float, str)) for v in w.values())
    assert "inf" in (w["input"], w["source_output"]) or "-inf" in (w["input"], w["source_output"])


# --- per-element (tensor) bounds ----------------------------------------------------------------------------------

def test_tensor_witness_names_its_position():
    """Bounds compared position by position: a finding says where, and its witness holds at that position."""
    t = translate(shlo("f64", [1.0, 0.1], [0.1, 2.0], [2]), [O(6)], P).translations[0]
    assert t.status == UNSUPPORTED  # distinct elements: Clip-6 cannot take them (no broadcasting Max before 8)
    r = translate(shlo("f64", [0.1, 0.1], [2.0, 3.0], [2]), [O(13)], P)
    assert r.translations[0].status == EXACT
    from dataclasses import replace as dc_replace
    from clipbridge.core.drift import compare
    from clipbridge.core.meaning import Bound, TensorBound
    src = r.meaning
    tgt = dc_replace(src, lower=Bound(0.0, 0.0), lower_tensor=None,
                     upper_tensor=TensorBound((2,), (2.0, 2.5)))
    found = compare(src, tgt)
    codes = {f.code for f in found}
    assert Code.BOUND_ROUNDING in codes or Code.BOUND_PRECISION in codes, found
    lower = next(f for f in found if "lower" in f.message)
    assert "position [0]" in lower.message and "1 other distinct bound pair" in lower.message
    upper = next(f for f in found if "upper" in f.message)
    assert "position [1]" in upper.message and upper.source_behaviour.startswith("at [1]")
    for f in (lower, upper):
        ys, yt = evaluate(src, np.array([f.witness.input])), evaluate(tgt, np.array([f.witness.input]))
        assert (ys != yt).any()


def test_tensor_compare_is_capped():
    from clipbridge.core.drift import MAX_TENSOR_BOUND, compare
    from clipbridge.core.errors import SpecError
    from clipbridge.core.meaning import TensorBound
    from dataclasses import replace as dc_replace
    m = translate(shlo("i32", [1, 2], 9, [2]), [O(13)], P).meaning
    big = dc_replace(m, lower_tensor=TensorBound((MAX_TENSOR_BOUND + 1,), (0,) * (MAX_TENSOR_BOUND + 1)))
    with pytest.raises(SpecError) as exc:
        compare(big, m)
    assert exc.value.loc == "min"


def test_tensor_compare_visits_each_distinct_pair_once():
    """4096 positions with three distinct bound pairs: three scalar comparisons, one finding per code."""
    from clipbridge.core.drift import compare
    from clipbridge.core.meaning import TensorBound
    from dataclasses import replace as dc_replace
    m = translate(shlo("i8", [1, 2], 9, [2]), [O(13)], P).meaning
    lo = TensorBound((64, 64), tuple(i % 3 for i in range(4096)))
    src = dc_replace(m, lower_tensor=lo)
    tgt = dc_replace(m, lower_tensor=TensorBound((64, 64), (0,) * 4096))
    found = compare(src, tgt)
    assert len([f for f in found if f.code is not Code.ENGINE_BEHAVIOUR]) == 1, found
    assert "1 other distinct bound pair" in found[0].message


def test_tensor_compare_caps_the_scalar_comparisons():
    """Positions with the same function on both sides cost nothing; differing ones are compared up to a cap, and
    the rest are reported (a warning: no exact claim without comparing them)."""
    from clipbridge.core.drift import MAX_PAIR_COMPARES, compare
    from clipbridge.core.meaning import TensorBound
    from dataclasses import replace as dc_replace
    n = MAX_PAIR_COMPARES + 44
    m = translate(shlo("i16", [1, 2], 9000, [2]), [O(13)], P).meaning
    src = dc_replace(m, lower_tensor=TensorBound((n,), tuple(range(n))))
    tgt = dc_replace(m, lower_tensor=TensorBound((n,), tuple(range(1, n + 1))))
    found = compare(src, tgt)
    capped = [f for f in found if f.code is Code.TENSOR_BOUNDS]
    assert len(capped) == 1 and capped[0].severity is Severity.WARNING and "44 more" in capped[0].message
    assert compare(src, src) == []
