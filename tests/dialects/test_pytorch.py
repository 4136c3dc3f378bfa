"""PyTorch clamp/clamp_min/clamp_max/hardtanh/relu6: the rules (each checked on torch 2.13.0 CPU), translations
both ways, the predicted ONNX exports against the real exporters, and torch against evaluate() on a sweep."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clipbridge.dialects import pytorch, registry
from clipbridge.dialects.kit.common import Mode
from clipbridge.dialects.pytorch import meaning as pt
from clipbridge.dialects.pytorch import spec as pt_spec
from clipbridge.dialects.pytorch.emit import python_line
from clipbridge.dialects.pytorch.engine import export_onnx, run_torch, torch_call
from clipbridge.dialects.pytorch.export import onnx_summary, predict_export
from clipbridge.dialects.pytorch.spec import PyTorchSpec
from clipbridge.core.drift import critical_points
from clipbridge.core.dtypes import BY_NAME, FLOAT32
from clipbridge.core.errors import SpecError
from clipbridge.service.execute import Semantics
from clipbridge.core.findings import Code
from clipbridge.core.evaluate import evaluate
from clipbridge.core.meaning import NanBound, State, same_outputs
from clipbridge.dialects.onnx.spec import OnnxSpec
from clipbridge.service.translate import translate


def S(dtype: str, mn=None, mx=None, op: str = "clamp", shape=None, version=None) -> PyTorchSpec:
    return PyTorchSpec(dialect="pytorch", op=op, dtype=dtype, min=mn, max=mx, shape=shape, version=version)


# --- rules, each as torch 2.13.0 computes it ---------------------------------------------------------------------

@pytest.mark.parametrize("spec,lo,hi,result", [
    pytest.param(S("float32", 0, 6), 0.0, 6.0, None, id="plain"),
    pytest.param(S("int32", 1.5), 1.5, math.inf, "float32", id="int-float-scalar-promotes"),
    pytest.param(S("int64", mx=2.5), -math.inf, 2.5, "float32", id="int64-promotes-to-default-float32"),
    pytest.param(S("int32", 2.0), 2.0, math.inf, "float32", id="float-2.0-still-promotes"),
    pytest.param(S("int32", 2), 2, 2**31 - 1, None, id="int-scalar-no-promotion"),
    pytest.param(S("float16", 1.5), 1.5, math.inf, None, id="float-tensor-never-promotes"),
    pytest.param(S("uint8", -1), 255, 255, None, id="uint8-min--1-wraps-to-255"),
    pytest.param(S("uint8", -255), 1, 255, None, id="uint8-min--255-wraps-to-1"),
    pytest.param(S("uint8", mx=-1), 0, 255, None, id="uint8-max--1-wraps-harmless"),
    pytest.param(S("float16", 1 + 2**-11 + 2**-40), 1.0, math.inf, None, id="half-double-rounding-via-float"),
    pytest.param(S("bfloat16", 1 + 2**-8 + 2**-40), 1.0, math.inf, None, id="bf16-double-rounding-via-float"),
    pytest.param(S("float32", 1e-46), 0.0, math.inf, None, id="f32-underflow-to-zero"),
    pytest.param(S("float16", mx="inf"), -math.inf, math.inf, None, id="f16-inf-allowed"),
    pytest.param(S("int32", -1.9, 1.9, op="hardtanh"), -1, 1, None, id="hardtanh-truncates"),
    pytest.param(S("uint8", -0.5, 2, op="hardtanh"), 0, 2, None, id="hardtanh-uint8-minus-half-truncates-to-0"),
    pytest.param(S("int8", op="hardtanh"), -1, 1, None, id="hardtanh-defaults"),
    pytest.param(S("int8", op="relu6"), 0, 6, None, id="relu6"),
    pytest.param(S("float32", 2, 1), 2.0, 1.0, None, id="crossed-max-wins"),
    pytest.param(S("float32", 1, 1, op="hardtanh"), 1.0, 1.0, None, id="hardtanh-equal-bounds-ok"),
])
def test_resolve(spec, lo, hi, result):
    m = pt.resolve(spec)
    assert m.state is State.DEFINED and m.lo == lo and m.hi == hi
    assert (m.result_dtype.name if m.result_dtype else None) == result


@pytest.mark.parametrize("spec,reason", [
    pytest.param(S("float32"), "torch.clamp: At least one of 'min' or 'max' must not be None", id="no-bound"),
    pytest.param(S("uint8", 300), "value cannot be converted to type uint8_t without overflow", id="uint8-300"),
    pytest.param(S("uint8", -256), "value cannot be converted to type uint8_t without overflow", id="uint8--256"),
    pytest.param(S("int8", -1000, 1000), "value cannot be converted to type int8_t without overflow", id="int8"),
    pytest.param(S("int32", mx=2**31), "value cannot be converted to type int without overflow", id="int32"),
    pytest.param(S("int64", mx=2**63), "value cannot be converted to type int64_t without overflow", id="int64"),
    pytest.param(S("int64", mx=2**64), "int too big to convert", id="beyond-uint64"),
    pytest.param(S("float16", mx=65504.0001), "value cannot be converted to type c10::Half without overflow",
                 id="half-just-above-max"),
    pytest.param(S("float16", mx=70000), "value cannot be converted to type c10::Half without overflow",
                 id="half-int-bound"),
    pytest.param(S("float32", mx=3.5e38), "value cannot be converted to type float without overflow", id="f32"),
    pytest.param(S("bfloat16", mx=3.39e38), "value cannot be converted to type c10::BFloat16 without overflow",
                 id="bf16-above-max"),
    pytest.param(S("int32", mx=1e39), "value cannot be converted to type float without overflow",
                 id="promoted-bound-overflows-float32"),
    pytest.param(S("float32", 2, 1, op="hardtanh"), "min_val cannot be greater than max_val", id="hardtanh-crossed"),
    pytest.param(S("uint8", -1, 1, op="hardtanh"), "cannot do hardtanh on an unsigned type with negative limits",
                 id="hardtanh-uint8-negative"),
    pytest.param(S("int32", "nan", 1, op="hardtanh"), "value cannot be converted to type int64_t without overflow",
                 id="hardtanh-int-nan"),
    pytest.param(S("int8", -1000.0, 1000.0, op="hardtanh"), "value cannot be converted to type int8_t without "
                 "overflow", id="hardtanh-int8-out-of-range"),
    pytest.param(S("int32", 2**63, 2**63 + 1, op="hardtanh"), "value cannot be converted to type int64_t without "
                 "overflow", id="hardtanh-toLong-beyond-int64"),
    pytest.param(S("int32", -2**63, 5, op="hardtanh"), "value cannot be converted to type int without overflow",
                 id="hardtanh-int64-limit-into-int32"),
    pytest.param(S("float32", 0.0, [1.0, 2.0], shape=[2]), "clappy", id="mixed-scalar-and-tensor"),
])
def test_torch_refuses(spec, reason):
    m = pt.resolve(spec)
    assert m.state is State.REJECTED
    if reason != "clappy":
        assert m.reason == reason
    else:
        assert m.reason.startswith("clamp() received an invalid combination of arguments")
    torch = pytest.importorskip("torch")
    x = torch.zeros(2, dtype=getattr(torch, m.dtype.name))
    with pytest.raises((RuntimeError, ValueError, OverflowError, TypeError)) as exc:
        torch_call(spec, m.dtype)(x)
    assert str(exc.value).splitlines()[0].startswith(m.reason.split(" - got")[0])


@pytest.mark.parametrize("spec,loc,msg", [
    pytest.param(S("uint16", 0, 1), "dtype", "clamp_scalar_cpu", id="uint16-no-cpu-kernel"),
    pytest.param(S("float8", 0, 1), "dtype", "Unknown PyTorch dtype", id="unknown-dtype"),
    pytest.param(S("float32", 0, 1, op="clip_by_value"), "op", "Unknown PyTorch op", id="unknown-op"),
    pytest.param(S("float32", 0, 1, op="clamp_min"), "max", "takes exactly `min`", id="clamp-min-two-bounds"),
    pytest.param(S("float32", 0, op="relu6"), "min", "no bounds", id="relu6-bounds"),
    pytest.param(S("float32", 0, 1, version="2.12"), "version", "older than", id="older-version"),
    pytest.param(S("float32", [0.0, 1.0, 2.0], shape=[2]), "min", "does not broadcast", id="tensor-shape"),
    pytest.param(S("float32", [[0.0], [1.0]], shape=[2]), "min", "grow the output", id="tensor-grows"),
    pytest.param(S("float32", [0.0, 1.0]), "shape", "concrete `shape`", id="tensor-needs-shape"),
    pytest.param(S("int8", [0, 1.5], shape=[2]), "min", "must be an integer", id="tensor-int-fraction"),
])
def test_spec_errors(spec, loc, msg):
    with pytest.raises(SpecError, match=msg) as exc:
        pt.resolve(spec)
    assert exc.value.loc == loc


@pytest.mark.parametrize("text,want", [("2.13", "2.13"), ("2.13.0", "2.13"), ("v2.14", "2.13"), ("3.0", "2.13"),
                                       ("2.13.0+cpu", "2.13")])
def test_version_highest_at_or_below(text, want):
    assert pt.version_pytorch(text) == want


def test_dtype_aliases():
    assert pt.dtype_pytorch("torch.half").name == "float16" and pt.dtype_pytorch("long").name == "int64"


def test_nan_bound_propagates_every_op():
    for spec in (S("float32", "nan"), S("float32", mx="nan"), S("float32", "nan", op="clamp_min"),
                 S("int32", "nan")):
        m = pt.resolve(spec)
        assert m.nan_bound is NanBound.PROPAGATE
        y = evaluate(m, m.dtype.array([1, 2]))
        assert np.isnan(y.astype(np.float64)).all()


# --- translations ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("target", ["onnx", "openvino", "directml", "stablehlo"])
@pytest.mark.parametrize("spec", [
    pytest.param(S("float32", 0, 6), id="f32"), pytest.param(S("int32", 1.5), id="promoting"),
    pytest.param(S("uint8", -1), id="uint8-wrap"), pytest.param(S("float16", "nan"), id="nan"),
    pytest.param(S("int8", op="relu6"), id="relu6"), pytest.param(S("float32", 3, 1), id="crossed"),
])
def test_translate_out_of_pytorch(spec, target):
    r = translate(spec, [target], Mode.PRESERVE)
    t = r.translations[0]
    assert t.status in ("exact", "drift", "unsupported")
    if r.meaning.result_dtype is not None and t.meaning is not None:
        assert Code.DTYPE_PROMOTION in {f.code for f in t.findings}


@pytest.mark.parametrize("source,status", [
    pytest.param(OnnxSpec(dialect="onnx", opset=13, elem_type="FLOAT", min=0, max=6), "exact", id="f32"),
    pytest.param(OnnxSpec(dialect="onnx", opset=13, elem_type="INT8", min=-3), "exact", id="int8-one-sided"),
    pytest.param(OnnxSpec(dialect="onnx", opset=13, elem_type="FLOAT16", min=5, max=1), "exact", id="crossed"),
    pytest.param(OnnxSpec(dialect="onnx", opset=13, elem_type="FLOAT", min="nan", max=6), "exact", id="nan"),
    pytest.param(OnnxSpec(dialect="onnx", opset=13, elem_type="UINT16", min=0, max=6), "unsupported", id="u16"),
    pytest.param(OnnxSpec(dialect="onnx", opset=6, elem_type="FLOAT"), "exact", id="clip6-defaults"),
])
def test_translate_into_pytorch(source, status):
    t = translate(source, ["pytorch"], Mode.PRESERVE).translations[0]
    assert t.status == status, [f.to_json() for f in t.findings]
    if status == "exact":
        assert t.artifacts["pytorch_python"].startswith("y = torch.clamp(x, ")


def test_literal_float_bound_on_int_promotes():
    """OpenVINO ceils 1.5 on i8; torch.clamp given the literal 1.5 promotes to float32."""
    from clipbridge.dialects.openvino.spec import OpenVinoSpec
    t = translate(OpenVinoSpec(dialect="openvino", element_type="i8", min=1.5, max=100), ["pytorch"],
                  Mode.LITERAL).translations[0]
    assert t.meaning.result_dtype is FLOAT32 and Code.DTYPE_PROMOTION in {f.code for f in t.findings}


def test_python_line_and_export_prediction():
    spec = S("int32", 1.5)
    m = pt.resolve(spec)
    assert python_line(spec, m) == "y = torch.clamp(x, min=1.5)"
    assert predict_export(m, False) == "Clip(x, int32:1, '')\n-> int32"
    assert predict_export(m, True) == "Cast(x, to=FLOAT)\nClip(x_float, float32:1.5)\n-> float32"
    spec = S("float32", [0.0, "nan"], shape=[2])
    assert python_line(spec, pt.resolve(spec)) == 'y = torch.clamp(x, min=torch.tensor([0.0, float("nan")], ' \
                                                  'dtype=torch.float32))'


def test_registry_entry():
    d = registry.get("pytorch")
    assert d is pytorch.DIALECT and not d.in_defaults and "torch" in d.engines
    assert set(d.rule_texts) <= {c.value for c in Code}
    for name, ex in d.examples.items():
        m = pt.resolve(PyTorchSpec.model_validate(ex))
        assert m.state is State.DEFINED, name


# --- torch itself ---------------------------------------------------------------------------------------------

EXPORT_CASES = [
    pytest.param(S("float32", -1.0, 6.0), id="clamp-f32"), pytest.param(S("float32", 0.5), id="clamp-min"),
    pytest.param(S("float32", mx=0.5), id="clamp-max"), pytest.param(S("int32", 1.5), id="int32-float-bound"),
    pytest.param(S("int32", 1, 5), id="int32-int-bounds"), pytest.param(S("int32", mx=5), id="int32-max-only"),
    pytest.param(S("float16", 0.1, 6.0), id="f16"), pytest.param(S("int8", op="relu6"), id="relu6-int8"),
    pytest.param(S("int32", -1.9, 1.9, op="hardtanh"), id="hardtanh-int32"),
    pytest.param(S("float32", [0.0, 1.0, 2.0, 3.0], [1.0, 1.0, 1.0, 1.0], shape=[4]), id="tensor-both"),
]


@pytest.mark.parametrize("dynamo", [False, True], ids=["torchscript", "dynamo"])
@pytest.mark.parametrize("spec", EXPORT_CASES)
def test_export_prediction_matches_torch(spec, dynamo):
    pytest.importorskip("torch")
    if dynamo:
        pytest.importorskip("onnxscript")
    m = pt.resolve(spec)
    got = onnx_summary(export_onnx(spec, m.dtype, dynamo))
    assert got == predict_export(m, dynamo)


def test_torchscript_export_truncates_promotion():
    """The witness of NOTE_TS_EXPORT: onnxruntime runs the TorchScript export of clamp(int32, min=1.5)."""
    pytest.importorskip("torch")
    ort = pytest.importorskip("onnxruntime")
    spec = S("int32", 1.5)
    m = pt.resolve(spec)
    s = ort.InferenceSession(export_onnx(spec, m.dtype, False))
    x = np.array([0, 1, 2, 3], np.int32)
    assert s.run(None, {"x": x})[0].tolist() == [1, 1, 2, 3]
    assert evaluate(m, x).tolist() == [1.5, 1.5, 2.0, 3.0]
    f = next(f for f in translate(spec, ["pytorch"]).translations[0].findings if f.code is Code.DTYPE_PROMOTION)
    assert (f.witness.input, f.witness.source_output, f.witness.target_output) == (1, 1.5, 1)


def test_hardtanh_module_is_stricter_than_functional():
    """Finding: nn.Hardtanh asserts max_val > min_val; F.hardtanh (the op modelled) allows min == max."""
    torch = pytest.importorskip("torch")
    with pytest.raises(AssertionError):
        torch.nn.Hardtanh(1.0, 1.0)
    assert torch.nn.functional.hardtanh(torch.tensor([0.0, 3.0]), 1.0, 1.0).tolist() == [1.0, 1.0]


def _run(spec: PyTorchSpec) -> tuple[np.ndarray, np.ndarray]:
    m = pt.resolve(spec)
    if spec.shape:
        n = int(np.prod(spec.shape))
        pts = critical_points(m.dtype, [])
        x = np.resize(pts, n).reshape(spec.shape)
    else:
        x = critical_points(m.dtype, [m] if not m.has_tensor_bounds else [])
    got = run_torch(Semantics("pytorch", m, pt.normalize(spec)), x)
    return got, evaluate(m, x)


SWEEP_BOUNDS = [(0, 6), (1.5, None), (None, 2.5), ("nan", None), (None, "nan"), ("-inf", "inf"), (3, 1),
                (-1, None), (2.0, 2.0), (-0.0, 0.0), (100, 120)]
SWEEP = [pytest.param(dt, mn, mx, id=f"{dt}-{mn}-{mx}") for dt in pt_spec.DTYPES for mn, mx in SWEEP_BOUNDS]


@pytest.mark.parametrize("dt,mn,mx", SWEEP)
def test_torch_matches_meaning(dt, mn, mx):
    pytest.importorskip("torch")
    spec = S(dt, mn, mx)
    m = pt.resolve(spec)
    if m.state is State.REJECTED:
        with pytest.raises(Exception):
            torch_call(spec, m.dtype)(__import__("torch").zeros(1, dtype=getattr(__import__("torch"), dt)))
        return
    got, want = _run(spec)
    assert got.dtype == m.out_dtype.np_dtype
    assert same_outputs(got, want).all()


@pytest.mark.parametrize("spec", [
    pytest.param(S("int32", -1.9, 1.9, op="hardtanh"), id="hardtanh-int32"),
    pytest.param(S("uint8", op="relu6"), id="relu6-uint8"),
    pytest.param(S("bfloat16", -0.5, 0.5, op="hardtanh"), id="hardtanh-bf16"),
    pytest.param(S("float16", 0.5, op="clamp_min"), id="clamp_min"),
    pytest.param(S("int16", mx=2.5, op="clamp_max"), id="clamp_max-promotes"),
    pytest.param(S("float32", "nan", op="clamp_min"), id="clamp_min-nan"),
    pytest.param(S("int32", "nan", op="clamp_min"), id="clamp_min-int-nan-promotes-all-nan"),
    pytest.param(S("uint8", mx="nan", op="clamp_max"), id="clamp_max-uint8-nan-promotes-all-nan"),
    pytest.param(S("float16", "nan", 1.0, op="hardtanh"), id="hardtanh-nan-min"),
    pytest.param(S("uint8", -1, op="clamp_min"), id="clamp_min-uint8-wraps"),
    pytest.param(S("float32", [0.0, "nan", 2.0, 5.0], [1.0, 1.0, "nan", 3.0], shape=[4]), id="tensor-nan-crossed"),
    pytest.param(S("int8", [[-3], [4]], [[3], [2]], shape=[2, 9]), id="tensor-int8-broadcast"),
    pytest.param(S("bfloat16", [0.1, -0.0], shape=[6, 2]), id="tensor-bf16-min-only"),
    pytest.param(S("float64", mx=[1e300, -1e-300], shape=[3, 2]), id="tensor-f64-max-only"),
])
def test_torch_matches_meaning_ops(spec):
    pytest.importorskip("torch")
    got, want = _run(spec)
    assert same_outputs(got, want).all()


@settings(derandomize=True, max_examples=40, deadline=None)
@given(st.sampled_from(["float32", "float16", "bfloat16", "int16", "uint8"]),
       st.one_of(st.none(), st.floats(-300, 300), st.integers(-300, 300)),
       st.one_of(st.none(), st.floats(-300, 300), st.integers(-300, 300)))
def test_torch_matches_meaning_property(dt, mn, mx):
    pytest.importorskip("torch")
    spec = S(dt, mn, mx)
    m = pt.resolve(spec)
    if m.state is State.REJECTED:
        return
    got, want = _run(spec)
    assert same_outputs(got, want).all()


def test_out_dtype_is_the_promoted_one():
    pytest.importorskip("torch")
    got, _ = _run(S("int64", 0.5))
    assert got.dtype == np.float32 and BY_NAME["float32"] is FLOAT32


# --- the committed exports (tests/data/torch_exports, written by its make.py on torch 2.13.0) -------------------

EXPORTS = Path(__file__).resolve().parents[1] / "data" / "torch_exports"
EXPORT_FILES = [pytest.param(name, tag, id=f"{name}.{tag}")
                for name in json.loads((EXPORTS / "cases.json").read_text()) for tag in ("ts", "dynamo")]


@pytest.mark.parametrize("name,tag", EXPORT_FILES)
def test_committed_export_is_predicted(name, tag):
    import onnx
    spec = PyTorchSpec(dialect="pytorch", **json.loads((EXPORTS / "cases.json").read_text())[name])
    data = (EXPORTS / f"{name}.{tag}.onnx").read_bytes()
    assert len(data) < 1024
    model = onnx.load_from_string(data)
    onnx.checker.check_model(model)
    assert model.opset_import[0].version == (18 if tag == "dynamo" else 17)
    assert onnx_summary(data) == predict_export(pt.resolve(spec), tag == "dynamo")


@pytest.mark.parametrize("name,tag", EXPORT_FILES)
def test_committed_export_on_onnxruntime(name, tag):
    """onnxruntime on the exported model against torch's meaning: only the TorchScript int32 export differs."""
    ort = pytest.importorskip("onnxruntime")
    spec = PyTorchSpec(dialect="pytorch", **json.loads((EXPORTS / "cases.json").read_text())[name])
    m = pt.resolve(spec)
    x = m.dtype.array([-3, 0, 1, 2])
    s = ort.InferenceSession((EXPORTS / f"{name}.{tag}.onnx").read_bytes())
    got = s.run(None, {s.get_inputs()[0].name: x})[0]
    same = got.dtype == m.out_dtype.np_dtype and same_outputs(got, evaluate(m, x)).all()
    assert bool(same) == ((name, tag) != ("clamp_int32_float_min", "ts"))


# --- observed deviations of torch.onnx.export from torch's own clamp (each an engine note) ----------------------

@pytest.mark.xfail(strict=True, reason="NOTE_TS_EXPORT: the TorchScript exporter casts the float bound to int32 "
                                       "(Clip(x, 1)) instead of promoting; onnxruntime gives [1, 1, 2, 3] for torch's "
                                       "[1.5, 1.5, 2.0, 3.0]")
def test_torchscript_export_keeps_torch_promotion():
    ort = pytest.importorskip("onnxruntime")
    m = pt.resolve(S("int32", 1.5))
    assert pt.NOTE_TS_EXPORT in m.engine_notes
    s = ort.InferenceSession((EXPORTS / "clamp_int32_float_min.ts.onnx").read_bytes())
    x = np.array([0, 1, 2, 3], np.int32)
    got = s.run(None, {"x": x})[0]
    assert got.dtype == np.float32 and same_outputs(got, evaluate(m, x)).all()


@pytest.mark.xfail(strict=True, reason="both exporters write Clip(x, NaN); onnxruntime's Clip ignores a NaN bound "
                                       "(the ONNX dialect's onnxruntime engine note) where torch.clamp fills NaN")
@pytest.mark.parametrize("dynamo", [False, True], ids=["torchscript", "dynamo"])
def test_exported_nan_bound_on_onnxruntime(dynamo):
    pytest.importorskip("torch")
    ort = pytest.importorskip("onnxruntime")
    spec = S("float32", "nan")
    m = pt.resolve(spec)
    assert pt.NOTE_EXPORT_NAN in m.engine_notes
    s = ort.InferenceSession(export_onnx(spec, m.dtype, dynamo))
    x = np.array([0, 1, 2, 3], np.float32)
    assert same_outputs(s.run(None, {s.get_inputs()[0].name: x})[0], evaluate(m, x)).all()


def test_literal_half_bound_rounds_twice():
    """ONNX rounds a FLOAT16 bound once; torch reads the Python float (a double), then float, then half."""
    src = OnnxSpec(dialect="onnx", opset=13, elem_type="FLOAT16", min="1.00048828125000000001", max=6)
    t = translate(src, ["pytorch"], Mode.LITERAL).translations[0]
    assert t.status == "drift" and t.meaning.lo == 1.0
    f = next(f for f in t.findings if f.witness is not None)
    assert (f.witness.input, f.witness.source_output, f.witness.target_output) == (1.0, 1.0009765625, 1.0)
    assert translate(src, ["pytorch"], Mode.PRESERVE).translations[0].status == "exact"


_NUMBERS = st.one_of(st.none(), st.integers(-2**70, 2**70), st.floats(allow_nan=True, allow_infinity=True),
                     st.sampled_from(["nan", "-inf", "0.1", "1e400", "0x1.8p+1"]))


@settings(derandomize=True, max_examples=150, deadline=None)
@given(st.sampled_from(list(pt_spec.DTYPES) + ["uint16", "bool"]), st.sampled_from(list(pt_spec.OPS)), _NUMBERS, _NUMBERS)
def test_any_spec_resolves_or_is_a_clear_error(dtype, op, mn, mx):
    """Every spec: a meaning (defined or rejected with torch's message) or a located SpecError; translations of a
    defined one into every dialect finish, and its own dialect round-trips exactly."""
    from clipbridge.core.errors import ClipBridgeError
    try:
        spec = S(dtype, mn, mx, op=op)
        m = pt.resolve(spec)
    except ClipBridgeError as exc:
        assert exc.loc
        return
    except ValueError:  # pydantic: a value no wire number reads
        return
    if m.state is State.REJECTED:
        assert m.reason
        return
    r = translate(spec, list(registry.names()), Mode.PRESERVE)
    own = next(t for t in r.translations if t.target and t.target["dialect"] == "pytorch")
    assert own.status == "exact", [f.to_json() for f in own.findings]


def test_execute_reports_the_promoted_output_dtype(client):
    body = {"spec": {"dialect": "pytorch", "dtype": "int32", "min": 1.5},
            "input": {"dtype": "int32", "shape": [3], "data": [0, 1, 5]}}
    r = client.post("/v1/execute", json=body)
    assert r.status_code == 200 and r.json()["output"] == {"dtype": "float32", "shape": [3], "data": [1.5, 1.5, 5.0]}
    r = client.post("/v1/compare", json={**body, "semantics": ["pytorch", "onnx"]})
    first = r.json()["pairs"][0]["first"][0]
    assert r.status_code == 200 and first["a_output"] == 1.5 and first["b_output"] in (1, 2)
