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
    assert body["verdict"] == "explained" and body["inputs"]["seed"] == 20240
    assert [e["name"] for e in body["engines"]] == ["onnxruntime", "openvino"]
    assert body["nodes"][0]["node"] == "relu_1" and body["nodes"][0]["cause"] == "nan-input"


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
    answered(post(client, model, None, query))


def test_bodies_match_the_schema(client, mnv2):
    """Every body the route answers is a DiffResponse (schemas/DiffResponse.json)."""
    from app.api.diff_models import DiffResponse
    for model, query in ((M.relu_chain(), ""), (M.plain_chain(), ""), (mnv2, "?precision=deployed"),
                         (M.clip_chain(None, 6.0), "?engine=onnxruntime&engine=onnx-reference&engine=openvino")):
        r = post(client, model, None, query)
        assert r.status_code == 200, r.text
        DiffResponse.model_validate(r.json())
