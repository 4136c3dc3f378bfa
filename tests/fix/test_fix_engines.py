"""The fix on the real engines: for every model and every ordered pair of engines, the written model on B
computes what the original computes on A (the proof's verdict is equal), is bit-identical to the original on
B on clean inputs, passes onnx.checker's full check, and keeps node names, opset and IR version."""

from __future__ import annotations

import io
import itertools

import numpy as np
import onnx
import pytest

from clipbridge.diff import engines as diff_engines
from clipbridge.diff import report, run
from clipbridge.fix import proof
from clipbridge.fix.service import fix
from clipbridge.engines.sandbox import run_isolated
from tests.diff import models as diff_models
from tests.fix import chains, models

pytest.importorskip("onnxruntime")
pytest.importorskip("openvino")
pytestmark = pytest.mark.engines

PAIRS = list(itertools.permutations(("onnxruntime", "openvino", "onnx-reference"), 2))


def _clip_introduced(body: dict) -> list[dict]:
    """The differences introduced at a clip-like node: what the rules exist to remove."""
    return [n for n in body["nodes"] + body["masked"]["nodes"] if n["origin"] == "introduced" and n["pattern"]]


def _other_introduced(body: dict) -> list[dict]:
    """Differences introduced at other nodes (e.g. a Conv summing +inf and -inf in another order)."""
    return [n for n in body["nodes"] + body["masked"]["nodes"] if n["origin"] == "introduced" and not n["pattern"]]


def _check_written(original: onnx.ModelProto, out) -> None:
    body = out.body
    written = onnx.load_from_string(out.model)
    onnx.checker.check_model(written, full_check=True)
    assert body["model"]["node_names_kept"]
    assert {n.name for n in original.graph.node} <= {n.name for n in written.graph.node}
    assert written.ir_version == original.ir_version
    before = original.opset_import[0].version
    if body["model"]["opset_note"] is None:  # kept unless a rewrite needs a newer op, and then it says so
        assert body["model"]["opset"] == before
    else:
        assert before < 9 and body["model"]["opset"] == 9 and f"opset {before} -> 9" in body["model"]["opset_note"]


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: f"{p[0]}-to-{p[1]}")
@pytest.mark.parametrize("case", sorted(models.CASES))
def test_fix_proves_equal(case, pair):
    a, b = pair
    original = models.CASES[case]()
    data = original.SerializeToString()
    before, _ = report.diff(run_isolated, data, None, run.Options((a, b), "model", sample="edge"))  # as the fix
    out = fix(data, None, a, b, "model", rounds=2)
    proof = out.body["proof"]
    # No clip-like difference is left; the verdict is equal unless a non-clip node already differed.
    assert _clip_introduced(proof) == [], proof["nodes"]
    assert [n["node"] for n in _other_introduced(proof)] == [n["node"] for n in _other_introduced(before)]
    if not _other_introduced(before):
        assert proof["verdict"] == "equal", proof
    assert out.body["cost"]["clean_identical"], out.body["cost"]
    _check_written(original, out)
    # A rule fires exactly where the diff of the original (A against B, same generated inputs) says a clip differs.
    assert bool(out.body["rules_applied"]) == bool(_clip_introduced(before)), (out.body["rules_applied"], before)


TORCH = {"torch-mobilenet-v2": diff_models.mobilenet_v2, "torch-mobilenet-v3": diff_models.mobilenet_v3}


@pytest.fixture(scope="module")
def torch_models():
    pytest.importorskip("torch")
    return {k: onnx.load_from_string(f()) for k, f in TORCH.items()}


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: f"{p[0]}-to-{p[1]}")
@pytest.mark.parametrize("case", ["conv-clip-0-6", "mobilenet-like", *TORCH])
def test_nan_pixel_through_conv_is_equal(case, pair, request):
    """The issue's scenario: one NaN input pixel, the rest ordinary numbers, through Conv and the clips (hand-built
    graphs, and the diff's MobileNetV2/V3-style blocks exported from torch)."""
    original = request.getfixturevalue("torch_models")[case] if case in TORCH else models.CASES[case]()
    vi = original.graph.input[0]
    shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    x[0, 1, 4, 4] = np.nan
    buf = io.BytesIO()
    np.savez(buf, **{vi.name: x})
    out = fix(original.SerializeToString(), buf.getvalue(), pair[0], pair[1], "model", rounds=2)
    assert out.body["proof"]["inputs"]["source"] == "given"
    assert out.body["proof"]["verdict"] == "equal", out.body["proof"]["nodes"]
    assert out.body["proof_generated"]["inputs"]["source"] == "generated"
    assert _clip_introduced(out.body["proof_generated"]) == []
    _check_written(original, out)


@pytest.mark.parametrize("b", ["onnxruntime", "openvino"])
def test_crossed_clip6_runs_on_b_as_on_reference(b):
    """A Clip-6 with min > max: only onnx.reference runs it; the fix writes the constant it gives."""
    original = models.clip(6.0, 0.0, opset=6)
    out = fix(original.SerializeToString(), None, "onnx-reference", b, "model", rounds=2)
    assert out.body["proof"]["verdict"] == "equal", out.body
    assert "crossed-bounds-constant" in [r["rule"] for r in out.body["rules_applied"]]
    assert out.body["cost"]["original_ms"] is None and "cannot run the original" in out.body["cost"]["note"]
    if b == "openvino":  # its Clamp then sends NaN to the bound: the guard needs IsNaN/Where (opset 9)
        assert out.body["model"]["opset"] == 9 and "opset 6 -> 9" in out.body["model"]["opset_note"]


@pytest.mark.parametrize("pair", [("onnxruntime", "openvino"), ("openvino", "onnxruntime")],
                         ids=lambda p: f"{p[0]}-to-{p[1]}")
def test_b_replays_the_written_nodes_inside_its_marked_run(pair, monkeypatch):
    """The diff folds B's replays of the clip-like nodes into B's marked run (clipbridge.diff.run._fold_replays); in a
    proof that run is the written model's, its replay copies the written nodes with their guards: B never runs
    the original, and compiles twice (plain, marked) however many nodes are replayed."""
    a, b = pair
    original = models.mobilenet_like()
    x = np.random.default_rng(3).standard_normal(models.SHAPE).astype(np.float32)
    x[0, 0, 2, 5] = np.nan
    buf = io.BytesIO()
    np.savez(buf, **{original.graph.input[0].name: x})
    data, npz = original.SerializeToString(), buf.getvalue()
    written = fix(data, npz, a, b, "model", rounds=2).model
    runs: list[bytes] = []
    real = diff_engines.run

    def counted(engine: str, model: bytes, *args, **kwargs):
        if engine == b:
            runs.append(model)
        return real(engine, model, *args, **kwargs)
    monkeypatch.setattr(diff_engines, "run", counted)
    body = proof.prove(run.direct, data, written, npz, a, b, "model")
    assert body["verdict"] == "equal", body["nodes"]
    assert len(runs) == 2, len(runs)
    guards = {n.name for n in onnx.load_from_string(written).graph.node
              if "_where_clipbridge" in n.name or "_nan_to_zero_clipbridge" in n.name}
    assert guards
    for model in runs:
        names = {n.name for n in onnx.load_from_string(model).graph.node}
        assert guards <= names  # the written model, not the original
    # the plain and marked runs may start in either order (clipbridge.diff.plain): the marked one holds the copies
    marked = [m for m in runs if any(n.name.startswith("clipbridge_replay_") for n in onnx.load_from_string(m).graph.node)]
    assert len(marked) == 1
    copies = {n.name.split("/", 1)[1] for n in onnx.load_from_string(marked[0]).graph.node
              if n.name.startswith("clipbridge_replay_")}
    clips = {"n4", "n5", "n6", "n8", "n9"}  # models.mobilenet_like's clip-like nodes
    assert clips <= copies and guards <= copies, copies  # each replayed as written: the node and its guard


@pytest.mark.xfail(strict=True, reason="rules read one node at a time: Max(0, x) then Min(6, .) with the constants "
                   "first each propagate NaN on OpenVINO, so no rule fires, but OpenVINO fuses the pair into a "
                   "Clamp that sends NaN to 0 (facts.fuses_min_max_into_clamp); the proof catches it")
def test_min_max_chain_fused_by_openvino_is_fixed():
    nodes = [onnx.helper.make_node("Max", ["lo", "c"], ["t"], name="n_max"),
             onnx.helper.make_node("Min", ["hi", "t"], ["y"], name="n_min")]
    inits = [onnx.numpy_helper.from_array(np.array(v, np.float32), k) for k, v in (("lo", 0.0), ("hi", 6.0))]
    original = models.block(nodes, inits, conv=False)
    x = np.random.default_rng(3).standard_normal(models.SHAPE).astype(np.float32)
    x[0, 1, 4, 4] = np.nan
    buf = io.BytesIO()
    np.savez(buf, x=x)
    out = fix(original.SerializeToString(), buf.getvalue(), "onnxruntime", "openvino", "model", rounds=2)
    assert out.body["proof"]["verdict"] == "equal", out.body["proof"]["nodes"]


FUSED_PAIRS = [
    pytest.param([("max", -1.0, True), ("min", 2.0, True)], id="x->Max(-1,x)->Min(2,t)"),
    pytest.param([("min", 2.0, True), ("max", -1.0, True)], id="x->Min(2,x)->Max(-1,t)"),
]


@pytest.mark.xfail(strict=True, reason="known gap (docs/testing.md): OpenVINO fuses a Max and a Min with their "
                   "constants first into a Clamp that sends NaN to a bound; the diff puts the origin at the "
                   "output's Identity (not-a-clip, NaN in on both engines), not at the pair, and the fix writes no "
                   "rule")
@pytest.mark.parametrize("ops", FUSED_PAIRS)
def test_a_fused_constant_first_pair_is_explained_at_the_real_op_and_fixed(ops):
    data = chains.chain(ops).SerializeToString()
    body = report.diff(run.direct, data, None, run.Options())[0]
    introduced = [n for n in body["nodes"] if n["origin"] == "introduced"]
    assert introduced and {n["node"] for n in introduced} <= {"n0", "n1"}, introduced
    assert all(n["cause"] != "not-a-clip" for n in introduced) and body["verdict"] == "explained", body
    fixed = fix(data, None, "onnxruntime", "openvino", "model", rounds=2)
    assert fixed.body["rules_applied"] and fixed.body["proof"]["verdict"] == "equal", fixed.body["proof"]["nodes"]


def test_a_guard_on_the_next_node_is_not_taken_for_this_node_s_own():
    """x -> Max(-1, x) -> Min(2, t) -> Clip: the fix guards the Clip with Where(Equal(x, x), y', x), which reads
    the Min's output as the value for NaN. The Min replayed as written is the Min alone: the Clip's guard (whose
    guarded value is not captured in the Min's replay) is not the Min's (it was: the fix answered a 4xx)."""
    from clipbridge.fix import replay
    data = chains.chain([("max", -1.0, True), ("min", 2.0, True), ("clip",)]).SerializeToString()
    written = onnx.load_from_string(fix(data, None, "onnxruntime", "openvino", "model", rounds=1,
                                        execute=run.direct).model)
    guards = [n for n in written.graph.node if n.op_type == "Where"]
    assert len(guards) == 1 and "t1" in guards[0].input  # the Clip's guard reads the Min's output
    x = np.zeros((2, 5), np.float32)
    single = onnx.load_from_string(replay.fixed_single(written.SerializeToString(), "n1", {"t0": x}))
    assert [n.name for n in single.graph.node] == ["n1"]
    clip = onnx.load_from_string(replay.fixed_single(written.SerializeToString(), "n2", {"t1": x}))
    assert [n.op_type for n in clip.graph.node] == ["Clip", "Equal", "Where"]  # the Clip's own guard stays
