"""The chain's LiteRT hops for real: litert-torch 0.10.0 in its converter environment (built here when the cache
has none: a download of about 0.5 GB of wheels, 2.1 GB installed), the .tflite run on ai-edge-litert with each
delegate.

Oracles: torch eager and ai-edge-litert called here on a file litert-torch converts here, in the same environment
but without clipbridge (the counts), and the engines' own values for the rules (XNNPACK keeps NaN, the builtin
MAXIMUM/MINIMUM return the constant, the builtin CONV_2D saturates inf)."""

from __future__ import annotations

import io
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest
import torch

from clipbridge.chain import converter_env, report
from clipbridge.diff import compare
from clipbridge.diff.run import direct
from tests.chain import models
from tests.chain.conftest import HOSTILE, npz

pytestmark = pytest.mark.slow
ai_edge_litert = pytest.importorskip("ai_edge_litert")
CONVERT = ("import sys, json, torch, litert_torch; ep = torch.export.load(sys.argv[1]); "
           "litert_torch.convert(ep.module(), tuple(torch.zeros(s) for s in json.loads(sys.argv[3])))"
           ".export(sys.argv[2])")


@pytest.fixture(scope="module")
def env_python() -> str:
    """The converter environment: reused when the cache holds a complete one, else built (as the CLI does)."""
    return converter_env.build(log=lambda _: None)


def hop(body: dict, to: str) -> dict:
    return next(h for h in body["hops"] if h["to"] == to)


def row(h: dict, name: str) -> dict:
    return next(r for r in h["lowering"] if r["node"] == name)


@pytest.fixture(scope="module")
def clamps_lite(env_python: str, clamps_pt2: bytes) -> dict:
    return report.chain(direct, clamps_pt2, npz(x=HOSTILE), "torch,tflite,tflite:builtin")


@pytest.fixture(scope="module")
def mobilenet_lite(env_python: str, mobilenet_pt2: bytes) -> dict:
    return report.chain(direct, mobilenet_pt2, None, "torch,tflite,tflite:builtin", static=True)


def _direct_tflite(python: str, pt2: bytes, shape: list[int]) -> bytes:
    """litert_torch.convert called here, in the environment's interpreter, without clipbridge."""
    with tempfile.TemporaryDirectory() as d:
        src, dst = Path(d, "m.pt2"), Path(d, "m.tflite")
        src.write_bytes(pt2)
        subprocess.run([python, "-c", CONVERT, str(src), str(dst), f"[{shape}]"], check=True, cwd=d,
                       capture_output=True)
        return dst.read_bytes()


def _invoked(data: bytes, x: np.ndarray, builtin: bool):
    """An ai-edge-litert interpreter on the builtin kernels (or its defaults, XNNPACK), run once on x."""
    lite = ai_edge_litert.interpreter
    kind = lite.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES if builtin else lite.OpResolverType.AUTO
    it = lite.Interpreter(model_content=data, experimental_op_resolver_type=kind)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    return it


def _run(data: bytes, x: np.ndarray, builtin: bool) -> list[np.ndarray]:
    it = _invoked(data, x, builtin)
    return [it.get_tensor(d["index"]).copy() for d in it.get_output_details()]


@pytest.mark.parametrize(("name", "became"), [
    pytest.param("hardtanh", "RELU6(x)", id="relu6"),
    pytest.param("hardtanh_1", "RELU_N1_TO_1(x)", id="hardtanh-n1-to-1"),
    pytest.param("hardswish", "HARD_SWISH(x)", id="hardswish"),
    pytest.param("hardsigmoid", "ADD(x, 3.0) (fused RELU6) -> MUL(x, 0.16666667)", id="hardsigmoid-add-relu6-mul"),
    pytest.param("clamp", "MAXIMUM(x, -2.0) -> MINIMUM(x, 2.0)", id="clamp-maximum-then-minimum"),
    pytest.param("clamp_2", "RELU(x)", id="clamp-min-zero-is-relu"),
    pytest.param("clamp_4", "MINIMUM(x, 6.0)", id="clamp-max-is-minimum"),
    pytest.param("clamp_6", "MAXIMUM(x, 1.0) -> MINIMUM(x, -1.0)", id="min-gt-max"),
])
def test_lowering_reads_what_litert_torch_wrote(clamps_lite: dict, name: str, became: str) -> None:
    r = row(hop(clamps_lite, "tflite"), name)
    assert r["became"] == became and r["pairing"] != "unpaired"


@pytest.mark.parametrize(("name", "became"), [
    pytest.param("hardtanh", "CONV_2D (fused RELU6)", id="relu6-fused-into-conv"),
    pytest.param("relu", "CONV_2D (fused RELU)", id="relu-fused-into-conv"),
    pytest.param("hardswish", "HARD_SWISH(x)", id="hardswish"),
    pytest.param("hardsigmoid", "CONV_2D (fused RELU6) -> MUL(x, 0.16666667)", id="hardsigmoid-folded-into-conv"),
])
def test_mobilenet_lowering(mobilenet_lite: dict, name: str, became: str) -> None:
    assert row(hop(mobilenet_lite, "tflite"), name)["became"] == became


@pytest.mark.parametrize(("to", "builtin"), [pytest.param("tflite", False, id="xnnpack"),
                                            pytest.param("tflite:builtin", True, id="builtin")])
def test_each_hop_counts_what_the_engine_shows(env_python: str, clamps_pt2: bytes, clamps_lite: dict, to: str,
                                               builtin: bool) -> None:
    ep = torch.export.load(io.BytesIO(clamps_pt2))
    with torch.no_grad():
        eager = [t.numpy() for t in ep.module()(torch.from_numpy(HOSTILE))]
    lite = _run(_direct_tflite(env_python, clamps_pt2, [1, 64]), HOSTILE, builtin)
    want = [compare.count(a, b) for a, b in zip(eager, lite)]
    assert [o["differing"] for o in hop(clamps_lite, to)["against_source"]["outputs"]] == want and any(want)


@pytest.mark.parametrize("to", ["tflite", "tflite:builtin"])
def test_every_measured_cause_is_predicted_and_every_prediction_confirmed(clamps_lite: dict, to: str) -> None:
    h = hop(clamps_lite, to)
    assert h["unpredicted"] == [] and h["not_reached"] == []
    assert h["confirmed"] and h["against_source"]["verdict"] == "explained"


@pytest.mark.parametrize(("name", "builtin_gives"), [
    pytest.param("clamp", -2.0, id="maximum-then-minimum"),
    pytest.param("clamp_4", 6.0, id="minimum"),
    pytest.param("clamp_6", -1.0, id="min-gt-max"),
])
def test_xnnpack_keeps_nan_and_the_builtin_kernels_give_the_constant(clamps_lite: dict, name: str,
                                                                     builtin_gives: float) -> None:
    xnn = next(n for n in hop(clamps_lite, "tflite")["against_source"]["nodes"] if n["node"] == name)
    bi = next(n for n in hop(clamps_lite, "tflite:builtin")["against_source"]["nodes"] if n["node"] == name)
    assert xnn["differing"] == 0
    assert bi["cause"] == "nan-to-constant-builtin" and bi["witness"]["input"] == "nan"
    assert bi["witness"]["outputs"]["tflite:builtin"] == builtin_gives


def test_a_builtin_convolution_saturates_inf(env_python: str) -> None:
    x = np.random.default_rng(1).standard_normal((1, 3, 8, 8)).astype(np.float32)
    x[0, 0, 4, 4] = np.inf
    body = report.chain(direct, models.conv_hardswish(), npz(x=x), "torch,tflite,tflite:builtin")
    assert hop(body, "tflite")["against_source"]["verdict"] == "equal"  # XNNPACK keeps inf, as torch
    h = hop(body, "tflite:builtin")
    n = h["against_source"]["nodes"][0]
    assert (n["origin"], n["cause"], n["inherited_from"]) == ("inherited", "conv-saturates-inf", ["CONV_2D"])
    assert abs(n["witness"]["input"]) == 3.4028234663852886e+38
    assert h["against_source"]["first_divergence"]["at"] == "input"
    assert {"node": "hardswish", "rule": "conv-saturates-inf"} in h["confirmed"]


class Arith(torch.nn.Module):
    """Each builtin op of litert-arith-saturates-inf straight to an output, then a clamp fed by an unfused ADD."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(4, 5)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        y = x.flip(-1)
        f = torch.nn.functional
        return (x + 1.0, x - y, x * 2.0, x / y, self.fc(x), f.avg_pool2d(x, 2), f.max_pool2d(x, 2),
                torch.clamp(x + 0.5, min=-2.0))


SATURATING = ("ADD", "SUB", "MUL", "DIV", "FULLY_CONNECTED", "AVERAGE_POOL_2D", "MAX_POOL_2D")


def _writers(data: bytes, x: np.ndarray, builtin: bool) -> tuple[list[np.ndarray], list[str]]:
    """The outputs, and the op that wrote each (past a TRANSPOSE back to NCHW), as ai-edge-litert lists them."""
    it = _invoked(data, x, builtin)
    by_out = {o: op for op in it._get_ops_details() for o in op["outputs"]}
    names = []
    for d in it.get_output_details():
        op = by_out[d["index"]]
        while op["op_name"] in ("TRANSPOSE", "RESHAPE"):
            op = by_out[op["inputs"][0]]
        names.append(op["op_name"])
    return [it.get_tensor(d["index"]).copy() for d in it.get_output_details()], names


def test_builtin_arithmetic_saturates_inf(env_python: str) -> None:
    """Builtin ADD, SUB, MUL, DIV, FULLY_CONNECTED, AVERAGE_POOL_2D and MAX_POOL_2D write +-FLT_MAX where torch and
    XNNPACK give +-inf (the oracle: the file converted and run here); the hop names the rule at each output and
    at the clamp the ADD feeds, as `--static` predicted."""
    x = np.random.default_rng(1).standard_normal((1, 3, 4, 4)).astype(np.float32)
    x[0, 0, 0, 0], x[0, 1, 2, 1], x[0, 2, 3, 3] = np.inf, -np.inf, np.inf
    pt2 = models._save(Arith(), (1, 3, 4, 4))
    data = _direct_tflite(env_python, pt2, [1, 3, 4, 4])
    (builtin, ops), (xnn, _) = _writers(data, x, True), _writers(data, x, False)
    with torch.no_grad():
        eager = [t.numpy() for t in torch.export.load(io.BytesIO(pt2)).module()(torch.from_numpy(x))]
    assert tuple(ops[:7]) == SATURATING
    for e, b, g in zip(eager[:7], builtin, xnn):
        b, g = (t if t.shape == e.shape else t.transpose(0, 3, 1, 2) for t in (b, g))
        inf = np.isinf(e)
        assert inf.any() and (b[inf] == np.sign(e[inf]) * np.finfo(np.float32).max).all()
        assert (g[inf] == e[inf]).all()  # XNNPACK keeps inf
    body = report.chain(direct, pt2, npz(x=x), "torch,tflite,tflite:builtin")
    assert hop(body, "tflite")["against_source"]["verdict"] == "equal"
    h = hop(body, "tflite:builtin")
    cmp = h["against_source"]
    assert [o["cause"] for o in cmp["outputs"][:7]] == ["arith-saturates-inf"] * 7
    n = cmp["nodes"][0]
    assert (n["origin"], n["cause"], n["inherited_from"]) == ("inherited", "arith-saturates-inf", ["ADD"])
    assert {"node": n["node"], "rule": "arith-saturates-inf"} in h["confirmed"] and h["unpredicted"] == []
    assert cmp["verdict"] == "explained"


def test_infinite_bounds_stay_infinite_and_the_builtin_kernels_return_them(env_python: str) -> None:
    """litert-torch 0.10.0 writes the infinite constant as it is (no finite extreme in its place); the builtin
    MAXIMUM(NaN, -inf) returns -inf (nan-to-constant-builtin), XNNPACK keeps NaN."""
    x = np.array([[np.nan, np.inf, -np.inf, 3.4e38, -3.4e38, 1.0, -1.0, 7.0]], np.float32)
    body = report.chain(direct, models.inf_bounds(), npz(x=x), "torch,tflite,tflite:builtin")
    assert [r["became"] for r in hop(body, "tflite")["lowering"]] == \
        ["MAXIMUM(x, -inf) -> MINIMUM(x, 6.0)", "RELU(x) -> MINIMUM(x, inf)", "MAXIMUM(x, -inf) -> MINIMUM(x, 2.0)"]
    assert hop(body, "tflite")["against_source"]["verdict"] == "equal"
    h = hop(body, "tflite:builtin")
    assert h["against_source"]["verdict"] == "explained" and h["unpredicted"] == [] and h["not_reached"] == []
    assert [n["witness"]["outputs"]["tflite:builtin"] for n in h["against_source"]["nodes"]] == ["-inf", "inf", "-inf"]


def test_the_hop_names_the_environment(clamps_lite: dict) -> None:
    conv = hop(clamps_lite, "tflite")["converter"]
    assert conv["version"] == "0.10.0" and conv["options"]["environment"] == "litert-torch-0.10.0"
