"""POST /v1/models/diff: the body, the errors (4xx naming the field, the engine's own message), and generated
models and inputs (hypothesis, fixed seed, bounded budget) that never get a 5xx."""

from __future__ import annotations

import io
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.diff import models as M
from tests.diff.conftest import npz
from tests.hostile.strategies import mutated, onnx_models
from tests.hostile.test_native_regressions import MODELS as ISSUE_23

pytestmark = pytest.mark.engines
URL = "/v1/models/diff"
BUDGET = int(os.environ.get("CLIPBRIDGE_FUZZ_EXAMPLES", "0"))


def post(client, model: bytes, inputs: bytes | None = None, query: str = ""):
    files = {"model": ("m.onnx", model)} | ({"inputs": ("in.npz", inputs)} if inputs is not None else {})
    return client.post(URL + query, files=files)


def answered(r) -> None:
    assert r.status_code < 500, (r.status_code, r.text[:400])
    if r.status_code >= 400:
        assert r.headers["content-type"].startswith("application/problem+json")
        assert r.json()["errors"][0]["loc"], r.text


def test_explained_relu(client):
    r = post(client, M.relu_chain())
    assert r.status_code == 200, r.text
    body = r.json()
    # Issue 44: the ordinary sample agrees; the edge probe (the API's default) names the Relu's NaN.
    assert body["verdict"] == "equal" and body["inputs"]["seed"] == 20240 and body["fails"] is False
    assert [e["name"] for e in body["engines"]] == ["onnxruntime", "openvino"]
    edge = body["edge"]
    assert edge["verdict"] == "explained" and edge["inputs"]["sample"] == "edge"
    assert edge["nodes"][0]["node"] == "relu_1" and edge["nodes"][0]["cause"] == "nan-input"
    failing = post(client, M.relu_chain(), None, "?fail_on=edge").json()
    assert failing["fails"] is True and failing["fail_on"] == ["edge"]


def test_the_edge_section_has_its_own_graph(client):
    """The inspector draws the edge pass too: its graph holds the edge section's first divergence, while the
    ordinary pass, where nothing differs, has none."""
    body = post(client, M.relu_chain()).json()
    assert body["graph"] is None
    graph = body["edge"]["graph"]
    assert graph is not None and graph["scope"] == "paths"
    assert body["edge"]["first_divergence"]["node"] in {n["name"] for n in graph["nodes"]}


def test_given_inputs_and_three_engines(client):
    x = np.array([-np.inf, 1.0, 2.0, 3.0], np.float32)
    r = post(client, M.clip_chain(None, 6.0), npz(x=x), "?engine=onnxruntime&engine=onnx-reference")
    assert r.status_code == 200, r.text
    assert r.json()["inputs"]["source"] == "given" and r.json()["nodes"][0]["cause"] == "default-bound"


@pytest.mark.parametrize("query, files, status, loc", [
    pytest.param("?engine=tensorrt", None, 400, "query.engine", id="unknown-engine"),
    pytest.param("?engine=onnxruntime", None, 400, "query.engine", id="one-engine"),
    pytest.param("?precision=fast", None, 422, "query.precision", id="bad-precision"),
    pytest.param("?rtol=-1", None, 422, "query.rtol", id="negative-rtol"),
    pytest.param("", {"model": ("m.onnx", b"\x08\x07junk")}, 400, "model", id="not-onnx"),
    pytest.param("", {"model": ("m.onnx", b"")}, 400, "model", id="empty"),
    pytest.param("", {"inputs": ("i.npz", b"x")}, 400, "model", id="no-model"),
    pytest.param("", {"model": ("m.onnx", M.relu_chain()), "extra": ("e", b"1")}, 400, "extra", id="extra-field"),
    pytest.param("", {"model": ("m.onnx", M.relu_chain()), "inputs": ("i.npz", b"PK\x03\x04junk")}, 400, "inputs",
                 id="bad-npz"),
    pytest.param("", {"model": ("m.onnx", M.relu_chain()), "inputs": ("i.npz", npz(z=np.zeros(4, np.float32)))},
                 400, "inputs", id="npz-wrong-name"),
    pytest.param("", {"model": ("m.onnx", M.relu_chain()), "inputs": ("i.npz", npz(x=np.zeros(4)))}, 400, "inputs",
                 id="npz-wrong-dtype"),
])
def test_errors_name_the_field(client, query, files, status, loc):
    r = client.post(URL + query, files=files or {"model": ("m.onnx", M.relu_chain())})
    assert r.status_code == status, r.text
    assert loc in [e["loc"] if isinstance(e["loc"], str) else ".".join(map(str, e["loc"]))
                   for e in r.json()["errors"]], r.text


def test_raw_body_is_415(client):
    r = client.post(URL, content=M.relu_chain(), headers={"content-type": "application/octet-stream"})
    assert r.status_code == 415


def test_engine_that_cannot_load_quotes_it(client):
    from onnx import helper
    g = helper.make_graph([helper.make_node("Foo", ["x"], ["y"], domain="custom.x")], "g",
                          [helper.make_tensor_value_info("x", 1, [2])], [helper.make_tensor_value_info("y", 1, [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("custom.x", 1)],
                          ir_version=8)
    r = post(client, m.SerializeToString())
    assert r.status_code == 422 and "onnxruntime cannot load the model" in r.json()["detail"]
    assert "custom.x:Foo" in r.json()["detail"]


@settings(max_examples=BUDGET or 12, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(data=st.data(), mutate=st.booleans(),
       engines=st.sampled_from(["", "?engine=onnxruntime,onnx-reference", "?engine=openvino&engine=onnx-reference"]),
       precision=st.sampled_from(["", "precision=deployed"]))
def test_generated_models_never_5xx(client, data, mutate, engines, precision):
    model = data.draw(onnx_models())
    if mutate:
        model = data.draw(mutated(model))
    query = engines + (("&" if engines else "?") + precision if precision else "")
    answered(post(client, model, data.draw(npz_inputs()), query))


@st.composite
def npz_inputs(draw) -> bytes | None:
    """No inputs (generated), garbage, or an .npz whose names, dtypes and shapes may or may not fit."""
    kind = draw(st.sampled_from(["none", "none", "npz", "garbage"]))
    if kind == "none":
        return None
    if kind == "garbage":
        return draw(st.binary(max_size=64))
    dtype = draw(st.sampled_from([np.float32, np.float16, np.float64, np.int32, np.uint8]))
    shape = draw(st.sampled_from([(4,), (), (2, 3), (1, 4), (0,)]))
    values = draw(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32), min_size=1, max_size=1))
    with np.errstate(invalid="ignore", over="ignore"):
        array = np.full(shape, values[0]).astype(dtype)
    return npz(**{draw(st.sampled_from(["x", "y", "X", "input"])): array})


def test_bodies_match_the_schema(client, mnv2):
    """Every body the route answers is a DiffResponse (schemas/DiffResponse.json)."""
    from clipbridge.diff.models import DiffResponse
    for model, query in ((M.relu_chain(), ""), (M.plain_chain(), ""), (mnv2, "?precision=deployed"),
                         (M.clip_chain(None, 6.0), "?engine=onnxruntime&engine=onnx-reference&engine=openvino")):
        r = post(client, model, None, query)
        assert r.status_code == 200, r.text
        DiffResponse.model_validate(r.json())


def test_a_crashing_engine_costs_one_answer(client, monkeypatch):
    """An engine that dies in the diff's sandbox child is a 422 naming the stage; the next diff is answered."""
    from clipbridge.api import diff_routes
    from tests import sandbox_tasks
    real = diff_routes.isolated

    def crashing(stage, fn, /, *args):
        return real(stage, sandbox_tasks.segfault) if stage == "diff" else real(stage, fn, *args)
    monkeypatch.setattr(diff_routes, "isolated", crashing)
    r = post(client, M.relu_chain())
    assert r.status_code == 422, r.text
    assert r.json()["detail"].startswith("diff crashed on this model")
    monkeypatch.setattr(diff_routes, "isolated", real)
    assert post(client, M.relu_chain()).json()["edge"]["verdict"] == "explained"


@pytest.mark.parametrize("name", sorted(p.name for p in ISSUE_23.glob("*.onnx")))
def test_issue_23_models_never_5xx(client, name):
    answered(post(client, (ISSUE_23 / name).read_bytes()))


@st.composite
def runnable_models(draw) -> bytes:
    """x -> 1 to 3 random clip-like (or plain) ops with random constants -> y: every engine loads these."""
    from onnx import helper
    f = st.floats(-8, 8, width=32)
    nodes, inits, cur = [], [], "x"
    for i in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["Relu", "Clip", "ClipMax", "HardSigmoid", "LeakyRelu", "Max", "Min", "Mul"]))
        out, c = f"t{i}", f"c{i}"
        if op in ("Clip", "ClipMax"):
            lo, hi = draw(f), draw(f)
            inits += [M.const(f"{c}lo", lo), M.const(f"{c}hi", hi)]
            nodes.append(helper.make_node("Clip", [cur, "" if op == "ClipMax" else f"{c}lo", f"{c}hi"], [out],
                                          name=f"n{i}"))
        elif op in ("Max", "Min", "Mul"):
            inits.append(M.const(c, draw(f)))
            args = [cur, c] if draw(st.booleans()) else [c, cur]
            nodes.append(helper.make_node(op, args, [out], name=f"n{i}"))
        elif op == "HardSigmoid":
            nodes.append(helper.make_node(op, [cur], [out], name=f"n{i}", alpha=draw(f), beta=draw(f)))
        elif op == "LeakyRelu":
            nodes.append(helper.make_node(op, [cur], [out], name=f"n{i}", alpha=draw(st.sampled_from([0.0, 0.1]))))
        else:
            nodes.append(helper.make_node(op, [cur], [out], name=f"n{i}"))
        cur = out
    nodes.append(helper.make_node("Identity", [cur], ["y"], name="out"))
    return M.graph(nodes, inits, shape=(6,), opset=17)


@settings(max_examples=BUDGET or 15, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(model=runnable_models(), given_inputs=st.booleans(),
       values=st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32), min_size=6, max_size=6))
def test_runnable_models_give_consistent_bodies(client, model, given_inputs, values):
    from clipbridge.diff.models import DiffResponse
    inputs = npz(x=np.array(values, np.float32)) if given_inputs else None
    r = post(client, model, inputs, "?engine=onnxruntime&engine=openvino&engine=onnx-reference")
    assert r.status_code == 200, r.text
    body = DiffResponse.model_validate(r.json())
    differ = any(o.differing for o in body.outputs)
    assert (body.verdict == "equal") == (not differ and not body.nodes and body.first_divergence is None)
    if body.nodes:
        assert body.first_divergence is not None
        assert body.nodes[0].node == body.first_divergence.node or body.first_divergence.op not in (
            "Relu", "Clip", "HardSigmoid", "LeakyRelu", "Max", "Min")
    for n in body.nodes:
        assert n.witness is not None and (n.origin == "introduced") == (n.inherited_from is None)
