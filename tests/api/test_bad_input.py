"""A table of bad bodies: each gets a 4xx application/problem+json naming the field; none a 5xx."""

from __future__ import annotations

import json

import pytest

BIG = "9" * (10 * 1024 * 1024)
GOOD = {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "min": 0, "max": 6}
DML = {"dialect": "directml", "feature_level": "2_1",
       "desc": {"InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 2, 3]},
                "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 2, 3]}, "Min": 0, "Max": 1}}

CASES = [
    # id, raw body (str) or JSON object, content type, status, loc fragment (or None), detail fragment
    ("malformed-json", '{"spec": ', "application/json", 400, None, "not valid JSON"),
    ("nan-token", '{"spec": {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "min": NaN}}',
     "application/json", 400, None, "NaN"),
    ("infinity-token", '{"spec": {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "max": Infinity}}',
     "application/json", 400, None, "Infinity"),
    ("deep-nesting", "[" * 50000 + "]" * 50000, "application/json", 400, None, "nested"),
    ("wrong-content-type", json.dumps({"spec": GOOD}), "text/plain", 415, None, "application/json"),
    ("no-content-type", json.dumps({"spec": GOOD}), "", 415, None, "application/json"),
    ("unknown-dialect", {"spec": {"dialect": "caffe2"}}, "application/json", 422, "spec", "caffe2"),
    ("missing-dialect", {"spec": {"opset": 13}}, "application/json", 422, "spec", "dialect"),
    ("unknown-field", {"spec": dict(GOOD, foo=1)}, "application/json", 422, "spec.foo", "Extra"),
    ("unknown-top-field", {"spec": GOOD, "extra": 1}, "application/json", 422, "extra", "Extra"),
    ("field-of-other-dialect", {"spec": dict(GOOD, element_type="f32")}, "application/json", 422,
     "spec.element_type", "Extra"),
    ("number-as-object", {"spec": dict(GOOD, min={"v": 1})}, "application/json", 422, "spec.min", "number"),
    ("number-as-bool", {"spec": dict(GOOD, min=True)}, "application/json", 422, "spec.min", "number"),
    ("number-garbage-string", {"spec": dict(GOOD, min="zero")}, "application/json", 422, "spec.min",
     "Not a number"),
    ("ten-mb-number-string", {"spec": dict(GOOD, max=BIG)}, "application/json", 422, "spec.max", "400"),
    ("ten-mb-elem-type", {"spec": dict(GOOD, elem_type="F" * (10 * 1024 * 1024))}, "application/json", 422,
     "spec.elem_type", "at most"),
    ("unknown-elem-type", {"spec": dict(GOOD, elem_type="FLOAT8")}, "application/json", 422, "spec.elem_type",
     "FLOAT8"),
    ("opset-zero", {"spec": dict(GOOD, opset=0)}, "application/json", 422, "spec.opset", "1"),
    ("clip11-int8", {"spec": dict(GOOD, opset=11, elem_type="INT8")}, "application/json", 422,
     "spec.elem_type", "Clip-11"),
    ("int8-fractional-bound", {"spec": dict(GOOD, opset=12, elem_type="INT8", min=1.5)}, "application/json",
     422, "spec.min", "INT8"),
    ("int8-out-of-range", {"spec": dict(GOOD, opset=12, elem_type="INT8", max=300)}, "application/json",
     422, "spec.max", "outside"),
    ("openvino-missing-max", {"spec": {"dialect": "openvino", "element_type": "f32", "min": 0}},
     "application/json", 422, "spec", "max"),
    ("openvino-unknown-version", {"spec": {"dialect": "openvino", "version": "opset99", "element_type": "f32",
                                             "min": 0, "max": 1}}, "application/json", 422, "spec.version",
     "opset99"),
    ("openvino-min-gt-max", {"spec": {"dialect": "openvino", "element_type": "f32", "min": 2, "max": 1}},
     "application/json", 422, "spec", "m_min <= m_max"),
    ("dml-rank", {"spec": DML}, "application/json", 422, "spec.desc.InputTensor.Sizes",
     "DirectML FL 2.1 needs exactly 4 dimensions. Got: 3"),
    ("dml-size-string", {"spec": {**DML, "desc": {**DML["desc"], "InputTensor": {
        "DataType": "FLOAT32", "Sizes": [1, 2, "x", 4]}}}}, "application/json", 422,
     "spec.desc.InputTensor.Sizes[2]", "integer"),
    ("dml-zero-size", {"spec": {**DML, "feature_level": "3_0", "desc": {**DML["desc"], "InputTensor": {
        "DataType": "FLOAT32", "Sizes": [0, 2, 3]}, "OutputTensor": {"DataType": "FLOAT32", "Sizes": [0, 2, 3]}}}},
     "application/json", 422, "spec.desc.InputTensor.Sizes[0]", "Sizes[0]"),
    ("dml-nine-dims", {"spec": {**DML, "feature_level": "5_0", "desc": {**DML["desc"], "InputTensor": {
        "DataType": "FLOAT32", "Sizes": [1] * 9}, "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1] * 9}}}},
     "application/json", 422, "spec.desc.InputTensor.Sizes", "1 to 8"),
    ("dml-bad-total-size", {"spec": {**DML, "feature_level": "3_0", "desc": {**DML["desc"], "InputTensor": {
        "DataType": "FLOAT32", "Sizes": [1, 2, 3], "TotalTensorSizeInBytes": 8}}}}, "application/json", 422,
     "spec.desc.InputTensor.TotalTensorSizeInBytes", "at least 24"),
    ("dml-unknown-fl", {"spec": {**DML, "feature_level": "9_9"}}, "application/json", 422,
     "spec.feature_level", "9_9"),
    ("dml-clip1-old-fl", {"spec": {**DML, "operator": "ELEMENT_WISE_CLIP1"}}, "application/json", 422,
     "spec.operator", "5_0"),
    ("dml-float64", {"spec": {**DML, "feature_level": "6_4", "desc": {**DML["desc"], "InputTensor": {
        "DataType": "FLOAT64", "Sizes": [2]}, "OutputTensor": {"DataType": "FLOAT64", "Sizes": [2]}}}},
     "application/json", 422, "spec.desc.InputTensor.DataType", "FLOAT64"),
    ("model-not-base64", {"spec": {"dialect": "onnx", "model": "%%%"}}, "application/json", 400,
     "spec.model", "base64"),
    ("model-not-protobuf", {"spec": {"dialect": "onnx", "model": "aGVsbG8gd29ybGQ="}}, "application/json", 400,
     "spec.model", None),
    ("ir-xxe", {"spec": {"dialect": "openvino", "ir_xml": '<?xml version="1.0"?><!DOCTYPE net [<!ENTITY x '
                           'SYSTEM "file:///etc/passwd">]><net version="11">&x;</net>'}}, "application/json", 400,
     "spec.ir_xml", "refused"),
    ("unknown-target", {"spec": GOOD, "targets": ["caffe2"]}, "application/json", 422, "targets[0]", None),
    ("bad-mode", {"spec": GOOD, "mode": "approximate"}, "application/json", 422, "mode", None),
]


@pytest.mark.parametrize("body,ctype,status,loc,detail", [pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_bad_input_gets_problem_json(client, body, ctype, status, loc, detail):
    raw = body if isinstance(body, str) else json.dumps(body)
    headers = {"content-type": ctype} if ctype else {}
    r = client.post("/v1/translate", content=raw.encode(), headers=headers)
    assert r.status_code == status, r.text[:500]
    assert r.headers["content-type"].startswith("application/problem+json")
    problem = r.json()
    assert problem["status"] == status and problem["title"] and problem["detail"]
    if loc is not None:
        locs = [e["loc"] for e in problem.get("errors") or []]
        assert any(x == loc or x.startswith(loc) for x in locs), (locs, problem)
    if detail is not None:
        assert detail in json.dumps(problem), problem


def test_no_5xx_anywhere_in_the_table(client):
    for c in CASES:
        raw = c[1] if isinstance(c[1], str) else json.dumps(c[1])
        r = client.post("/v1/translate", content=raw.encode(), headers={"content-type": c[2] or "text/plain"})
        assert r.status_code < 500, c[0]


def test_body_limit_413_before_reading():
    from fastapi.testclient import TestClient

    from clipbridge.main import create_app
    from clipbridge.core.settings import Settings
    small = TestClient(create_app(Settings(max_body_bytes=1000)))
    r = small.post("/v1/translate", content=b"{" + b" " * 5000 + b"}", headers={"content-type": "application/json"})
    assert r.status_code == 413 and r.headers["content-type"].startswith("application/problem+json")


def test_unknown_path_and_method_are_problems(client):
    r = client.get("/v2/nothing")
    assert r.status_code == 404 and r.headers["content-type"].startswith("application/problem+json")
    r = client.get("/v1/translate")
    assert r.status_code == 405 and r.headers["content-type"].startswith("application/problem+json")
