"""Readings are data (issue 37): a finding or witness that holds under a dialect's other reading carries it in a
`reading` field (null for the default readings) in the API, SARIF result properties, JUnit testcase properties
and the schemas; the message keeps its readable "under the NAME reading: " prefix, and the two always agree."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest

from clipbridge.cli.main import main
from clipbridge.dialects import registry

NAN = "nan"
PREFIX = re.compile(r"under the (\S+) reading: ")
ONNX_F32 = {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "min": 0, "max": 5}  # not RELU6: MINIMUM/MAXIMUM
DML_CROSSED = {"dialect": "directml", "feature_level": "6_4", "operator": "ELEMENT_WISE_CLIP",
               "desc": {"InputTensor": {"DataType": "INT8", "Sizes": [1, 1, 1, 4]},
                        "OutputTensor": {"DataType": "INT8", "Sizes": [1, 1, 1, 4]}, "Min": 5, "Max": 1}}
TRT_HEADER = {"dialect": "tensorrt", "dtype": "float32", "alpha": 0, "beta": 6, "reading": "header"}


def _check(findings: list[dict]) -> set[str]:
    """Every finding's reading field agrees with its message's prefix, and its witness's with it."""
    seen = set()
    for f in findings:
        m = PREFIX.match(f["message"])
        assert f["reading"] == (m.group(1) if m else None), f
        if f["witness"] is not None:
            assert f["witness"]["reading"] == f["reading"], f
        if f["reading"]:
            seen.add(f["reading"])
    return seen


@pytest.mark.parametrize("source,target,reading", [
    pytest.param(ONNX_F32, "tflite", "builtin", id="onnx-to-tflite-builtin"),
    pytest.param(DML_CROSSED, "onnx", "2022-doc", id="directml-2022-doc"),
    pytest.param(TRT_HEADER, "tosa", "observed", id="tensorrt-observed"),
])
def test_a_finding_under_another_reading_says_so_as_data(client, source, target, reading):
    r = client.post("/v1/translate", json={"spec": source, "targets": [target], "mode": "preserve"})
    assert r.status_code == 200, r.text
    assert reading in _check(r.json()["translations"][0]["findings"])


def test_default_reading_findings_have_a_null_reading(client):
    r = client.post("/v1/translate", json={"spec": {"dialect": "openvino", "element_type": "i8", "min": 0.5,
                                                    "max": 100.7},
                                           "targets": [{"dialect": "directml", "feature_level": "2_1"}],
                                           "mode": "literal"})
    findings = r.json()["translations"][0]["findings"]
    assert findings and all(f["reading"] is None for f in findings)
    assert all(f["witness"] is None or f["witness"]["reading"] is None for f in findings)


def test_every_registered_example_agrees_prefix_and_field(client):
    """Every example of every dialect into every other: the field and the prefix never disagree."""
    names = registry.names()
    found: set[str] = set()
    for d in client.get("/v1/dialects").json()["dialects"]:
        for spec in d["examples"].values():
            r = client.post("/v1/translate", json={"spec": spec, "targets": [n for n in names if n != d["dialect"]],
                                                   "include": []})
            if r.status_code == 200:
                for t in r.json()["translations"]:
                    found |= _check(t["findings"])
    assert found, "no example drifts under another reading: the check saw nothing"


def _spec_file(tmp_path, spec) -> str:
    p = tmp_path / "spec.json"
    p.write_text(json.dumps(spec))
    return str(p)


def test_sarif_results_carry_the_reading_as_a_property(tmp_path, capsys):
    main(["translate", _spec_file(tmp_path, DML_CROSSED), "--target", "onnx", "--format", "sarif"])
    results = json.loads(capsys.readouterr().out)["runs"][0]["results"]
    readings = {r["properties"]["reading"] for r in results}
    assert "2022-doc" in readings and None in readings
    for r in results:
        m = PREFIX.search(r["message"]["text"])
        assert r["properties"]["reading"] == (m.group(1) if m else None)


def test_junit_testcases_carry_the_reading_as_a_property(tmp_path, capsys):
    main(["translate", _spec_file(tmp_path, DML_CROSSED), "--target", "onnx", "--format", "junit"])
    root = ET.fromstring(capsys.readouterr().out.split("?>", 1)[1])
    props = [p.get("value") for p in root.iter("property") if p.get("name") == "reading"]
    assert props == ["2022-doc"]
    assert "reading: 2022-doc" in "".join(e.text or "" for e in root.iter("failure"))


@pytest.mark.parametrize("schema", ["TranslateResponse", "ScanResponse"])
def test_the_schemas_declare_the_reading(schema):
    from clipbridge.api.schemas_export import schemas
    defs = schemas()[schema]["$defs"]
    assert "reading" in defs["FindingOut"]["properties"] and "reading" in defs["WitnessOut"]["properties"]
