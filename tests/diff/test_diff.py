"""The diff on real engines: each difference at the right node, with the right cause and a witness that
reproduces when the node is run alone on each engine."""

from __future__ import annotations

import math

import numpy as np
import onnx
import pytest

from clipbridge.engines import config as engine_config
from clipbridge.diff import child, engines, report, run
from tests.diff import models as M
from tests.diff.conftest import npz

pytestmark = pytest.mark.engines


def diff(model: bytes, inputs: bytes | None = None, **kw) -> dict:
    """Generated inputs are the edge probe's here (NaN, +-inf, the bounds: issue 44 made them opt-in), the values
    these cause tests are about."""
    return report.diff(run.direct, model, inputs, run.Options(**{"sample": "edge", **kw}))[0]


def _value(v) -> float:
    return float(v)  # the wire writes NaN and the infinities as strings: "nan", "inf", "-inf"


def _reproduces(model: bytes, row: dict, engine_names, precision: str = "model") -> None:
    """Run the node alone on each engine with the witness's input: each engine gives its witness output."""
    node = next(n for n in onnx.load_from_string(model).graph.node if n.name == row["node"])
    x = np.full((1,), _value(row["witness"]["input"]), dtype=np.float32)
    single = child.single_node(model, row["node"], {node.input[0]: x})
    for engine in engine_names:
        got = float(engines.run(engine, single, {node.input[0]: x}, [], precision)["values"][node.output[0]][0])
        want = _value(row["witness"]["outputs"][engine])
        assert (math.isnan(got) and math.isnan(want)) or got == want, (engine, got, want)


@pytest.mark.parametrize("build, node, op, witness_out", [
    pytest.param(M.relu_chain, "relu_1", "Relu", 0.0, id="relu-nan-to-zero"),
    pytest.param(M.hardsigmoid_chain, "hsig_1", "HardSigmoid", 1.0, id="hardsigmoid-nan-to-one"),
    pytest.param(lambda: M.clip_chain(0.0, 6.0), "clip_1", "Clip", 0.0, id="clip-nan-to-lower"),
])
def test_nan_input_at_the_clip_like_node(build, node, op, witness_out):
    model = build()
    body = diff(model)
    assert body["verdict"] == "explained"
    assert body["inputs"] == {**body["inputs"], "source": "generated", "seed": 20240}
    assert body["first_divergence"] == {"node": node, "op": op}
    [row] = body["nodes"]
    assert (row["node"], row["op"], row["origin"], row["cause"]) == (node, op, "introduced", "nan-input")
    assert row["witness"]["input"] == "nan"
    assert row["witness"]["outputs"] == {"onnxruntime": "nan", "openvino": witness_out}
    _reproduces(model, row, ("onnxruntime", "openvino"))


def test_equal_when_the_engines_agree():
    body = diff(M.plain_chain())
    assert body["verdict"] == "equal" and body["nodes"] == [] and body["first_divergence"] is None
    assert all(o["differing"] == 0 for o in body["outputs"])


def test_given_inputs_without_nan_are_equal(mnv2, clean_image):
    body = diff(mnv2, clean_image)
    assert body["inputs"]["source"] == "given" and body["inputs"]["seed"] is None
    assert body["verdict"] == "equal", body["nodes"][:2]


def test_one_nan_pixel_in_mobilenet_v2(mnv2):
    """onnxruntime propagates the NaN to every logit; OpenVINO's first Clip gives the lower bound."""
    image = np.random.default_rng(1).standard_normal((1, 3, 32, 32)).astype(np.float32)
    image[0, 0, 7, 7] = np.nan
    body = diff(mnv2, npz(image=image))
    first = next(n for n in onnx.load_from_string(mnv2).graph.node if n.op_type == "Clip")
    assert body["first_divergence"] == {"node": first.name, "op": "Clip"}
    assert body["outputs"][0]["differing"] == body["outputs"][0]["total"] == 1000
    introduced = [n for n in body["nodes"] if n["origin"] == "introduced"]
    assert [n["node"] for n in introduced] == [first.name] and introduced[0]["cause"] == "nan-input"
    assert all(n["inherited_from"] == [first.name] and n["cause"] == "nan-input"
               for n in body["nodes"] if n["origin"] == "inherited")
    assert body["verdict"] == "explained"
    _reproduces(mnv2, introduced[0], ("onnxruntime", "openvino"))


def test_mobilenet_v3_relu_and_hardsigmoid(mnv3):
    body = diff(mnv3)
    rows = {n["op"]: n for n in body["nodes"] + body["masked"]["nodes"]}  # reaching the logits or not
    assert rows["Relu"]["origin"] == "introduced" and rows["Relu"]["cause"] == "nan-input"
    assert rows["HardSigmoid"]["cause"] == "nan-input"
    # Issue 44: the verdict is about the logits (on these edge values both engines' logits agree on this build).
    assert body["verdict"] == ("explained" if any(o["differing"] for o in body["outputs"]) else "equal")


def test_default_precision_on_this_host(mnv2, clean_image):
    """OpenVINO's default is bf16 only where the CPU has avx512_bf16/AMX (engine_config reads it back)."""
    body = diff(mnv2, clean_image, precision="deployed")
    ov = next(e for e in body["engines"] if e["name"] == "openvino")
    default = (engine_config.host_facts().get("openvino") or {}).get("default_inference_precision")
    assert ov["precision"] == default
    if default not in ("bf16", "f16"):
        assert body["verdict"] == "equal"
        return
    first_conv = next(n for n in onnx.load_from_string(mnv2).graph.node if n.op_type == "Conv")
    assert body["first_divergence"] == {"node": first_conv.name, "op": "Conv"}
    row = body["nodes"][0]
    assert (row["node"], row["origin"], row["cause"]) == (first_conv.name, "introduced", "inference-precision")
    assert "ran it in " + default in row["detail"]
    assert body["verdict"] == "explained"
    # The witness reproduces: the Conv alone, on the same image, at the same precision, on each engine.
    image = np.load(__import__("io").BytesIO(clean_image))["image"]
    single = child.single_node(mnv2, first_conv.name, {"image": image})
    for engine, want in row["witness"]["outputs"].items():
        got = engines.run(engine, single, {"image": image}, [], "deployed")["values"][first_conv.output[0]]
        assert float(got[tuple(row["witness"]["index"])]) == float(want), engine


def test_onnx_reference_reads_an_omitted_bound_otherwise():
    """Clip-13 with only max: -inf becomes -FLT_MAX (lowest()) on onnxruntime, stays -inf in onnx.reference."""
    model = M.clip_chain(None, 6.0)
    x = np.array([-np.inf, 1.0, 2.0, 3.0], np.float32)
    body = diff(model, npz(x=x), engines=("onnxruntime", "onnx-reference"))
    [row] = body["nodes"]
    assert row["cause"] == "default-bound" and row["witness"]["input"] == "-inf"
    assert row["witness"]["outputs"] == {"onnxruntime": float(np.finfo(np.float32).min), "onnx-reference": "-inf"}


def test_observer_effect_falls_back_to_bisection(monkeypatch):
    """When marking changes an engine's final outputs, the marked run is not trusted: one mark per run."""
    real = engines.run

    def observed(engine, model, feeds, marks, precision="model", *rest, **kw):
        out = real(engine, model, feeds, marks, precision, *rest, **kw)
        mark_all = not marks and len(onnx.load_from_string(model).graph.output) > 1  # relu_chain: y, a, r
        if engine == "openvino" and mark_all:
            out["values"] = {k: v + np.float32(1) for k, v in out["values"].items()}
        return out
    monkeypatch.setattr(engines, "run", observed)
    body = diff(M.relu_chain())
    assert next(e for e in body["engines"] if e["name"] == "openvino")["observer_effect"] == ["y"]
    assert body["method"] == "bisection"
    assert body["first_divergence"] == {"node": "relu_1", "op": "Relu"}
    assert body["nodes"][0]["cause"] == "nan-input"


def test_engine_that_cannot_load_is_quoted():
    g = onnx.helper.make_graph([onnx.helper.make_node("Foo", ["x"], ["y"], domain="custom.x")], "g",
                               [onnx.helper.make_tensor_value_info("x", 1, [2])],
                               [onnx.helper.make_tensor_value_info("y", 1, [2])])
    m = onnx.helper.make_model(g, opset_imports=[onnx.helper.make_opsetid("", 17),
                                                 onnx.helper.make_opsetid("custom.x", 1)], ir_version=8)
    with pytest.raises(engines.EngineCannotLoad, match="onnxruntime cannot load the model: .*custom.x"):
        diff(m.SerializeToString())


def test_quantize_saturation_of_inf_is_named():
    """QuantizeLinear saturates inf to 255 on onnxruntime and OpenVINO; onnx.reference gives 0: a non-finite
    element into QuantizeLinear is `quantize-saturation` (app/clipbridge/diff/quantized.py), with its witness."""
    g = onnx.helper.make_graph([onnx.helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="q")], "g",
                               [onnx.helper.make_tensor_value_info("x", 1, [6])],
                               [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.UINT8, [6])],
                               [M.const("s", 0.1), M.const("z", 128, np.uint8)])
    m = onnx.helper.make_model(g, opset_imports=[onnx.helper.make_opsetid("", 13)], ir_version=8)
    body = diff(m.SerializeToString(), npz(x=np.array([np.inf, 1, 2, 3, 4, 5], np.float32)),
                engines=("onnxruntime", "openvino", "onnx-reference"))
    [row] = body["nodes"]
    assert (row["pattern"], row["origin"], row["cause"]) == ("quantize-saturate", "introduced",
                                                             "quantize-saturation")
    assert row["witness"] == {"index": [0], "input": "inf",
                              "outputs": {"onnxruntime": 255, "openvino": 255, "onnx-reference": 0}}
    assert body["verdict"] == "explained"


def test_past_the_memory_budget_the_diff_takes_passes_and_answers_the_same(mnv2):
    """Issue 46: where the marks pass the budget the graph is captured a region at a time (it used to mark only
    the clip-like nodes' tensors); the report is the one-pass report, with how many passes it took."""
    plan = child.prepare(mnv2, None, sample="edge")
    every = 2 * sum(plan.nbytes(t) for t in run.marks(plan))  # two engines' copies
    whole = diff(mnv2)
    bounded = diff(mnv2, memory=every // 2)
    assert whole["passes"] == 1 and bounded["passes"] > 1
    assert {**bounded, "passes": 1} == whole
    assert bounded["first_divergence"]["op"] == "Clip" and bounded["verdict"] == "explained"


def test_dynamo_clamp_min_int_is_a_one_sided_max():
    """torch.onnx.export(dynamo=True) writes clamp(min=0) as Max(x, 0): found, replayed, and named nan-input."""
    import torch

    class ClampMin(torch.nn.Module):
        def forward(self, x):
            return torch.clamp(x * 2, min=0) + 1
    model = torch.onnx.export(ClampMin(), (torch.randn(4),), dynamo=True, input_names=["x"],
                              verbose=False).model_proto.SerializeToString()
    body = diff(model)
    [row] = body["nodes"]
    assert (row["op"], row["pattern"], row["origin"], row["cause"]) == ("Max", "max-constant", "introduced",
                                                                          "nan-input")
    assert row["witness"]["outputs"] == {"onnxruntime": "nan", "openvino": 0.0}
    _reproduces(model, row, ("onnxruntime", "openvino"))


def test_replays_are_folded_into_the_marked_runs(monkeypatch):
    """Every engine but the first replays the clip-like nodes inside its marked run: OpenVINO compiles twice
    (plain, marked), not once more per replay; the replay's outputs are what the node alone gives."""
    calls = []
    real = engines.run

    def counted(engine, model, *args, **kwargs):
        calls.append(engine)
        return real(engine, model, *args, **kwargs)
    monkeypatch.setattr(engines, "run", counted)
    body = diff(M.relu_chain())
    assert calls.count("openvino") == 2 and calls.count("onnxruntime") == 3  # plain, marked, the replay
    _reproduces(M.relu_chain(), body["nodes"][0], ("onnxruntime", "openvino"))
