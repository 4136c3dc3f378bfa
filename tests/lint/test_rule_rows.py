"""The lint catalogue's per-dialect rows (explain, SARIF rule help, docs/dialect-rules.md) come from the registry:
each registered dialect's rule_texts, in registry order (issue 26)."""

from __future__ import annotations

import pytest

from clipbridge.dialects import registry
from clipbridge.lint.rules import RULES, dialect_rows


def test_every_row_is_a_registered_dialects_rule_text():
    """A rule's rows are exactly the registered dialects' rule_texts for it (nothing from a table in app/clipbridge/lint)."""
    for rule_id, rule in RULES.items():
        want = {n: tuple(d.rule_texts[rule_id]) for n, d in registry.DIALECTS.items() if rule_id in d.rule_texts}
        assert rule.dialects == want == dialect_rows(rule_id), rule_id


@pytest.mark.parametrize("name,lacks", [
    pytest.param("onnx", set(), id="onnx"),
    pytest.param("openvino", set(), id="openvino"),
    pytest.param("directml", {"unresolved-clip"}, id="directml"),
])
def test_the_oldest_dialects_catalogues_carry_every_row_the_lint_table_had(name, lacks):
    """ONNX, OpenVINO and DirectML had rows in app/clipbridge/lint/rules.py for every rule (DirectML none for unresolved
    clips, which only the ONNX and OpenVINO scans report); their catalogue.py carry them all now."""
    assert set(RULES) - set(registry.DIALECTS[name].rule_texts) == lacks


def test_rows_follow_the_registry_order_and_names():
    for rule_id, rule in RULES.items():
        assert list(rule.dialects) == [n for n in registry.names() if n in rule.dialects], rule_id
