"""Unknown query parameters are a 400 on every route (issue 43): walked from the app's own routes, so a new route
is covered without touching this file; the typos the issue found, by name; and the 400 declared in /openapi.json."""

from __future__ import annotations

import pytest
from fastapi.routing import APIRoute, iter_route_contexts
from fastapi.testclient import TestClient

from clipbridge.api.query_check import TITLE, accepted
from clipbridge.main import create_app

PROBLEM = "application/problem+json"
APP = create_app()
UNKNOWN = "clipbridge_no_such_parameter"
# Every operation of every API route, /openapi.json's and the unlisted ones (/metrics) alike; included routers
# are walked through FastAPI's own iterator (the one /openapi.json is built with).
OPERATIONS = sorted((method, ctx.path, ctx.original_route) for ctx in iter_route_contexts(APP.routes)
                    if isinstance(ctx.original_route, APIRoute) for method in ctx.methods if method != "HEAD")


@pytest.fixture(scope="module")
def api():
    with TestClient(APP) as c:
        yield c


def _send(api: TestClient, method: str, path: str, query: str):
    # A JSON body: the JSON routes check the content type and read the body before any parameter is looked at.
    return api.request(method, f"{path}?{query}", json={} if method == "POST" else None)


def _refused(r, name: str) -> dict:
    assert r.status_code == 400, (r.status_code, r.text[:300])
    assert r.headers["content-type"] == PROBLEM
    body = r.json()
    assert body["title"] == TITLE
    assert body["errors"][0]["loc"] == f"query.{name}"
    return body


def test_the_walk_covers_every_operation_in_the_schema():
    documented = {(m.upper(), p) for p, item in APP.openapi()["paths"].items() for m in item}
    walked = {(m, p) for m, p, _ in OPERATIONS}
    assert documented <= walked
    assert {("POST", "/v1/translate"), ("POST", "/v1/models/diff"), ("GET", "/v1/dialects")} <= documented


def test_the_accepted_names_are_the_documented_ones():
    """/openapi.json is built from the routes as included (router-level dependencies and all): a name it lists
    that the check does not accept would be refused though documented."""
    paths = APP.openapi()["paths"]
    for method, path, route in OPERATIONS:
        op = paths.get(path, {}).get(method.lower())
        if op is not None:
            documented = {p["name"] for p in op.get("parameters", []) if p["in"] == "query"}
            assert documented == set(accepted(route)), (method, path)


@pytest.mark.parametrize("method,path,route", OPERATIONS, ids=[f"{m} {p}" for m, p, _ in OPERATIONS])
def test_every_route_refuses_an_unknown_query_parameter(api, method, path, route):
    body = _refused(_send(api, method, path, f"{UNKNOWN}=1"), UNKNOWN)
    names = accepted(route)
    msg = body["errors"][0]["msg"]
    assert all(n in msg for n in names), (names, msg)
    assert ("takes no query parameters" in msg) == (not names)


TYPOS = [
    pytest.param("POST", "/v1/models/inspect", "targt=directml", "targt", "target", id="inspect-targt"),
    pytest.param("POST", "/v1/models/diff", "engines=openvino", "engines", "engine", id="diff-engines"),
    pytest.param("POST", "/v1/models/fix", "reference=onnxruntime&target=openvino&precison=model", "precison",
                 "precision", id="fix-precison"),
    pytest.param("POST", "/v1/models/chain", "chain=onnx&seeed=3", "seeed", "seed", id="chain-seeed"),
    pytest.param("POST", "/v1/models/rewrite", "target=directml&opst=13", "opst", "opset", id="rewrite-opst"),
    pytest.param("POST", "/v1/execute.npy", "requests=%7B%7D", "requests", "request", id="execute-npy-requests"),
    pytest.param("POST", "/v1/models/inspect", "Target=directml", "Target", "target", id="inspect-case"),
]


@pytest.mark.parametrize("method,path,query,name,hint", TYPOS)
def test_a_typo_names_the_parameter_the_accepted_ones_and_the_nearest(api, method, path, query, name, hint):
    body = _refused(_send(api, method, path, query), name)
    assert f"Did you mean {hint!r}?" in body["errors"][0]["msg"]
    assert f"query.{name}" in body["detail"]


NO_PARAMETERS = [
    pytest.param("POST", "/v1/translate", id="translate"),
    pytest.param("POST", "/v1/execute", id="execute"),
    pytest.param("POST", "/v1/compare", id="compare"),
    pytest.param("POST", "/v1/probe", id="probe"),
    pytest.param("POST", "/v1/bundle", id="bundle"),
    pytest.param("GET", "/v1/dialects", id="dialects"),
    pytest.param("GET", "/healthz", id="healthz"),
]


@pytest.mark.parametrize("method,path", NO_PARAMETERS)
def test_a_route_without_parameters_says_so(api, method, path):
    body = _refused(_send(api, method, path, "targets=openvino"), "targets")
    assert "This route takes no query parameters" in body["errors"][0]["msg"]


def test_translate_fast_path_does_not_skip_the_check(api):
    """A small valid body takes translate's fast path; a query string sends it the generic way, to the check."""
    spec = {"spec": {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "min": 0, "max": 6}}
    assert api.post("/v1/translate", json=spec).status_code == 200
    _refused(api.post("/v1/translate?targt=directml", json=spec), "targt")


def test_every_unknown_parameter_is_named_once(api):
    body = _refused(api.post("/v1/models/inspect?targt=a&targt=b&mod=literal&target=onnx"), "targt")
    assert [e["loc"] for e in body["errors"]] == ["query.targt", "query.mod"]


KNOWN = [
    pytest.param("GET", "/v1/dialects", "", 200, id="dialects-no-query"),
    pytest.param("POST", "/v1/models/inspect", "target=directml&target=onnx&mode=literal", 415,
                 id="inspect-repeated-known"),
    pytest.param("POST", "/v1/models/diff", "engine=onnxruntime,openvino&seed=3", 415, id="diff-known"),
]


@pytest.mark.parametrize("method,path,query,status", KNOWN)
def test_known_parameters_pass_the_check(api, method, path, query, status):
    """Declared names (repeated, comma lists) reach the route: its own answer (here 415 for a JSON body)."""
    r = _send(api, method, path, query) if query else api.request(method, path)
    assert r.status_code == status, r.text[:300]


def test_every_operation_declares_the_400():
    for path, item in APP.openapi()["paths"].items():
        for method, op in item.items():
            assert PROBLEM in op["responses"]["400"]["content"], (method, path)
