"""One vocabulary (docs/api.md#one-vocabulary): every request names its spec `spec`, a list of dialects `targets`
and one dialect `target`. The old names (`source`, `semantics`) are read as the new ones until 0.2.0; an old name
sent beside its new one is a 422 that names the new field."""

from __future__ import annotations

import io
import json
import urllib.parse

import numpy as np
import pytest

from clipbridge.api.lint_models import ProbeRequest
from clipbridge.api.models import OLD_NAMES_UNTIL, CompareRequest, ExecuteOptions, TranslateRequest

SPEC = {"dialect": "onnx", "opset": 13, "elem_type": "INT8", "min": 5, "max": 2}
INPUT = {"dtype": "int8", "shape": [3], "data": [-128, 3, 127]}

# (endpoint, the body with the new names, the old name, the new name)
CASES = {
    "translate-source": ("/v1/translate", {"spec": SPEC, "targets": ["directml"]}, "source", "spec"),
    "execute-semantics": ("/v1/execute", {"spec": SPEC, "input": INPUT, "target": "directml"}, "semantics", "target"),
    "compare-semantics": ("/v1/compare", {"spec": SPEC, "input": INPUT, "targets": ["onnx", "tflite"]}, "semantics",
                          "targets"),
    "probe-semantics": ("/v1/probe", {"spec": SPEC, "targets": ["onnx", "directml"]}, "semantics", "targets"),
    "bundle-semantics": ("/v1/bundle", {"spec": SPEC, "targets": ["onnx", "directml"]}, "semantics", "targets"),
}


def _renamed(body: dict, old: str, new: str) -> dict:
    return {(old if k == new else k): v for k, v in body.items()}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_old_name_is_read_as_the_new_one(client, case):
    path, body, old, new = CASES[case]
    a = client.post(path, json=body)
    b = client.post(path, json=_renamed(body, old, new))
    assert a.status_code == b.status_code == 200, (a.text, b.text)
    if path == "/v1/bundle":
        assert a.headers["content-type"] == b.headers["content-type"]
    else:
        assert a.json() == b.json()


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_old_name_beside_the_new_one_is_a_422_naming_the_new_field(client, case):
    path, body, old, new = CASES[case]
    r = client.post(path, json={**body, old: body[new]})
    assert r.status_code == 422, r.text
    assert r.json()["errors"] == [{"loc": new, "msg": f"`{old}` is the old name of `{new}`: send only `{new}`"}]


@pytest.mark.parametrize("model,new,old", [
    (TranslateRequest, "spec", "source"), (ExecuteOptions, "target", "semantics"),
    (CompareRequest, "targets", "semantics"), (ProbeRequest, "targets", "semantics"),
], ids=["translate", "execute", "compare", "probe"])
def test_schemas_show_only_the_new_names(model, new, old):
    props = model.model_json_schema()["properties"]
    assert "spec" in props and new in props and old not in props


def test_execute_npy_request_reads_old_and_new_names(client):
    buf = io.BytesIO()
    np.save(buf, np.array([-128, 3, 127], dtype=np.int8))
    for opts, status in [({"spec": SPEC, "target": "directml"}, 200), ({"spec": SPEC, "semantics": "directml"}, 200),
                         ({"spec": SPEC, "semantics": "onnx", "target": "directml"}, 422)]:
        q = urllib.parse.quote(json.dumps(opts))
        r = client.post(f"/v1/execute.npy?request={q}", content=buf.getvalue(),
                        headers={"content-type": "application/x-npy"})
        assert r.status_code == status, r.text
        if status == 200:
            assert r.headers["x-clipbridge-semantics"] == "directml"
            assert np.load(io.BytesIO(r.content)).tolist() == [5, 5, 5]
        else:
            assert r.json()["errors"][0]["loc"] == "request.target"


def test_the_deadline_is_a_release_after_this_one():
    from clipbridge import __version__
    assert tuple(map(int, OLD_NAMES_UNTIL.split("."))) > tuple(map(int, __version__.split(".")))
