"""Access control (CLIPBRIDGE_API_KEY on every /v1 endpoint), the CORS allow-list, and the request limits."""

from __future__ import annotations

import io
import json
import urllib.parse
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient

from clipbridge.core.errors import ClipBridgeError
from clipbridge.main import create_app
from clipbridge.core.settings import Settings

KEY = "k3y-for-tests-0123456789"
SPEC = {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "min": 0, "max": 6}
TRANSLATE = {"source": SPEC}


@pytest.fixture(scope="module")
def keyed():
    with TestClient(create_app(Settings(api_key=KEY))) as c:
        yield c


def v1_routes(app) -> list[tuple[str, str]]:
    return [(method.upper(), path) for path, item in app.openapi()["paths"].items() if path.startswith("/v1")
            for method in item]


def test_without_a_key_configured_v1_is_open(client):
    assert client.post("/v1/translate", json=TRANSLATE).status_code == 200


def test_every_v1_endpoint_needs_the_key(keyed):
    routes = v1_routes(keyed.app)
    assert {("POST", "/v1/translate"), ("GET", "/v1/dialects"), ("POST", "/v1/execute"),
            ("POST", "/v1/execute.npy"), ("POST", "/v1/compare")} <= set(routes)
    for method, path in routes:
        r = keyed.request(method, path, content=b"{}", headers={"content-type": "application/json"})
        assert r.status_code == 401, (method, path, r.status_code)
        assert r.headers["content-type"].startswith("application/problem+json")
        assert r.headers["www-authenticate"].startswith("Bearer")
        assert r.json()["title"] == "Unauthorized" and "X-API-Key" in r.json()["detail"]


@pytest.mark.parametrize("headers", [{"X-API-Key": KEY}, {"Authorization": f"Bearer {KEY}"},
                                     {"authorization": f"bearer  {KEY} "}, {"x-api-key": f" {KEY}"}],
                         ids=["x-api-key", "bearer", "bearer-lowercase-spaces", "x-api-key-padded"])
def test_the_key_opens_v1(keyed, headers):
    assert keyed.post("/v1/translate", json=TRANSLATE, headers=headers).status_code == 200
    assert keyed.get("/v1/dialects", headers=headers).status_code == 200


@pytest.mark.parametrize("headers", [{"X-API-Key": KEY + "x"}, {"X-API-Key": KEY[:-1]}, {"X-API-Key": ""},
                                     {"Authorization": f"Basic {KEY}"}, {"Authorization": KEY},
                                     {"X-API-Key": "wrong", "Authorization": f"Bearer {KEY}"}],
                         ids=["longer", "prefix", "empty", "basic-scheme", "no-scheme", "x-api-key-wins"])
def test_a_wrong_key_is_401(keyed, headers):
    r = keyed.post("/v1/translate", json=TRANSLATE, headers=headers)
    assert r.status_code == 401
    assert r.headers["content-type"].startswith("application/problem+json")


@pytest.mark.parametrize("path", ["/healthz", "/metrics", "/", "/docs", "/openapi.json"])
def test_open_paths_stay_open(keyed, path):
    assert keyed.get(path).status_code == 200


def test_static_files_stay_open(keyed):
    """app/clipbridge/static/main.js ships with the package: served without a key, as the file itself."""
    r = keyed.get("/static/main.js")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith(("text/javascript", "application/javascript"))
    assert r.content == (Path(__file__).parent.parent / "app" / "clipbridge" / "static" / "main.js").read_bytes()
    missing = keyed.get("/static/no-such-file.js")  # an absent file is 404, not 401
    assert missing.status_code == 404


def test_401_comes_before_the_body_is_read_or_limited(keyed):
    """An unauthenticated client learns nothing about limits: 401, not 413, whatever it claims to send."""
    r = keyed.post("/v1/translate", content=b"{}", headers={"content-type": "application/json",
                                                            "content-length": str(1 << 40)})
    assert r.status_code == 401


def test_a_root_path_does_not_dodge_the_check():
    with TestClient(create_app(Settings(api_key=KEY)), root_path="/api") as c:
        assert c.post("/api/v1/translate", json=TRANSLATE).status_code == 401
        assert c.post("/api/v1/translate", json=TRANSLATE, headers={"X-API-Key": KEY}).status_code == 200
        assert c.get("/api/healthz").status_code == 200


def test_the_schema_declares_the_key_only_when_set(client, keyed):
    assert "securitySchemes" not in client.app.openapi().get("components", {})
    spec = keyed.app.openapi()
    assert set(spec["components"]["securitySchemes"]) == {"ApiKey", "Bearer"}
    assert spec["paths"]["/v1/translate"]["post"]["security"] == [{"ApiKey": []}, {"Bearer": []}]
    assert "401" in spec["paths"]["/v1/translate"]["post"]["responses"]
    assert "security" not in spec["paths"]["/healthz"]["get"]


def test_the_key_is_read_from_the_environment_and_never_printed(monkeypatch):
    monkeypatch.setenv("CLIPBRIDGE_API_KEY", " from-env-0123456789\n")  # a secret file's newline is trimmed
    monkeypatch.setenv("CLIPBRIDGE_CORS_ORIGINS", "https://a.example, https://b.example,")
    s = Settings.from_env()
    assert s.api_key == "from-env-0123456789" and "from-env" not in repr(s)
    assert s.cors_origins == ("https://a.example", "https://b.example")
    monkeypatch.setenv("CLIPBRIDGE_API_KEY", "  ")  # set but blank: refuses to start (it once meant: no auth)
    with pytest.raises(ClipBridgeError, match="CLIPBRIDGE_API_KEY"):
        Settings.from_env()


# --- CORS ------------------------------------------------------------------------------------------------------

def test_cors_default_is_same_origin_only(client):
    r = client.post("/v1/translate", json=TRANSLATE, headers={"Origin": "https://elsewhere.example"})
    assert r.status_code == 200 and "access-control-allow-origin" not in r.headers
    pre = client.options("/v1/translate", headers={"Origin": "https://elsewhere.example",
                                                   "Access-Control-Request-Method": "POST"})
    assert "access-control-allow-origin" not in pre.headers


def test_cors_allow_list():
    app = create_app(Settings(api_key=KEY, cors_origins=("https://inspector.example",)))
    with TestClient(app) as c:
        ok = {"Origin": "https://inspector.example"}
        pre = c.options("/v1/translate", headers={**ok, "Access-Control-Request-Method": "POST",
                                                  "Access-Control-Request-Headers": "x-api-key, content-type"})
        assert pre.status_code == 200  # a preflight carries no key and needs none
        assert pre.headers["access-control-allow-origin"] == "https://inspector.example"
        allowed = pre.headers["access-control-allow-headers"].lower()
        assert "x-api-key" in allowed and "content-type" in allowed
        r = c.post("/v1/translate", json=TRANSLATE, headers={**ok, "X-API-Key": KEY})
        assert r.status_code == 200
        assert r.headers["access-control-allow-origin"] == "https://inspector.example"
        assert "x-request-id" in r.headers["access-control-expose-headers"].lower()
        denied = c.options("/v1/translate", headers={"Origin": "https://evil.example",
                                                     "Access-Control-Request-Method": "POST"})
        assert denied.status_code == 400 and "access-control-allow-origin" not in denied.headers
        r = c.post("/v1/translate", json=TRANSLATE, headers={"Origin": "https://evil.example", "X-API-Key": KEY})
        assert "access-control-allow-origin" not in r.headers


# --- limits ----------------------------------------------------------------------------------------------------

def npy(x: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, x)
    return buf.getvalue()


def test_limits_are_configured_in_settings(monkeypatch):
    for name, value in [("CLIPBRIDGE_MAX_MODEL_BYTES", "1234"), ("CLIPBRIDGE_MAX_EXECUTION_SECONDS", "2.5"),
                        ("CLIPBRIDGE_ACCESS_LOG", "0"), ("CLIPBRIDGE_GRACEFUL_SHUTDOWN_SECONDS", "7")]:
        monkeypatch.setenv(name, value)
    s = Settings.from_env()
    assert (s.max_model_bytes, s.max_execution_seconds, s.access_log, s.graceful_shutdown_seconds) == \
        (1234, 2.5, False, 7)
    monkeypatch.setenv("CLIPBRIDGE_MAX_EXECUTION_SECONDS", "soon")
    with pytest.raises(ClipBridgeError, match="CLIPBRIDGE_MAX_EXECUTION_SECONDS"):
        Settings.from_env()
    monkeypatch.setenv("CLIPBRIDGE_MAX_EXECUTION_SECONDS", "1")
    monkeypatch.setenv("CLIPBRIDGE_ACCESS_LOG", "maybe")
    with pytest.raises(ClipBridgeError, match="CLIPBRIDGE_ACCESS_LOG"):
        Settings.from_env()


def test_model_size_limit_is_413_before_reading():
    with TestClient(create_app(Settings(max_model_bytes=1000, max_body_bytes=10_000))) as c:
        r = c.post("/v1/models/inspect", content=b"\0" * 2000, headers={"content-type": "application/octet-stream"})
        assert r.status_code == 413 and "CLIPBRIDGE_MAX_MODEL_BYTES" in r.json()["detail"]
        r = c.post("/v1/models/inspect", content=b"\0" * 10, headers={"content-type": "application/octet-stream",
                                                                      "content-length": str(1 << 40)})
        assert r.status_code == 413
        # the JSON limit (10 000) does not apply to models, nor the model limit to JSON
        assert c.post("/v1/translate", content=b" " * 5000 + json.dumps(TRANSLATE).encode(),
                      headers={"content-type": "application/json"}).status_code == 200


def test_streamed_bodies_past_a_limit_are_413_not_400():
    """A chunked body (no Content-Length) is counted as it arrives; passing the limit is 413 wherever it is read
    (FastAPI's JSON parser used to turn the limit's exception into 400)."""
    settings = Settings(max_body_bytes=10_000, max_npy_bytes=10_000, max_model_bytes=10_000)

    def stream(n: int):
        for _ in range(n):
            yield b" " * 1000

    with TestClient(create_app(settings)) as c:
        for path, ctype in [("/v1/translate", "application/json"), ("/v1/compare", "application/json"),
                            ("/v1/models/inspect", "application/octet-stream"),
                            ("/v1/execute.npy?request=" + urllib.parse.quote(json.dumps({"spec": SPEC})),
                             "application/x-npy")]:
            r = c.post(path, content=stream(20), headers={"content-type": ctype})
            assert r.status_code == 413, (path, r.status_code, r.text)
            assert r.headers["content-type"].startswith("application/problem+json")


def test_tensor_element_limits():
    with TestClient(create_app(Settings(max_json_elements=4, max_npy_elements=4))) as c:
        r = c.post("/v1/execute", json={"spec": SPEC, "input": {"dtype": "float32", "shape": [5],
                                                                "data": [0] * 5}})
        assert r.status_code == 413 and "CLIPBRIDGE_MAX_JSON_ELEMENTS" in r.json()["detail"]
        r = c.post("/v1/execute.npy?request=" + urllib.parse.quote(json.dumps({"spec": SPEC})),
                   content=npy(np.zeros(5, np.float32)), headers={"content-type": "application/x-npy"})
        assert r.status_code == 413


# --- issue 34: a constant of the wrong type is a 4xx on every model endpoint; nothing outside the upload ------

def _clip_with_bound(elem: int, value) -> bytes:
    from onnx import TensorProto, helper
    g = helper.make_graph([helper.make_node("Clip", ["x", "lo", "hi"], ["y"], name="c")], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
                          [helper.make_tensor("lo", elem, [], [value]),
                           helper.make_tensor("hi", TensorProto.FLOAT, [], [6.0])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8).SerializeToString()


def _send(c: TestClient, endpoint: str, model: bytes):
    import base64
    raw = {"content-type": "application/octet-stream"}
    if endpoint == "inspect":
        return c.post("/v1/models/inspect", content=model, headers=raw)
    if endpoint == "rewrite":
        return c.post("/v1/models/rewrite?target=openvino", content=model, headers=raw)
    if endpoint == "diff":
        return c.post("/v1/models/diff", files={"model": ("m.onnx", model)})
    if endpoint == "fix":
        return c.post("/v1/models/fix?reference=onnxruntime&target=openvino", files={"model": ("m.onnx", model)})
    return c.post("/v1/translate", json={"source": {"dialect": "onnx", "node": "c",
                                                    "model": base64.b64encode(model).decode()}})


@pytest.fixture(scope="module")
def served():
    with TestClient(create_app(Settings()), raise_server_exceptions=False) as c:
        yield c


@pytest.mark.parametrize("endpoint", ["inspect", "rewrite", "diff", "fix", "translate"])
@pytest.mark.parametrize("elem,value", [
    pytest.param(8, b"abc", id="string-min"),  # TensorProto.STRING: the audit's 500 on inspect
    pytest.param(14, 1 + 2j, id="complex-min"),  # TensorProto.COMPLEX64
])
def test_a_bound_of_the_wrong_type_is_a_4xx_naming_it(served, endpoint, elem, value):
    """The audit's 500 on inspect: a bound that is no number is a 4xx problem+json on every model endpoint
    (issue 34), naming the tensor wherever the checked constant reader is what refuses it."""
    r = _send(served, endpoint, _clip_with_bound(elem, value))
    assert 400 <= r.status_code < 500, (r.status_code, r.text[:300])
    assert r.headers["content-type"].startswith("application/problem+json")
    detail = r.json()["detail"]
    if endpoint in ("inspect", "rewrite", "diff"):  # the checked constant reader names the tensor
        assert "'lo'" in detail, detail
    if endpoint == "fix":  # onnx.checker, in the child, refuses it first: it names the node
        assert "node name: c" in detail, detail
