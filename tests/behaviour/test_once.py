"""One fact, one place (issue 45 item 1): an engine fact is stated in the behaviour table only. Three checks
over app/clipbridge outside clipbridge/behaviour, each shown to fail on a planted duplicate:

- wording: no module writes the words a row reserves for its fact (Row.phrases), in code, docstrings or comments;
- readings: no dict literal maps an engine to a reading of the table's vocabulary ({"openvino": "lower"}) — a
  second table of readings;
- causes: no module that detects causes or writes rules spells a cause the table names as a string literal; it
  takes the name from the row (behaviour.row(id).cause).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from clipbridge import behaviour

APP = Path(__file__).resolve().parents[2] / "app" / "clipbridge"
OWN = APP / "behaviour"
SOURCES = {p: p.read_text(encoding="utf-8") for p in sorted(APP.rglob("*.py")) if OWN not in p.parents}
# The modules that detect a cause or write a rule from the facts: they name causes through rows only.
CONSUMERS = [APP / p for p in ("diff/causes.py", "diff/op_causes.py", "diff/accumulation.py", "diff/quantized.py",
                               "fix/facts.py", "fix/rules.py", "fix/op_guards.py", "fix/found.py", "chain/rules.py",
                               "scan/patterns.py")]
VOCABULARY = {r for row in behaviour.ROWS.values() for r in row.reading.values()}
ENGINE_KEYS = set(behaviour.ENGINES) | {e for row in behaviour.ROWS.values() for e in row.engines}


def _words(text: str) -> str:
    """Text as a sentence reads, whatever wraps it: comment marks, string quotes and line breaks are spaces."""
    text = re.sub(r'"\s*\n\s*(f|rf|fr)?"', "", text)  # implicitly joined string literals
    text = re.sub(r"\n\s*#\s*", " ", text)
    return re.sub(r"\s+", " ", text).lower()


def wording(sources: dict[Path, str]) -> list[str]:
    found = []
    for path, text in sources.items():
        words = _words(text)
        found += [f"{path.relative_to(APP)} states row {r.id}: {p!r}" for r in behaviour.ROWS.values()
                  for p in r.phrases if p.lower() in words]
    return found


def readings(sources: dict[Path, str]) -> list[str]:
    found = []
    for path, text in sources.items():
        for node in ast.walk(ast.parse(text)):
            if not isinstance(node, ast.Dict) or not node.keys:
                continue
            keys = [k.value for k in node.keys if isinstance(k, ast.Constant)]
            values = [v.value for v in node.values if isinstance(v, ast.Constant)]
            if keys and set(keys) <= ENGINE_KEYS and values and len(values) == len(node.values) \
                    and set(values) <= VOCABULARY:
                found.append(f"{path.relative_to(APP)}:{node.lineno} a table of engine readings {keys}")
    return found


def _row_ids(tree: ast.AST) -> set[int]:
    """The string constants that name a row (behaviour.row/states/reading's arguments): ids, not causes."""
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
             and getattr(n.func, "attr", getattr(n.func, "id", None)) in ("row", "states", "reading")]
    return {id(a) for c in calls for a in c.args}


def causes(sources: dict[Path, str]) -> list[str]:
    names = {r.cause for r in behaviour.ROWS.values() if r.cause}
    found = []
    for path in CONSUMERS:
        tree = ast.parse(sources[path])
        ids = _row_ids(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and node.value in names and id(node) not in ids:
                found.append(f"{path.relative_to(APP)}:{node.lineno} spells the cause {node.value!r}")
    return found


def test_no_module_states_a_rows_words():
    assert wording(SOURCES) == []


def test_no_module_keeps_its_own_table_of_readings():
    assert readings(SOURCES) == []


def test_no_consumer_spells_a_cause():
    assert causes(SOURCES) == []


def test_every_nan_row_reserves_its_words():
    """The rows the issue found written four times reserve their words."""
    assert behaviour.row("openvino-clamp-nan-to-lower").phrases and behaviour.row("softmax-nan-row").phrases


def _planted(module: str, extra: str) -> dict[Path, str]:
    path = APP / module
    return {**SOURCES, path: SOURCES[path] + "\n" + extra + "\n"}


@pytest.mark.parametrize("module,extra", [
    pytest.param("diff/report.py", '# OpenVINO sends NaN to its lower\n# bound here', id="comment-across-lines"),
    pytest.param("fix/apply.py", 'def f():\n    """The Clamp: a NaN input is clamped to min."""', id="docstring"),
    pytest.param("chain/lowering.py", 'NOTE = ("LiteRT clamps its output to "\n        "[lowest, max] too")',
                 id="joined-literal"),
])
def test_a_restated_fact_is_caught(module, extra):
    assert wording(_planted(module, extra)) != []


@pytest.mark.parametrize("module,extra", [
    pytest.param("scan/report.py", 'NAN = {"onnxruntime": "propagate", "openvino": "lower"}', id="nan-table"),
    pytest.param("fix/engines.py", 'LOADS = {"onnx-reference": "runs"}', id="one-entry"),
])
def test_a_second_table_of_readings_is_caught(module, extra):
    assert readings(_planted(module, extra)) != []


def test_a_spelled_cause_is_caught():
    assert causes(_planted("diff/op_causes.py", 'CAUSE = "nan-through-softmax"')) != []
