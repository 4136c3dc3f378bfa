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
    ("malformed-json", '{"source": ', "application/json", 400, None, "not valid JSON"),
    ("nan-token", '{"source": {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "min": NaN}}',
     "application/json", 400, None, "NaN"),
    ("infinity-token", '{"source": {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "max": Infinity}}',
     "application/json", 400, None, "Infinity"),
    ("deep-nesting", "[" * 50000 + "]" * 50000, "application/json", 400, None, "nested"),
    ("wrong-content-type", json.dumps({"source": GOOD}), "text/plain", 415, None, "application/json"),
    ("no-content-type", json.dumps({"source": GOOD}), "", 415, None, "application/json"),
    ("unknown-dialect", {"source": {"dialect": "caffe2"}}, "application/json", 422, "source", "caffe2"),
    ("missing-dialect", {"source": {"opset": 13}}, "application/json", 422, "source", "dialect"),
    ("unknown-field", {"source": dict(GOOD, foo=1)}, "application/json", 422, "source.foo", "Extra"),
    ("unknown-top-field", {"source": GOOD, "extra": 1}, "application/json", 422, "extra", "Extra"),
    ("field-of-other-dialect", {"source": dict(GOOD, element_type="f32")}, "application/json", 422,
     "source.element_type", "Extra"),
    ("number-as-object", {"source": dict(GOOD, min={"v": 1})}, "application/json", 422, "source.min", "number"),
    ("number-as-bool", {"source": dict(GOOD, min=True)}, "application/json", 422, "source.min", "number"),
    ("number-garbage-string", {"source": dict(GOOD, min="zero")}, "application/json", 422, "source.min",
     "Not a number"),
    ("ten-mb-number-string", {"source": dict(GOOD, max=BIG)}, "application/json", 422, "source.max", "400"),
    ("ten-mb-elem-type", {"source": dict(GOOD, elem_type="F" * (10 * 1024 * 1024))}, "application/json", 422,
     "source.elem_type", "at most"),
    ("unknown-elem-type", {"source": dict(GOOD, elem_type="FLOAT8")}, "application/json", 422, "source.elem_type",
     "FLOAT8"),
    ("opset-zero", {"source": dict(GOOD, opset=0)}, "application/json", 422, "source.opset", "1"),
    ("clip11-int8", {"source": dict(GOOD, opset=11, elem_type="INT8")}, "application/json", 422,
     "source.elem_type", "Clip-11"),
    ("int8-fractional-bound", {"source": dict(GOOD, opset=12, elem_type="INT8", min=1.5)}, "application/json",
     422, "source.min", "INT8"),
    ("int8-out-of-range", {"source": dict(GOOD, opset=12, elem_type="INT8", max=300)}, "application/json",
     422, "source.max", "outside"),
    ("openvino-missing-max", {"source": {"dialect": "openvino", "element_type": "f32", "min": 0}},
     "application/json", 422, "source", "max"),
    ("openvino-unknown-version", {"source": {"dialect": "openvino", "version": "opset99", "element_type": "f32",
                                             "min": 0, "max": 1}}, "application/json", 422, "source.version",
     "opset99"),
    ("openvino-min-gt-max", {"source": {"dialect": "openvino", "element_type": "f32", "min": 2, "max": 1}},
     "application/json", 422, "source", "m_min <= m_max"),
    ("dml-rank", {"source": DML}, "application/json", 422, "source.desc.InputTensor.Sizes",
     "DirectML FL 2.1 needs exactly 4 dimensions. Got: 3"),
    ("dml-size-string", {"source": {**DML, "desc": {**DML["desc"], "InputTensor": {
        "DataType": "FLOAT32", "Sizes": [1, 2, "x", 4]}}}}, "application/json", 422,
     "source.desc.InputTensor.Sizes[2]", "integer"),
    ("dml-zero-size", {"source": {**DML, "feature_level": "3_0", "desc": {**DML["desc"], "InputTensor": {
        "DataType": "FLOAT32", "Sizes": [0, 2, 3]}, "OutputTensor": {"DataType": "FLOAT32", "Sizes": [0, 2, 3]}}}},
     "application/json", 422, "source.desc.InputTensor.Sizes[0]", "Sizes[0]"),
    ("dml-nine-dims", {"source": {**DML, "feature_level": "5_0", "desc": {**DML["desc"], "InputTensor": {
        "DataType": "FLOAT32", "Sizes": [1] * 9}, "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1] * 9}}}},
     "application/json", 422, "source.desc.InputTensor.Sizes", "1 to 8"),
    ("dml-bad-total-size", {"source": {**DML, "feature_level": "3_0", "desc": {**DML["desc"], "InputTensor": {
        "DataType": "FLOAT32", "Sizes": [1, 2, 3], "TotalTensorSizeInBytes": 8}}}}, "application/json", 422,
     "source.desc.InputTensor.TotalTensorSizeInBytes", "at least 24"),
    ("dml-unknown-fl", {"source": {**DML, "feature_level": "9_9"}}, "application/json", 422,
     "source.feature_level", "9_9"),
    ("dml-clip1-old-fl", {"source": {**DML, "operator": "ELEMENT_WISE_CLIP1"}}, "application/json", 422,
     "source.operator", "5_0"),
    ("dml-float64", {"source": {**DML, "feature_level": "6_4", "desc": {**DML["desc"], "InputTensor": {
        "DataType": "FLOAT64", "Sizes": [2]}, "OutputTensor": {"DataType": "FLOAT64", "Sizes": [2]}}}},
     "application/json", 422, "source.desc.InputTensor.DataType", "FLOAT64"),
    ("model-not-base64", {"source": {"dialect": "onnx", "model": "%%%"}}, "application/json", 400,
     "source.model", "base64"),
    ("model-not-protobuf", {"source": {"dialect": "onnx", "model": "aGVsbG8gd29ybGQ="}}, "application/json", 400,
     "source.model", None),
    ("ir-xxe", {"source": {"dialect": "openvino", "ir_xml": '<?xml version="1.0"?><!DOCTYPE net [<!ENTITY x '
                           'SYSTEM "file:///etc/passwd">]><net version="11">&x;</net>'}}, "application/json", 400,
     "source.ir_xml", "refused"),
    ("unknown-target", {"source": GOOD, "targets": ["caffe2"]}, "application/json", 422, "targets[0]", None),
    ("bad-mode", {"source": GOOD, "mode": "approximate"}, "application/json", 422, "mode", None),
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

    from app.main import create_app
    from app.settings import Settings
    small = TestClient(create_app(Settings(max_body_bytes=1000)))
    r = small.post("/v1/translate", content=b"{" + b" " * 5000 + b"}", headers={"content-type": "application/json"})
    assert r.status_code == 413 and r.headers["content-type"].startswith("application/problem+json")


def test_unknown_path_and_method_are_problems(client):
    r = client.get("/v2/nothing")
    assert r.status_code == 404 and r.headers["content-type"].startswith("application/problem+json")
    r = client.get("/v1/translate")
    assert r.status_code == 405 and r.headers["content-type"].startswith("application/problem+json")
