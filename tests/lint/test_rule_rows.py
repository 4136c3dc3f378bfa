"""The lint catalogue's per-dialect rows (explain, SARIF rule help, docs/dialect-rules.md) come from the registry:
each registered dialect's rule_texts, in registry order (issue 26)."""

from __future__ import annotations

import pytest

from app.dialects import registry
from app.lint.rules import RULES, dialect_rows


@pytest.mark.xfail(strict=True, reason=(
    "issue 26: the onnx, openvino and directml rows are still read from the `builtin` tables of "
    "app/lint/rules.py; once their catalogue.py carry them (the merge) this passes: delete the tables, Rule.builtin, "
    "dialect_rows' `builtin` parameter and this marker"))
def test_every_row_comes_from_a_registered_dialects_rule_texts():
    for rule_id, rule in RULES.items():
        assert rule.dialects == dialect_rows(rule_id), rule_id


def test_rows_follow_the_registry_order_and_names():
    for rule_id, rule in RULES.items():
        assert list(rule.dialects) == [n for n in registry.names() if n in rule.dialects], rule_id
    assert dialect_rows("nan-bound", {"not-registered": ("r", "s")}) == dialect_rows("nan-bound")


def test_a_dialects_rule_texts_win_over_the_transitional_table():
    name, d = next((n, d) for n, d in registry.DIALECTS.items() if d.rule_texts)
    code, row = next(iter(d.rule_texts.items()))
    assert dialect_rows(code, {name: ("other", "elsewhere")})[name] == tuple(row)
