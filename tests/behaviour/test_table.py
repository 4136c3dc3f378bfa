"""The behaviour table's own contract (clipbridge.behaviour): every row complete, its source a citation or a
measurement naming the engine versions, its `test` an existing test; every consumer's rule (diff causes, fix
rewrites, chain lowering rules) names the rows it implements; every cause the diff names is a row's."""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

import pytest

from clipbridge import behaviour
from clipbridge.behaviour.model import VERSIONS
from clipbridge.chain import litert_static
from clipbridge.chain import rules as chain_rules
from clipbridge.diff import accumulation, causes, op_causes, quantized
from clipbridge.fix import found
from clipbridge.fix import rules as fix_rules

ROOT = Path(__file__).resolve().parents[2]
KINDS = {"nan", "bound", "rounding", "saturation", "cast", "precision", "accumulation", "fusion", "lowering",
         "rewrite"}
ROWS = sorted(behaviour.ROWS)
CONSUMERS = {  # each consumer's table of rules: every entry names its rows
    "diff.causes": causes.RULES, "diff.op_causes": op_causes.RULES, "diff.quantized": quantized.RULES,
    "diff.accumulation": (accumulation.accumulation_order,), "fix.rules": fix_rules.RULES,
    "chain.rules": (*chain_rules.RULES.values(), *chain_rules.SATURATION.values(), chain_rules.output_saturation,
                    chain_rules.refused),
    "chain.litert_static": (*litert_static.LOWERING, litert_static.fused_into),
}


@lru_cache(maxsize=None)
def _tests_in(path: str) -> set[str]:
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    return {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and n.name.startswith("test_")}


@pytest.mark.parametrize("row_id", ROWS)
def test_each_row_is_complete(row_id):
    r = behaviour.row(row_id)
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", r.id), r.id
    assert r.ops and r.engines and r.condition and r.gives and r.source and r.kind in KINDS, r
    assert set(r.reading) <= set(r.engines) | set(behaviour.ENGINES), r.reading


@pytest.mark.parametrize("row_id", ROWS)
def test_each_row_names_an_existing_test(row_id):
    path, _, name = behaviour.row(row_id).test.partition("::")
    assert (ROOT / path).is_file(), path
    assert name in _tests_in(path), f"{path} has no {name}"


@pytest.mark.parametrize("row_id", ROWS)
def test_a_measured_row_names_the_engine_versions(row_id):
    source = behaviour.row(row_id).source
    if "measured with" in source:
        assert any(v in source for v in VERSIONS.values()), source


def test_rows_for_an_engine():
    """The engine registry's per-engine interface reads its rows here."""
    ids = {r.id for r in behaviour.rows_for("openvino")}
    assert {"openvino-clamp-nan-to-lower", "softmax-nan-row", "openvino-int64-as-int32"} <= ids
    assert all("openvino" in r.engines for r in behaviour.rows_for("openvino"))
    assert "openvino-clamp-nan-to-lower" not in {r.id for r in behaviour.rows_for("onnxruntime")}
    assert {r.id for r in behaviour.rows_for_op("Softmax")} == {"softmax-nan-row"}


@pytest.mark.parametrize("consumer", sorted(CONSUMERS))
def test_every_rule_names_its_rows(consumer):
    for rule in CONSUMERS[consumer]:
        rows = getattr(rule, "rows", ())
        assert rows and all(i in behaviour.ROWS for i in rows), f"{consumer}.{rule.__name__}"


def test_every_diff_cause_is_a_rows():
    """A cause the diff names comes from a row its rule states: one row (plus its test) is a new cause."""
    for table in ("diff.causes", "diff.op_causes", "diff.quantized", "diff.accumulation"):
        for rule in CONSUMERS[table]:
            assert any(behaviour.row(i).cause for i in rule.rows), rule.__name__
    assert set(found.RULE_CAUSE.values()) <= {r.cause for r in behaviour.ROWS.values()}


def test_a_rule_citing_a_missing_row_fails_at_import():
    with pytest.raises(KeyError):
        behaviour.states("no-such-row")
