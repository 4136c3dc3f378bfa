"""Every registered dialect reaches the rule catalogue, `clipbridge explain`, SARIF's rule help, /v1/dialects and
docs/dialect-rules.md, with its registry line as the only change (a fake dialect proves it)."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from clipbridge.service.capabilities import capabilities, target_forms
from clipbridge.cli.main import build_parser, main
from clipbridge.dialects import registry
from clipbridge.core.findings import Code
from clipbridge.lint import dialect_docs
from clipbridge.lint.rules import RULES, UNRESOLVED, explain, explain_text, help_markdown
from tests.dialects.test_registry import FAKE, _unions_built_without_fakes  # noqa: F401 (autouse fixture)
from tests.scan.models import F32, clip_model, write

RULES_PAGE = Path(__file__).resolve().parents[2] / "docs" / "dialect-rules.md"
FAKE_RULE = ("a NaN bound is ignored by the fake op", "fake spec, section 1")
FAKE_FULL = replace(FAKE, in_defaults=False, rule_texts={Code.NAN_BOUND.value: FAKE_RULE},
                    examples={"relu6": {"dialect": "fake", "lo": 0}})


@pytest.fixture
def fake(monkeypatch):
    monkeypatch.setitem(registry.DIALECTS, "fake", FAKE_FULL)  # the one registry line
    return FAKE_FULL


# --- the registered dialects -----------------------------------------------------------------------------------

def test_dialect_rules_page_is_generated_from_the_registry():
    assert dialect_docs.replaced(RULES_PAGE.read_text()) == RULES_PAGE.read_text(), (
        "docs/dialect-rules.md is stale: run `python -m clipbridge.lint.dialect_docs`")


@pytest.mark.parametrize("name", registry.names())
def test_every_dialect_has_a_rules_page_section(name):
    section = RULES_PAGE.read_text().split(dialect_docs.BEGIN)[1].split(dialect_docs.END)[0]
    assert re.search(rf"^### {re.escape(name)}$", section, re.M), f"docs/dialect-rules.md has no '### {name}'"


# A row for every code. A new dialect is merged with the rows it has (its registry line is all it needs); the
# rules page shows which codes it has no rule for yet.
COMPLETE = ("onnx", "openvino", "directml", "stablehlo")


@pytest.mark.parametrize("name", registry.names())
def test_every_dialect_has_rules_with_sources(name):
    rows = {c.value: RULES[c.value].dialects[name] for c in Code if name in RULES[c.value].dialects}
    assert rows, f"{name} has no rule_texts: the lint catalogue, explain and SARIF say nothing of it"
    assert all(rule.strip() and source.strip() for rule, source in rows.values()), name
    assert set(registry.DIALECTS[name].rule_texts) <= {c.value for c in Code} | {UNRESOLVED}, "unknown codes"
    if name in COMPLETE:
        assert set(rows) == {c.value for c in Code}, f"{name} has no rule for {set(c.value for c in Code) - set(rows)}"


def test_stablehlo_rules_come_from_its_rule_texts():
    e = explain(Code.MIN_GREATER_THAN_MAX.value)
    assert list(e["dialects"])[:4] == ["onnx", "openvino", "directml", "stablehlo"]  # registry order
    assert e["dialects"]["stablehlo"]["rule"].endswith("min > max gives max")
    assert "openxla/stablehlo docs/spec.md#clamp" in help_markdown(Code.NAN_BOUND.value)


# --- a new dialect, registered with one line --------------------------------------------------------------------

def test_a_new_dialects_rule_texts_reach_explain_and_sarif_help(fake):
    code = Code.NAN_BOUND.value
    assert explain(code)["dialects"]["fake"] == {"rule": FAKE_RULE[0], "source": FAKE_RULE[1]}
    assert f"  fake{' ' * 6}{FAKE_RULE[0]}  [{FAKE_RULE[1]}]" in explain_text(code)  # aligned to 'stablehlo'
    assert f"| fake | {FAKE_RULE[0]} | {FAKE_RULE[1]} |" in help_markdown(code)
    assert f"fake: {FAKE_RULE[1]}" in RULES[code].sources
    assert "fake" not in RULES[Code.NAN_INPUT.value].dialects  # no text for that code: no row
    assert "fake" not in RULES[UNRESOLVED].dialects


def test_a_new_dialect_in_sarif_rules_of_a_scan(fake, tmp_path, capsys):
    path = write(tmp_path / "m.onnx", clip_model(13, F32, 0, 6, __import__("numpy").float32))
    assert main(["scan", str(path), "--target", "onnx,fake", "--format", "sarif"]) == 0
    sarif = json.loads(capsys.readouterr().out)
    rule = next(r for r in sarif["runs"][0]["tool"]["driver"]["rules"] if r["id"] == Code.NAN_BOUND.value)
    assert rule["properties"]["dialects"]["fake"] == {"rule": FAKE_RULE[0], "source": FAKE_RULE[1]}
    assert f"| fake | {FAKE_RULE[0]} |" in rule["help"]["markdown"]


def test_a_new_dialect_reaches_the_rules_page_section(fake):
    text = dialect_docs.render()
    assert "### fake" in text and "used when named (`--target fake`" in text
    assert f"| `{Code.NAN_BOUND.value}` | {FAKE_RULE[0]} | {FAKE_RULE[1]} |" in text
    assert text.index("### stablehlo") < text.index("### fake")  # registry order


def test_a_new_dialects_row_in_v1_dialects(fake):
    row = next(d for d in capabilities()["dialects"] if d["dialect"] == "fake")
    assert row["in_defaults"] is False and row["version_field"] == "version"
    assert row["target_versions"] == ["v2"] and row["version_example"] == "fake:v2"
    assert row["examples"] == {"relu6": {"dialect": "fake", "lo": 0}}
    assert row["rule_texts"] == {Code.NAN_BOUND.value: {"rule": FAKE_RULE[0], "source": FAKE_RULE[1]}}
    assert row["spec_schema"]["properties"]["dialect"]["const"] == "fake"


def test_help_texts_name_every_dialect(fake):
    assert "fake[:v2]" in target_forms()
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    # one target flag (issue 37): every command's is `--target` (dest "target"), the older names aliases of it
    for command, dest in (("translate", "target"), ("scan", "target"), ("lint", "target"), ("probe", "target"),
                          ("bundle", "target")):
        action = next(a for a in sub.choices[command]._actions if a.dest == dest)
        for name in (*registry.names(), "fake"):
            assert f"{name}[:" in action.help, (command, name, action.help)
    assert "fake when named" in next(a for a in sub.choices["scan"]._actions if a.dest == "target").help
    assert "fake" in parser.description
