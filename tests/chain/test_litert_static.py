"""LiteRT in the static table (issue 47 item 3): what litert-torch writes for each clamp, predicted from the source
alone (chain/litert_static.py), so that `--static` names it without the converter environment; checked against the
real converter on every chain test model (tests/chain/models.py), and the causes the run then measures.

Oracles: the .tflite litert-torch writes when called here in its environment without clipbridge, its ops listed and
run by ai-edge-litert's Interpreter called here; torch eager."""

from __future__ import annotations

import io
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest
import torch

from clipbridge.chain import child_torch, converter_env, litert_static, litert_table, report
from clipbridge.diff import compare
from clipbridge.diff.run import direct
from tests.chain import models
from tests.chain.conftest import hostile, npz

LITERT = ("tflite", "tflite:builtin")
CONVERT = ("import sys, json, torch, litert_torch; ep = torch.export.load(sys.argv[1]); "
           "litert_torch.convert(ep.module(), tuple(torch.zeros(s) for s in json.loads(sys.argv[3])))"
           ".export(sys.argv[2])")
needs_env = pytest.mark.skipif(converter_env.python() is None, reason="the LiteRT converter environment is not "
                               "built here (clipbridge chain-env build); test_litert_chain.py builds it")


def predicted(build: str) -> dict[str, str | None]:
    clips = child_torch.describe(models.MODELS[build]())["clips"]
    return {r["node"]: r["became"] for r in litert_table.table(clips, "tflite", None)}


@pytest.mark.parametrize(("build", "name", "became"), [
    pytest.param("clamps", "hardtanh", "RELU6(x)", id="relu6"),
    pytest.param("clamps", "hardtanh_1", "RELU_N1_TO_1(x)", id="hardtanh-n1-to-1"),
    pytest.param("clamps", "hardswish", "HARD_SWISH(x)", id="hardswish"),
    pytest.param("clamps", "hardsigmoid", "ADD(x, 3.0) (fused RELU6) -> MUL(x, 0.16666667)", id="hardsigmoid"),
    pytest.param("clamps", "clamp", "MAXIMUM(x, -2.0) -> MINIMUM(x, 2.0)", id="two-bounds"),
    pytest.param("clamps", "clamp_1", "MAXIMUM(x, -2.0) -> MINIMUM(x, 2.0)", id="two-int-bounds"),
    pytest.param("clamps", "clamp_2", "RELU(x)", id="min-zero-is-relu"),
    pytest.param("clamps", "clamp_3", "RELU(x)", id="int-min-zero-is-relu"),
    pytest.param("clamps", "clamp_4", "MINIMUM(x, 6.0)", id="max-only"),
    pytest.param("clamps", "clamp_6", "MAXIMUM(x, 1.0) -> MINIMUM(x, -1.0)", id="min-gt-max-kept"),
    pytest.param("clamp_min_int", "clamp_min", "RELU(x)", id="clamp-min-int-zero"),
    pytest.param("mobilenet", "hardtanh", "CONV_2D (fused RELU6)", id="relu6-fused-into-conv"),
    pytest.param("mobilenet", "hardswish", "HARD_SWISH(x)", id="hardswish-after-depthwise"),
    pytest.param("mobilenet", "relu", "CONV_2D (fused RELU)", id="relu-fused-into-conv"),
    pytest.param("mobilenet", "hardsigmoid", "CONV_2D (fused RELU6) -> MUL(x, 0.16666667)", id="hardsigmoid-conv"),
    pytest.param("inf_bounds", "clamp", "MAXIMUM(x, -inf) -> MINIMUM(x, 6.0)", id="infinite-min-kept"),
    pytest.param("inf_bounds", "clamp_1", "RELU(x) -> MINIMUM(x, inf)", id="relu-then-infinite-max"),
    pytest.param("root_clamps", "clamp", "MINIMUM(x, 6.0)", id="after-an-unfused-conv"),
    pytest.param("root_clamps", "clamp_2", "MUL(x, 2.0) (fused RELU6)", id="fused-into-mul"),
    pytest.param("conv_relu", "relu", "CONV_2D (fused RELU)", id="relu-fused-into-a-conv"),
])
def test_the_lowering_is_predicted_from_the_source(build: str, name: str, became: str) -> None:
    assert predicted(build)[name] == became


@pytest.mark.parametrize(("name", "rules"), [
    pytest.param("clamp", {"nan-to-constant-builtin", "conv-saturates-inf"}, id="minimum-after-conv"),
    pytest.param("clamp_1", {"nan-to-constant-builtin"}, id="maximum-minimum"),
    pytest.param("clamp_2", set(), id="fused-relu6-keeps-nan"),
])
def test_static_without_the_converter_predicts_the_builtin_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                name: str, rules: set[str]) -> None:
    monkeypatch.setenv("CLIPBRIDGE_CACHE", str(tmp_path))  # no converter environment: nothing converts
    body = report.chain(direct, models.root_clamps(), None, "torch,tflite,tflite:builtin", static=True)
    for to in LITERT:
        h = next(h for h in body["hops"] if h["to"] == to)
        assert h["status"] == "not-installed"
        assert all(r["became"] and r["pairing"] == litert_static.PREDICTED_HOW for r in h["lowering"])
    h = next(h for h in body["hops"] if h["to"] == "tflite:builtin")
    assert {p["rule"] for p in h["predicted"] if p["node"] == name} == rules


def test_every_fact_cites_its_evidence() -> None:
    assert set(litert_static.FACTS) == {f.__name__.replace("_", "-") for f in
                                        (*litert_static.LOWERING, litert_static.fused_into)}
    assert all(litert_static.FACTS.values())


@pytest.fixture(scope="module")
def source_only() -> dict[str, dict]:
    """Every chain test model's static report where no converter environment is (predicted from the source); the
    setting is undone before any other fixture runs."""
    with tempfile.TemporaryDirectory() as d, pytest.MonkeyPatch.context() as mp:
        mp.setenv("CLIPBRIDGE_CACHE", d)
        return {k: report.chain(direct, b(), None, "torch,tflite,tflite:builtin", static=True)
                for k, b in models.MODELS.items()}


@pytest.fixture(scope="module")
def measured() -> dict[str, dict]:
    """Every chain test model converted and run on a hostile input of its shape (NaN, +-inf, +-FLT_MAX)."""
    out = {}
    for k, build in models.MODELS.items():
        pt2 = build()
        x = _hostile(tuple(child_torch.describe(pt2)["inputs"][0]["shape"]))
        out[k] = {"pt2": pt2, "x": x, "body": report.chain(direct, pt2, npz(x=x), "torch,tflite,tflite:builtin")}
    return out


def _hostile(shape: tuple[int, ...]) -> np.ndarray:
    """conftest's hostile input; a tensor smaller than its specials holds the first of them."""
    if int(np.prod(shape)) >= 10:
        return hostile(shape)
    return hostile((10,))[: int(np.prod(shape))].reshape(shape)


def _hop(body: dict, to: str) -> dict:
    return next(h for h in body["hops"] if h["to"] == to)


@needs_env
@pytest.mark.slow
@pytest.mark.parametrize("build", list(models.MODELS))
@pytest.mark.parametrize("to", LITERT)
def test_the_prediction_is_what_litert_torch_wrote(source_only: dict, measured: dict, build: str, to: str) -> None:
    """`--static` without the converter names what the converted file holds, and the same findings."""
    want = [(r["node"], r["became"], sorted(f["rule"] for f in r["findings"]))
            for r in _hop(measured[build]["body"], to)["lowering"]]
    got = [(r["node"], r["became"], sorted(f["rule"] for f in r["findings"]))
           for r in _hop(source_only[build], to)["lowering"]]
    assert _hop(measured[build]["body"], to)["status"] == "ok" and _hop(source_only[build], to)["status"] == \
        "not-installed"
    assert got == want
    assert all(r["pairing"] != "unpaired" for r in _hop(measured[build]["body"], to)["lowering"])


@needs_env
@pytest.mark.slow
@pytest.mark.parametrize("build", list(models.MODELS))
@pytest.mark.parametrize("to", LITERT)
def test_static_predicts_every_cause_the_run_measures(source_only: dict, measured: dict, build: str,
                                                      to: str) -> None:
    h = _hop(measured[build]["body"], to)
    said = {(p["node"], p["rule"]) for p in _hop(source_only[build], to)["predicted"]}
    found = {(c["node"], c["rule"]) for c in h["confirmed"] + h["unpredicted"]}
    assert found <= said and h["unpredicted"] == []


@needs_env
@pytest.mark.slow
@pytest.mark.parametrize(("build", "to"), [pytest.param(b, t, id=f"{t}-{b}") for b in models.MODELS for t in LITERT])
def test_every_litert_hop_is_explained(measured: dict, build: str, to: str) -> None:
    assert _hop(measured[build]["body"], to)["against_source"]["verdict"] in ("equal", "explained")


@needs_env
@pytest.mark.slow
def test_a_difference_at_no_clamp_is_the_builtin_add_saturating(measured: dict) -> None:
    """clamp_min(x, 0) + 1: RELU keeps inf, the builtin ADD after it writes FLT_MAX; the output names the cause."""
    cmp = _hop(measured["clamp_min_int"]["body"], "tflite:builtin")["against_source"]
    assert all(n["origin"] is None for n in cmp["nodes"])
    assert [(o["differing"] > 0, o["cause"]) for o in cmp["outputs"]] == [(True, "arith-saturates-inf")]


def _direct(pt2: bytes, shape: list[int]) -> bytes:
    """litert_torch.convert called here, in the environment's interpreter, without clipbridge."""
    with tempfile.TemporaryDirectory() as d:
        src, dst = Path(d, "m.pt2"), Path(d, "m.tflite")
        src.write_bytes(pt2)
        subprocess.run([str(converter_env.python()), "-c", CONVERT, str(src), str(dst), f"[{shape}]"], check=True,
                       cwd=d, capture_output=True)
        return dst.read_bytes()


def _builtin(data: bytes, x: np.ndarray) -> tuple[list[np.ndarray], list[str]]:
    from ai_edge_litert import interpreter as lite
    it = lite.Interpreter(model_content=data,
                          experimental_op_resolver_type=lite.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    return [it.get_tensor(d["index"]).copy() for d in it.get_output_details()], \
        [op["op_name"] for op in it._get_ops_details()]


@needs_env
@pytest.mark.slow
def test_the_builtin_hop_names_a_first_divergence_and_a_cause(measured: dict) -> None:
    """Functional clamps the root does not return, on a hostile input: the builtin kernels differ from torch (the
    oracle: the file converted and run here), and the hop names the first divergence and the rules."""
    m = measured["root_clamps"]
    outs, ops = _builtin(_direct(m["pt2"], list(m["x"].shape)), m["x"])
    with torch.no_grad():
        eager = [t.numpy() for t in torch.export.load(io.BytesIO(m["pt2"])).module()(torch.from_numpy(m["x"]))]
    want = [compare.count(a, b if b.shape == a.shape else b.transpose(0, 3, 1, 2)) for a, b in zip(eager, outs)]
    h = _hop(m["body"], "tflite:builtin")
    cmp = h["against_source"]
    assert [o["differing"] for o in cmp["outputs"]] == want and any(want)
    assert {"MINIMUM", "MAXIMUM", "CONV_2D", "MUL"} <= set(ops)  # what the prediction named is in the file
    assert cmp["first_divergence"] is not None and cmp["first_divergence"]["node"] == "clamp"
    nodes = {n["node"]: n for n in cmp["nodes"]}
    assert nodes["clamp"]["cause"] == "nan-to-constant-builtin" and nodes["clamp_1"]["cause"] == \
        "nan-to-constant-builtin"
    assert {"node": "clamp", "rule": "conv-saturates-inf"} in h["confirmed"]
    assert cmp["verdict"] == "explained" and h["unpredicted"] == [] and h["not_reached"] == []


@needs_env
@pytest.mark.slow
def test_a_builtin_convolution_saturates_inf_in_its_fused_relu() -> None:
    """CONV_2D (fused RELU) on the builtin kernels writes FLT_MAX where torch and XNNPACK give inf (the oracle:
    the file converted and run here); the hop names the cause at the clamp's output, as `--static` predicted."""
    x = np.random.default_rng(1).standard_normal((1, 3, 8, 8)).astype(np.float32)
    x[0, 0, 4, 4] = np.inf
    pt2 = models.conv_relu()
    outs, _ = _builtin(_direct(pt2, [1, 3, 8, 8]), x)
    with torch.no_grad():
        eager = torch.export.load(io.BytesIO(pt2)).module()(torch.from_numpy(x)).numpy()
    got = outs[0] if outs[0].shape == eager.shape else outs[0].transpose(0, 3, 1, 2)
    saturated = np.isinf(eager) & (np.abs(got) == np.finfo(np.float32).max)
    body = report.chain(direct, pt2, npz(x=x), "torch,tflite,tflite:builtin")
    h = _hop(body, "tflite:builtin")
    n = h["against_source"]["nodes"][0]
    assert n["differing"] == compare.count(eager, got) and saturated.any()
    assert n["cause"] == "conv-saturates-inf" and h["against_source"]["first_divergence"]["at"] == "output"
    assert {"node": "relu", "rule": "conv-saturates-inf"} in h["confirmed"] and h["unpredicted"] == []
    assert _hop(body, "tflite")["against_source"]["verdict"] == "equal"
