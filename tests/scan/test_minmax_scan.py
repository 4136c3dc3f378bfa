"""Issue 14: the clamps PyTorch's exporters write besides Clip: a one-sided Max(x, a) / Min(x, b) against a
constant, Max then Min (or Min then Max) with tensor bounds, and run-time bounds. Each is checked against
onnxruntime running the model itself (differential), and against torch 2.13's own exports (both exporters)."""

from __future__ import annotations

import io
import math

import numpy as np
import onnx
import pytest
from onnx import helper

from clipbridge.core.drift import MAX_TENSOR_BOUND, critical_points
from clipbridge.core.findings import Code
from clipbridge.core.evaluate import evaluate
from clipbridge.core.meaning import Order, same_outputs
from clipbridge.scan.report import scan
from tests.scan.models import F32, I32, I64, init, model, vi

ort = pytest.importorskip("onnxruntime")
NP = {F32: np.float32, I32: np.int32, I64: np.int64}


def run_model(m: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {sess.get_inputs()[0].name: x})[0]


def probes(meaning, shape) -> list[np.ndarray]:
    """Every critical point of the dtype (and of the scalar bounds), each filling the whole input, plus every
    tensor-bound element (and its neighbours) at every position."""
    dt = meaning.dtype
    pts = list(critical_points(dt, [meaning]))
    for t in (meaning.lower_tensor, meaning.upper_tensor):
        if t is not None:
            for v in t.values:
                if not (isinstance(v, float) and math.isnan(v)):
                    pts += [v, dt.next_up(v), dt.next_down(v)]
    return [np.full(shape, p, dtype=dt.np_dtype) for p in pts]


def agrees_with_onnxruntime(m: onnx.ModelProto, site, shape) -> None:
    meaning = site.resolved.meaning
    for x in probes(meaning, shape):
        got, want = run_model(m, x), evaluate(meaning, x)
        assert same_outputs(got, want).all(), (x.reshape(-1)[0], got, want)


def one_sided(op: str, value, elem=F32, shape=(4,)) -> onnx.ModelProto:
    dt = NP[elem]
    return model([helper.make_node(op, ["x", "c"], ["y"], name=op.lower())], [init("c", value, dt)],
                 opset=18, elem=elem, shape=shape)


@pytest.mark.parametrize("op,value,elem,lo,hi", [
    pytest.param("Max", 0.5, F32, 0.5, math.inf, id="max-is-clamp-min-float"),
    pytest.param("Min", -2.0, F32, -math.inf, -2.0, id="min-is-clamp-max-float"),
    pytest.param("Max", 1, I32, 1, 2**31 - 1, id="max-is-clamp-min-int32-dynamo"),
    pytest.param("Min", 7, I64, -(2**63), 7, id="min-is-clamp-max-int64"),
])
def test_one_sided_min_max_is_a_clip(op, value, elem, lo, hi):
    m = one_sided(op, value, elem)
    (site,) = scan(m.SerializeToString()).sites
    meaning = site.resolved.meaning
    assert site.pattern == f"{op}(x, {'a' if op == 'Max' else 'b'})" and site.error is None
    assert (meaning.lo, meaning.hi) == (lo, hi)
    open_side = meaning.upper if op == "Max" else meaning.lower
    assert open_side.default and "no" in open_side.steps[0]
    agrees_with_onnxruntime(m, site, (4,))


def test_one_sided_translations():
    """Preserve writes the open side explicitly (+inf stays +inf): exact into ONNX Clip; literal copies no bound,
    so Clip's default max (FLT_MAX) maps +inf to FLT_MAX: default-bound drift."""
    data = one_sided("Max", 0.5).SerializeToString()
    row = dict(scan(data, targets=["onnx", "directml"]).translations[0])
    assert row["onnx"].status == "exact", row["onnx"].findings
    lit = dict(scan(data, targets=["onnx"], mode=__import__("clipbridge.dialects.kit.common", fromlist=["Mode"]).Mode.LITERAL
                    ).translations[0])["onnx"]
    assert lit.status == "drift" and Code.DEFAULT_BOUND in {f.code for f in lit.findings}


def pair(first: str, lo, hi, elem=F32, shape=(3,)) -> onnx.ModelProto:
    """Max then Min (first='Max', as the exporters write clamp with tensor bounds) or Min then Max."""
    dt = NP[elem]
    second = "Min" if first == "Max" else "Max"
    c1, c2 = ("a", "b") if first == "Max" else ("b", "a")
    nodes = [helper.make_node(first, ["x", c1], ["t"], name="inner"),
             helper.make_node(second, ["t", c2], ["y"], name="outer")]
    return model(nodes, [init("a", lo, dt), init("b", hi, dt)], opset=18, elem=elem, shape=shape)


@pytest.mark.parametrize("first,lo,hi,order", [
    pytest.param("Max", [0, 5, 2], [1, 2, 3], Order.MAX_WINS, id="max-then-min-crossed-gives-max"),
    pytest.param("Min", [0, 5, 2], [1, 2, 3], Order.MIN_WINS, id="min-then-max-crossed-gives-min"),
    pytest.param("Max", [0, math.nan, 2], [1, 2, math.nan], Order.MAX_WINS, id="nan-elements"),
    pytest.param("Max", 0.0, [1, 2, 3], Order.MAX_WINS, id="scalar-min-tensor-max"),
    pytest.param("Min", [[0], [1], [2]], 5.0, Order.MIN_WINS, id="broadcast-column"),
])
def test_tensor_pairs(first, lo, hi, order):
    shape = (3, 3) if np.ndim(lo) == 2 else (3,)
    m = pair(first, lo, hi, shape=shape)
    (site,) = scan(m.SerializeToString()).sites
    meaning = site.resolved.meaning
    assert site.error is None and meaning.has_tensor_bounds and meaning.order is order
    agrees_with_onnxruntime(m, site, shape)


def test_tensor_pair_order_is_read_from_the_graph():
    """Same constants, the two orders: a crossed element gives max (Max first) or min (Min first)."""
    x = np.array([3.0, 3.0, 3.0], np.float32)
    outs = {}
    for first in ("Max", "Min"):
        m = pair(first, [0, 5, 2], [1, 2, 3])
        (site,) = scan(m.SerializeToString()).sites
        outs[first] = evaluate(site.resolved.meaning, x)
        assert same_outputs(outs[first], run_model(m, x)).all()
    assert outs["Max"][1] == 2.0 and outs["Min"][1] == 5.0


def test_tensor_site_report():
    """A tensor site's report: ONNX gets Max/Min, OpenVINO Maximum/Minimum (its NaN note aside), DirectML says
    tensor-bounds; the JSON holds."""
    import json
    r = scan(pair("Max", [0, 5, 2], [1, 2, 3]).SerializeToString(), targets=["onnx", "openvino", "directml"])
    doc = r.to_json()
    json.dumps(doc, allow_nan=False)
    (clip,) = doc["clips"]
    assert clip["spec"]["min"] == [0.0, 5.0, 2.0] and clip["meaning"]["lower_tensor"]["shape"] == [3]
    status = {t["label"]: t["status"] for t in clip["translations"]}
    assert status == {"onnx": "exact", "openvino": "exact", "directml": "unsupported"}
    codes = {f["code"] for t in clip["translations"] for f in t["findings"]}
    assert Code.TENSOR_BOUNDS.value in codes


def test_uniform_tensor_pair_is_a_scalar_clip_for_directml():
    r = scan(pair("Max", [1, 1, 1], [4, 4, 4], elem=I32).SerializeToString(), targets=["directml"])
    (t,) = [t for _, t in r.translations[0]]
    assert t.status == "exact" and t.findings[0].code is Code.TENSOR_BOUNDS


def test_run_time_upper_bound_is_dynamic():
    """clamp(x, 0, t) with t an input: Max(x, 0) then Min(., t): a pair whose max is computed at run time."""
    nodes = [helper.make_node("Max", ["x", "a"], ["t"]), helper.make_node("Min", ["t", "hi"], ["y"])]
    m = model(nodes, [init("a", 0.0, np.float32)], opset=18, inputs=[vi("x"), vi("hi")])
    (site,) = scan(m.SerializeToString()).sites
    assert site.pattern == "Min(Max(x, a), b)" and site.resolved.meaning.dynamic
    assert any(f.code is Code.DYNAMIC_BOUNDS for f in site.findings)
    assert all(t.status == "unsupported" for _, t in scan(m.SerializeToString()).translations[0])


def test_two_run_time_operands_are_no_clip():
    nodes = [helper.make_node("Max", ["x", "z"], ["y"])]
    assert scan(model(nodes, [], opset=18, inputs=[vi("x"), vi("z")]).SerializeToString()).sites == []


@pytest.mark.parametrize("value,why", [
    pytest.param(np.zeros(MAX_TENSOR_BOUND + 1, np.float32), "not read", id="too-many-elements"),
    pytest.param(np.zeros(300, np.float32), "not read", id="large-tensor-stubbed-by-the-wire-walk"),
    pytest.param(np.zeros(5, np.float32), "does not broadcast", id="wrong-shape"),
    pytest.param(np.zeros((4, 2), np.float32), "does not broadcast", id="would-grow-the-output"),
    pytest.param(np.zeros(4, np.float64), "is float64 but the input is float32", id="wrong-type"),
])
def test_bad_tensor_bounds_are_site_errors(value, why):
    m = model([helper.make_node("Max", ["x", "c"], ["y"])], [onnx.numpy_helper.from_array(value, "c")], opset=18)
    (site,) = scan(m.SerializeToString()).sites
    assert site.error is not None and why in site.error


# --- torch 2.13's exporters -----------------------------------------------------------------------------------

def _export(module, x, dynamo: bool) -> onnx.ModelProto:
    torch = pytest.importorskip("torch")
    if dynamo:
        return torch.onnx.export(module, (x,), dynamo=True, verbose=False).model_proto
    f = io.BytesIO()
    torch.onnx.export(module, (x,), f, dynamo=False, opset_version=17)
    return onnx.load_from_string(f.getvalue())


def _modules():
    torch = pytest.importorskip("torch")

    class ClampMinInt(torch.nn.Module):
        def forward(self, x):
            return torch.clamp(x, min=1)

    class ClampMaxInt(torch.nn.Module):
        def forward(self, x):
            return torch.clamp(x, max=3)

    class ClampFloat(torch.nn.Module):
        def forward(self, x):
            return torch.clamp(x, min=0.5, max=4.0)

    class ClampTensors(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("lo", torch.tensor([0.0, 1.0, 5.0]))
            self.register_buffer("hi", torch.tensor([1.0, 2.0, 3.0]))  # position 2 crossed: max wins

        def forward(self, x):
            return torch.clamp(x, self.lo, self.hi)

    class ClampMinTensor(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("lo", torch.tensor([0.0, 1.0, 2.0]))

        def forward(self, x):
            return torch.clamp(x, min=self.lo)

    return {"clamp-min-int": (ClampMinInt, torch.int32), "clamp-max-int": (ClampMaxInt, torch.int32),
            "clamp-float": (ClampFloat, torch.float32), "clamp-tensors": (ClampTensors, torch.float32),
            "clamp-min-tensor": (ClampMinTensor, torch.float32)}


@pytest.mark.parametrize("dynamo", [pytest.param(True, id="dynamo"), pytest.param(False, id="torchscript")])
@pytest.mark.parametrize("name", ["clamp-min-int", "clamp-max-int", "clamp-float", "clamp-tensors",
                                  "clamp-min-tensor"])
def test_torch_exports_are_found_with_their_bounds(name, dynamo):
    """Each exported clamp is one clip site, and its meaning is what torch and onnxruntime compute."""
    torch = pytest.importorskip("torch")
    cls, tdt = _modules()[name]
    x = torch.arange(-3, 6, dtype=tdt).reshape(3, 3)
    m = _export(cls().eval(), x, dynamo)
    r = scan(m.SerializeToString())
    assert len(r.sites) == 1, [(s.pattern, s.error) for s in r.sites]
    site = r.sites[0]
    assert site.error is None and site.resolved is not None, site.error
    meaning = site.resolved.meaning
    if name.startswith("clamp-min"):  # no max: Clip's default, or the open side of Max(x, a)
        assert meaning.upper is not None and meaning.upper.default, meaning.upper
    if name.startswith("clamp-max"):
        assert meaning.lower is not None and meaning.lower.default, meaning.lower
    if "tensors" in name:
        assert meaning.has_tensor_bounds and meaning.order is Order.MAX_WINS
    xs = [np.full((3, 3), p, dtype=meaning.dtype.np_dtype) for p in critical_points(meaning.dtype, [meaning])]
    xs.append(x.numpy())
    for xa in xs:
        want = evaluate(meaning, xa)
        assert same_outputs(run_model(m, xa), want).all(), (xa, want)
        with torch.no_grad():
            got = cls()(torch.from_numpy(xa.copy())).numpy()
        assert same_outputs(got, want).all(), (xa, got, want)
