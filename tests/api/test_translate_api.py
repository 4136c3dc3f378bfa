"""Contract tests of /v1/translate, /v1/dialects, /healthz against the API contract."""

from __future__ import annotations

import base64
import json

import onnx
import pytest

from clipbridge.api.models import DialectsResponse, TranslateResponse
from clipbridge.dialects import registry

RELU6_F16 = {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT16", "shape": [1, 3, 224, 224], "min": 0, "max": 6}
DML_F16 = {"dialect": "directml", "feature_level": "5_0", "operator": "ELEMENT_WISE_CLIP",
           "desc": {"InputTensor": {"DataType": "FLOAT16", "Flags": "NONE", "Sizes": [1, 3, 224, 224],
                                    "Strides": None, "TotalTensorSizeInBytes": 301056},
                    "OutputTensor": {"DataType": "FLOAT16", "Flags": "NONE", "Sizes": [1, 3, 224, 224]},
                    "ScaleBias": {"Scale": 1.0, "Bias": 0.0}, "Min": 0.0, "Max": 6.0}}
OV_F16 = {"dialect": "openvino", "version": "opset1", "element_type": "f16", "shape": [1, 3, 224, 224],
          "min": 0.0, "max": 6.0}


def _no_bare_tokens(text: str) -> None:
    json.loads(text, parse_constant=lambda c: pytest.fail(f"bare {c} token in a response"))


def post(client, body):
    r = client.post("/v1/translate", json=body)
    _no_bare_tokens(r.text)
    return r


@pytest.mark.parametrize("source", [
    pytest.param(RELU6_F16, id="contract-onnx-compact"),
    pytest.param(OV_F16, id="contract-openvino-compact"),
    pytest.param(DML_F16, id="contract-directml-desc"),
])
def test_contract_examples_translate_to_every_other_dialect(client, source):
    r = post(client, {"source": source})
    assert r.status_code == 200, r.text
    body = TranslateResponse.model_validate(r.json())
    dialects = {t.target["dialect"] for t in body.translations if t.target}
    assert source["dialect"] not in dialects and len(body.translations) == 2
    for t in body.translations:
        if t.target["dialect"] == "onnx":
            model = onnx.load_from_string(base64.b64decode(t.artifacts.onnx_model))
            onnx.checker.check_model(model, full_check=True)
        if t.target["dialect"] == "openvino":
            assert '<layer id="1" name="clamp" type="Clamp"' in t.artifacts.ir_xml or "Clamp" in t.artifacts.ir_xml
        if t.target["dialect"] == "directml":
            assert "DML_ELEMENT_WISE_CLIP" in t.artifacts.cpp


def test_relu6_float16_to_openvino_is_exact(client):
    r = post(client, {"source": RELU6_F16, "targets": ["openvino"]})
    t = r.json()["translations"][0]
    assert t["status"] == "exact"
    assert t["target"] == {"dialect": "openvino", "version": "opset16", "element_type": "f16",
                           "shape": [1, 3, 224, 224], "min": 0.0, "max": 6.0}


def test_big_int64_bounds_travel_as_strings(client):
    src = {"dialect": "onnx", "opset": 13, "elem_type": "INT64", "min": "-9223372036854775808",
           "max": "9007199254740993"}
    r = post(client, {"source": src, "targets": [{"dialect": "openvino"}, {"dialect": "directml",
                                                                              "feature_level": "5_0"}]})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["source"]["min"] == "-9223372036854775808"
    assert body["meaning"]["upper"]["value"] == "9007199254740993"
    ov, dml = body["translations"]
    assert ov["status"] == "drift"
    assert any(f["code"] == "bound-precision" and f["witness"] for f in ov["findings"])
    assert dml["status"] == "exact" and dml["target"]["operator"] == "ELEMENT_WISE_CLIP1"
    assert dml["target"]["desc"]["Max"] == "9007199254740993"


@pytest.mark.parametrize("target,status", [
    pytest.param({"dialect": "onnx", "opset": 11}, "unsupported", id="clip11-has-no-int8"),
    pytest.param({"dialect": "onnx", "opset": 12}, "exact", id="clip12-takes-int8"),
    pytest.param({"dialect": "directml", "feature_level": "1_0"}, "unsupported", id="fl10-float-only"),
    pytest.param({"dialect": "directml", "feature_level": "2_1"}, "exact", id="fl21-int8"),
])
def test_target_versions(client, target, status):
    src = {"dialect": "openvino", "element_type": "i8", "shape": [2, 3], "min": -1.5, "max": 2.5}
    r = post(client, {"source": src, "targets": [target]})
    assert r.status_code == 200, r.text
    t = r.json()["translations"][0]
    assert t["status"] == status, t
    if status == "unsupported":
        assert t["findings"][0]["code"] == "dtype-unsupported"


def test_literal_mode_reports_drift_preserve_does_not(client):
    src = {"dialect": "directml", "feature_level": "2_1",
           "desc": {"InputTensor": {"DataType": "INT8", "Sizes": [1, 1, 1, 8]},
                    "OutputTensor": {"DataType": "INT8", "Sizes": [1, 1, 1, 8]}, "Min": 0.5, "Max": 2.5}}
    lit = post(client, {"source": src, "targets": ["openvino"], "mode": "literal"}).json()["translations"][0]
    pre = post(client, {"source": src, "targets": ["openvino"], "mode": "preserve"}).json()["translations"][0]
    assert lit["status"] == "drift" and pre["status"] == "exact"
    w = next(f["witness"] for f in lit["findings"] if f["code"] == "bound-rounding")
    # DirectML truncates Min 0.5 to 0; OpenVINO ceils the copied 0.5 to 1: input 0 is the witness.
    assert (w["input"], w["source_output"], w["target_output"]) == (0, 0, 1)


def test_dialects_matrix(client):
    r = client.get("/v1/dialects")
    assert r.status_code == 200
    body = DialectsResponse.model_validate(r.json())
    names = [d.dialect for d in body.dialects]
    assert names == list(registry.DIALECTS) and names[:3] == ["onnx", "openvino", "directml"]
    onnx_versions = [v.version for v in body.dialects[0].versions]
    assert onnx_versions == ["Clip-1", "Clip-6", "Clip-11", "Clip-12", "Clip-13"]
    fl21 = next(v for v in body.dialects[2].versions if v.version == "2_1")
    assert fl21.ranks == "4" and "INT8" in fl21.dtypes and "INT64" not in fl21.dtypes
    assert {c.code.value for c in body.finding_codes} >= {"bound-rounding", "engine-behaviour"}


def test_health_and_docs(client):
    assert client.get("/healthz").json()["status"] == "ok"
    assert client.get("/openapi.json").status_code == 200
    assert client.get("/docs").status_code == 200


def test_openapi_names_problem_responses(client):
    spec = client.get("/openapi.json").json()
    responses = spec["paths"]["/v1/translate"]["post"]["responses"]
    assert "application/problem+json" in responses["422"]["content"]


def test_dialect_rows_carry_what_the_inspector_builds_from(client):
    """Per registered dialect: defaults flag, version field and selector values, example specs (each translates),
    its spec's JSON Schema and its rule texts: every surface reads these, none names a dialect."""
    rows = {d["dialect"]: d for d in client.get("/v1/dialects").json()["dialects"]}
    assert [n for n, d in rows.items() if d["in_defaults"]] == list(registry.default_names())
    assert (rows["onnx"]["version_field"], rows["directml"]["version_field"]) == ("opset", "feature_level")
    assert rows["stablehlo"]["target_versions"] == ["1"] and "2_1" in rows["directml"]["target_versions"]
    assert set(rows["stablehlo"]["examples"]) >= {"relu6-f32"}
    assert rows["stablehlo"]["rule_texts"]["min-greater-than-max"]["source"].startswith("openxla/stablehlo")
    for name, d in rows.items():
        assert d["spec_schema"]["properties"]["dialect"]["const"] == name
        assert d["version_field"] in registry.DIALECTS[name].target_model.model_fields
        for v in d["target_versions"]:  # each selector value is a version the dialect accepts
            registry.DIALECTS[name].check_version(v)
        for label, spec in d["examples"].items():  # into every dialect: an answer, never a 500
            for target in registry.names():  # one at a time, so a refusal names the pair
                r = client.post("/v1/translate", json={"spec": spec, "targets": [target]})
                # An example labelled "-rejected" shows a spec its framework refuses (e.g. min > max where that is
                # an error): 422 naming the spec, whatever the target; every other example translates.
                want = 422 if label.endswith("-rejected") else 200
                assert r.status_code == want, (name, label, target, r.text)
                assert want == 200 or (r.json()["detail"] and r.json()["errors"][0]["loc"] == "spec"), \
                    (name, label, target, r.text)
