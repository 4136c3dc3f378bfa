"""The rule catalogue (`clipbridge explain`), --select/--ignore/--fail-on, baselines, and the same filters as
query parameters on /v1/models/inspect."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper

from clipbridge.cli.main import main
from clipbridge.core.findings import CODE_DOCS, Code
from clipbridge.lint.report import fingerprint
from clipbridge.lint.rules import CATALOGUED, RULE_IDS, RULES, UNRESOLVED, example_finding
from tests.scan.models import F32, I32, clip_model, write

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = str(ROOT / "docs" / "example.onnx")


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_every_code_is_a_rule():
    assert set(RULE_IDS) == {c.value for c in Code} | {UNRESOLVED}
    assert CATALOGUED == set(RULE_IDS), f"codes without a catalogue entry: {set(RULE_IDS) - CATALOGUED}"
    assert set(CODE_DOCS) == set(Code)


@pytest.mark.parametrize("code", [r for r in RULE_IDS if RULES[r].example is not None])
def test_each_example_produces_its_own_code(code):
    ex = example_finding(code)
    assert ex["finding"] is not None, f"the example of {code} no longer produces it: {ex}"
    assert ex["finding"]["code"] == code


def test_rules_without_example_say_why():
    for r in RULES.values():
        assert r.example is not None or r.example_note
        assert r.dialects and all(rule and src for rule, src in r.dialects.values())


@pytest.mark.parametrize("code", RULE_IDS)
def test_explain_covers_every_code(code, capsys):
    rc, out, _ = run(["explain", code], capsys)
    assert rc == 0 and out.startswith(f"{code} (")
    assert "Per dialect:" in out and "onnx" in out
    rc, out, _ = run(["explain", code, "--format", "json"], capsys)
    assert json.loads(out)["code"] == code


def test_explain_shows_a_witness(capsys):
    _, out, _ = run(["explain", "bound-rounding"], capsys)
    assert "witness: input 0 -> source 1, target 0" in out and "truncate toward zero" in out


def test_explain_all_and_unknown(capsys):
    rc, out, _ = run(["explain", "--format", "json"], capsys)
    assert rc == 0 and [r["code"] for r in json.loads(out)] == list(RULE_IDS)
    rc, _, err = run(["explain", "no-such-code"], capsys)
    assert rc == 2 and "unknown finding code 'no-such-code'" in err


@pytest.mark.parametrize("args,code", [
    pytest.param([], 2, id="no-lint-options-status-exit"),
    pytest.param(["--fail-on", "error"], 1, id="fail-on-error-dynamic-bounds"),
    pytest.param(["--fail-on", "error", "--ignore", "dynamic-bounds"], 0, id="errors-ignored"),
    pytest.param(["--ignore", "dynamic-bounds"], 1, id="default-fail-on-warning"),
    pytest.param(["--ignore", "dynamic-bounds,nan-input,scale-bias"], 0, id="comma-separated-ignore"),
    pytest.param(["--ignore", "dynamic-bounds,nan-input,scale-bias", "--fail-on", "info"], 1,
                 id="fail-on-info-sees-engine-notes"),
    pytest.param(["--select", "nan-input", "--fail-on", "error"], 0, id="select-warnings-fail-on-error"),
    pytest.param(["--select", "nan-input", "--select", "dynamic-bounds"], 1, id="repeated-select"),
])
def test_fail_on_select_ignore(args, code, capsys):
    rc, out, err = run(["scan", EXAMPLE, *args], capsys)
    assert rc == code, (out, err)


def test_unknown_code_is_an_error(capsys):
    rc, _, err = run(["scan", EXAMPLE, "--select", "nan-inputs"], capsys)
    assert rc == 2 and "--select[0]" in err and "unknown finding code 'nan-inputs'" in err


def test_json_output_is_filtered(capsys):
    _, out, _ = run(["scan", EXAMPLE, "--format", "json", "--ignore", "nan-input"], capsys)
    body = json.loads(out)
    codes = {f["code"] for c in body["clips"] for t in c["translations"] for f in t["findings"]}
    assert "nan-input" not in codes and "engine-behaviour" in codes
    dml = next(t for t in body["summary"]["targets"] if t["label"] == "directml")
    assert dml == {"label": "directml", "exact": 4, "drift": 0, "unsupported": 1}  # the clip's own scale-bias
    assert body["clips"][1]["findings"][0]["code"] == "scale-bias"  # finding is not a translation's


def two_clips() -> onnx.ModelProto:
    """The first clip of clip_model, then a second one named 'new'."""
    m = clip_model(13, F32, 0, 6, np.float32, name="old")
    m.graph.node[0].output[0] = "t"
    m.graph.node.append(helper.make_node("Clip", ["t", "lo", "hi"], ["y"], name="new"))
    return m


def test_baseline_suppresses_known_findings_and_fails_on_new_ones(tmp_path, capsys):
    old = write(tmp_path / "m.onnx", clip_model(13, F32, 0, 6, np.float32, name="old"))
    base = tmp_path / "baseline.json"
    rc, _, err = run(["scan", str(old), "--target", "directml", "--write-baseline", str(base)], capsys)
    assert rc == 0 and "wrote 1 finding(s)" in err
    entries = json.loads(base.read_text())["findings"]
    assert [e["code"] for e in entries] == ["nan-input"]
    assert entries[0]["fingerprint"] == fingerprint("graph/old", "directml", entries[0]["code"])

    rc, out, _ = run(["scan", str(old), "--target", "directml", "--baseline", str(base)], capsys)
    assert rc == 0 and "1 suppressed by the baseline" in out

    write(tmp_path / "m.onnx", two_clips())
    rc, out, _ = run(["scan", str(old), "--target", "directml", "--baseline", str(base), "--format", "sarif"],
                     capsys)
    assert rc == 1
    results = json.loads(out)["runs"][0]["results"]
    suppressed = [r for r in results if r.get("suppressions")]
    fresh = [r for r in results if not r.get("suppressions")]
    assert {r["locations"][0]["logicalLocations"][0]["name"] for r in suppressed} == {"old"}
    assert {r["locations"][0]["logicalLocations"][0]["name"] for r in fresh} == {"new"}
    rc, out, _ = run(["scan", str(old), "--target", "directml", "--baseline", str(base), "--format", "markdown"],
                     capsys)
    assert "1 finding(s) suppressed by the baseline." in out
    assert "| warning | `nan-input` | `graph/new` |" in out and "| warning | `nan-input` | `graph/old` |" not in out


def test_baseline_counts_duplicates(tmp_path, capsys):
    """Two identical findings need two entries: a baseline with one suppresses one."""
    path = write(tmp_path / "m.onnx", clip_model(13, F32, 0, 6, np.float32))
    base = tmp_path / "b.json"
    run(["scan", str(path), "--target", "directml", "--target", "directml", "--write-baseline", str(base)], capsys)
    body = json.loads(base.read_text())
    assert [e["code"] for e in body["findings"]] == ["nan-input", "nan-input"]
    body["findings"] = body["findings"][:1]
    base.write_text(json.dumps(body))
    rc, out, _ = run(["scan", str(path), "--target", "directml", "--target", "directml", "--baseline", str(base),
                      ], capsys)
    assert rc == 1 and "1 suppressed" in out


@pytest.mark.parametrize("content,msg", [
    pytest.param("not json", "cannot read baseline", id="not-json"),
    pytest.param('{"findings": []}', "is not a clipbridge baseline", id="no-format"),
    pytest.param('{"format": "clipbridge-baseline/1", "findings": [{"code": "x"}]}', "is not a clipbridge baseline",
                 id="no-fingerprint"),
])
def test_bad_baseline(tmp_path, capsys, content, msg):
    base = tmp_path / "b.json"
    base.write_text(content)
    rc, _, err = run(["scan", EXAMPLE, "--baseline", str(base)], capsys)
    assert rc == 2 and msg in err


def test_unresolved_clip_is_a_finding(tmp_path, capsys):
    path = write(tmp_path / "m.onnx", clip_model(6, I32, 0, 6))
    rc, out, _ = run(["scan", str(path), "--format", "sarif", "--fail-on", "error"], capsys)
    results = json.loads(out)["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == [UNRESOLVED] and "Clip-6 does not take INT32" in \
        results[0]["message"]["text"]
    assert rc == 1
    rc, _, _ = run(["scan", str(path), "--ignore", UNRESOLVED], capsys)
    assert rc == 0


# --- the API ---------------------------------------------------------------------------------------------

def inspect(client, query: str):
    data = Path(EXAMPLE).read_bytes()
    return client.post(f"/v1/models/inspect{query}", content=data,
                       headers={"content-type": "application/octet-stream"})


@pytest.mark.parametrize("query,absent,present", [
    pytest.param("?ignore=nan-input", {"nan-input"}, {"engine-behaviour", "dynamic-bounds"}, id="ignore"),
    pytest.param("?ignore=nan-input,engine-behaviour", {"nan-input", "engine-behaviour"}, {"dynamic-bounds"},
                 id="ignore-comma"),
    pytest.param("?select=dynamic-bounds", {"nan-input", "engine-behaviour"}, {"dynamic-bounds"},
                 id="select"),
    pytest.param("?select=dynamic-bounds&select=nan-input", {"engine-behaviour"}, {"dynamic-bounds", "nan-input"},
                 id="select-repeated"),
])
def test_inspect_filters(client, query, absent, present):
    r = inspect(client, query)
    assert r.status_code == 200, r.text
    body = r.json()
    codes = {f["code"] for c in body["clips"] for t in c["translations"] for f in t["findings"]}
    assert not codes & absent and present <= codes


def test_inspect_ignore_recomputes_status(client):
    body = inspect(client, "?ignore=nan-input,scale-bias").json()
    dml = next(t for t in body["summary"]["targets"] if t["label"] == "directml")
    assert dml == {"label": "directml", "exact": 4, "drift": 0, "unsupported": 1}


def test_inspect_unknown_code_is_422(client):
    r = inspect(client, "?ignore=nan-input&ignore=bogus")
    assert r.status_code == 422 and r.headers["content-type"] == "application/problem+json"
    assert r.json()["errors"][0]["loc"] == "ignore[1]"


def test_inspect_filters_are_documented(client):
    params = {p["name"]: p for p in client.get("/openapi.json").json()["paths"]["/v1/models/inspect"]["post"]
              ["parameters"]}
    assert "nan-input" in params["select"]["description"] and "ignore" in params
