"""Errors a newcomer can act on: one error per cause, at the exact field, '<rule>. Got: <value>' + did you mean."""

from __future__ import annotations

import pytest

from clipbridge.dialects import registry

NAMES = ", ".join(registry.DIALECTS)  # every registered dialect, in registry order

GOOD = {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "min": 0, "max": 6}
TENSOR = {"dtype": "float32", "shape": [1], "data": [1]}

# id, path, body, the one loc, fragments of its msg (all must appear), fragments that must not
CASES = [
    ("target-fl-typo", "/v1/translate", {"spec": GOOD, "targets": [{"dialect": "directml", "feature_level": "9_9"}]},
     "targets[0].feature_level", ["Got: '9_9'", "6_4"], ["source"]),
    ("second-target-version", "/v1/translate",
     {"spec": GOOD, "targets": ["directml", {"dialect": "openvino", "version": "opset99"}]},
     "targets[1].version", ["Got: 'opset99'", "opset1 .. opset16"], []),
    ("target-version-near-miss", "/v1/translate",
     {"spec": GOOD, "targets": [{"dialect": "openvino", "version": "opset 13"}]},
     "targets[0].version", ["Did you mean 'opset13'?"], []),
    ("target-dialect-typo-object", "/v1/translate", {"spec": GOOD, "targets": [{"dialect": "openvin"}]},
     "targets[0].dialect", ["Got: 'openvin'", "Did you mean 'openvino'?"], ["Input tag", "tagged-union"]),
    ("target-dialect-typo-name", "/v1/translate", {"spec": GOOD, "targets": ["openvin"]},
     "targets[0]", ["Got: 'openvin'", "Did you mean 'openvino'?"], ["dictionary"]),
    ("target-opset-zero", "/v1/translate", {"spec": GOOD, "targets": [{"dialect": "onnx", "opset": 0}]},
     "targets[0].opset", ["Got: 0"], ["Input should be 'onnx'"]),
    ("target-not-a-target", "/v1/translate", {"spec": GOOD, "targets": [5]},
     "targets[0]", [f"a dialect name ({NAMES}) or an object", "Got: 5"], []),
    ("source-dialect-typo", "/v1/translate", {"spec": {"dialect": "onnxx"}},
     "spec.dialect", ["Got: 'onnxx'", "Did you mean 'onnx'?"], ["Input tag"]),
    ("source-dialect-missing", "/v1/translate", {"spec": {"opset": 13}},
     "spec.dialect", ["dialect is required", NAMES], ["discriminator"]),
    ("source-field-typo", "/v1/translate", {"spec": {**GOOD, "elemtype": "FLOAT"}},
     "spec.elemtype", ["Extra field not allowed", "Did you mean 'elem_type'?"], []),
    ("source-compact-missing", "/v1/translate", {"spec": {"dialect": "onnx", "opset": 13}},
     "spec.elem_type", ["the compact form needs elem_type"], []),
    ("openvino-missing-max", "/v1/translate", {"spec": {"dialect": "openvino", "element_type": "f32", "min": 0}},
     "spec.max", ["Clamp-1 requires max"], []),
    ("elem-type-near-miss", "/v1/translate", {"spec": {**GOOD, "elem_type": "FLAOT"}},
     "spec.elem_type", ["Got: 'FLAOT'", "Did you mean 'FLOAT'?"], []),
    ("shape-dim-negative", "/v1/translate", {"spec": {**GOOD, "shape": [1, -1]}},
     "spec.shape[1]", ["Got: -1"], ["constrained", "str"]),
    ("shape-dim-object", "/v1/translate", {"spec": {**GOOD, "shape": [1, {}]}},
     "spec.shape[1]", ["Expected an integer or a string. Got: an object"], []),
    ("dml-missing-max", "/v1/translate", {"spec": {"dialect": "directml", "desc": {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [1]}, "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1]},
        "Min": 0}}}, "spec.desc.Max", ["Field required"], []),
    ("mode-typo", "/v1/translate", {"spec": GOOD, "mode": "literl"},
     "mode", ["Got: 'literl'", "preserve, literal", "Did you mean 'literal'?"], []),
    ("execute-semantics-fl", "/v1/execute",
     {"spec": GOOD, "input": TENSOR, "target": {"dialect": "directml", "feature_level": "9_9"}},
     "target.feature_level", ["Got: '9_9'"], ["spec."]),
    ("execute-semantics-typo", "/v1/execute", {"spec": GOOD, "input": TENSOR, "target": "directm"},
     "target", ["Did you mean 'directml'?"], []),
    ("execute-semantics-opset", "/v1/execute",
     {"spec": GOOD, "input": TENSOR, "target": {"dialect": "onnx", "opset": -1}},
     "target.opset", ["Got: -1"], ["Input should be 'onnx'"]),
]


@pytest.mark.parametrize("path,body,loc,has,hasnt", [pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_one_error_at_the_exact_field(client, path, body, loc, has, hasnt):
    r = client.post(path, json=body)
    assert r.status_code == 422, r.text
    errors = r.json()["errors"]
    assert [e["loc"] for e in errors] == [loc], errors
    for frag in has:
        assert frag in errors[0]["msg"], errors
    for frag in hasnt:
        assert frag not in errors[0]["msg"] and frag not in errors[0]["loc"], errors


def test_data_errors_are_titled_as_data(client):
    r = client.post("/v1/execute", json={"spec": GOOD, "input": {"dtype": "float32", "shape": [2], "data": [1]}})
    assert r.status_code == 422 and r.json()["title"] == "Invalid input tensor", r.text
    assert r.json()["errors"][0]["loc"] == "input.data"
    r = client.post("/v1/translate", json={"spec": {**GOOD, "elem_type": "FLOAT8"}})
    assert r.json()["title"] == "Invalid clip spec"


def test_execute_npy_request_errors_name_the_field(client):
    import json
    import urllib.parse
    opts = urllib.parse.quote(json.dumps({"spec": {**GOOD, "dialect": "onnxx"}}))
    r = client.post(f"/v1/execute.npy?request={opts}", content=b"", headers={"content-type": "application/x-npy"})
    assert r.status_code == 422, r.text
    assert r.json()["errors"] == [{"loc": "request.spec.dialect", "msg": r.json()["errors"][0]["msg"]}]
    assert "Did you mean 'onnx'?" in r.json()["errors"][0]["msg"]


def test_opset_beyond_installed_onnx_is_version_unsupported(client):
    r = client.post("/v1/translate", json={"spec": GOOD, "targets": [{"dialect": "onnx", "opset": 99}]})
    t = r.json()["translations"][0]
    assert t["status"] == "unsupported"
    assert [f["code"] for f in t["findings"]] == ["version-unsupported"]
    codes = {c["code"]: c["meaning"] for c in client.get("/v1/dialects").json()["finding_codes"]}
    assert "onnx package" in codes["version-unsupported"]


def test_capability_rules_use_the_specs_words_not_function_names(client):
    body = client.get("/v1/dialects").json()
    rules = [r for d in body["dialects"] for v in d["versions"] for r in v["rules"]]
    assert rules and not [r for r in rules if r.split(":")[0].isidentifier() and "_" in r.split(":")[0]], rules


@pytest.mark.parametrize("query,loc,has", [
    pytest.param("target=directml:9_9", "target[0]", ["Got: '9_9'", "6_4"], id="fl"),
    pytest.param("target=onnx&target=openvin", "target[1]", ["Did you mean 'openvino'?"], id="dialect-typo"),
    pytest.param("target=onnx:0", "target[0]", ["Got: 0"], id="opset-zero"),
    pytest.param("target=openvino:opset99", "target[0]", ["Got: 'opset99'"], id="ov-version"),
    pytest.param("mode=literl", "query.mode", ["Did you mean 'literal'?"], id="mode-typo"),
])
def test_scan_query_errors_name_the_parameter(client, query, loc, has):
    from pathlib import Path
    data = (Path(__file__).resolve().parents[2] / "docs" / "example.onnx").read_bytes()
    r = client.post(f"/v1/models/inspect?{query}", content=data, headers={"content-type": "application/octet-stream"})
    assert r.status_code == 422, r.text
    errors = r.json()["errors"]
    assert [e["loc"] for e in errors] == [loc]
    for frag in has:
        assert frag in errors[0]["msg"], errors
    assert "pydantic" not in r.text


@pytest.mark.parametrize("options,loc", [
    pytest.param({"spec": {**GOOD, "elem_type": "FLAOT"}}, "request.spec.elem_type", id="spec-rule"),
    pytest.param({"spec": GOOD, "target": {"dialect": "directml", "feature_level": "9_9"}},
                 "request.target.feature_level", id="target-version"),
])
def test_execute_npy_domain_errors_name_the_query_field(client, options, loc):
    import io
    import json
    import urllib.parse

    import numpy as np
    buf = io.BytesIO()
    np.save(buf, np.zeros(2, np.float32))
    r = client.post(f"/v1/execute.npy?request={urllib.parse.quote(json.dumps(options))}", content=buf.getvalue(),
                    headers={"content-type": "application/x-npy"})
    assert r.status_code == 422, r.text
    assert [e["loc"] for e in r.json()["errors"]] == [loc]


@pytest.mark.parametrize("name,data,has", [
    pytest.param("spec.json", b'{"dialect": "onnx"}', ["is JSON", "/v1/translate"], id="json-spec"),
    pytest.param("README.md", b"# clipbridge\n\nTranslates the Clip operator", ["send an ONNX model (.onnx)"],
                 id="text"),
])
def test_a_file_that_is_no_model_says_what_to_send(client, name, data, has):
    r = client.post("/v1/models/inspect", files={"model": (name, data)})
    assert r.status_code == 400, r.text
    errors = r.json()["errors"]
    assert [e["loc"] for e in errors] == ["model"]
    for frag in has:
        assert frag in errors[0]["msg"], errors
