"""One module writes each report format (issue 43, item 6): the string constants that only a writer of the format
needs appear in app/clipbridge/reports/<format>.py and nowhere else in the package. Read with `ast` (docstrings
are prose, not output), and shown to fail on a second writer put in a copy of a module's source."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[2] / "app" / "clipbridge"

# What a writer of the format has to spell: SARIF's version and result keys; JUnit's elements; a workflow command;
# a Markdown table's separator row, or a report's heading (every one names clipbridge; a bare "# " is as often a
# comment in generated code).
MARKERS: dict[str, Callable[[str], bool]] = {
    "sarif": lambda s: s in ("2.1.0", "ruleId", "partialFingerprints", "physicalLocation") or "sarif-schema" in s,
    "junit": lambda s: s in ("testsuites", "testsuite", "testcase") or "<testsuite" in s or "<testcase" in s,
    "github": lambda s: s.startswith("::") or "%0A" in s,
    "markdown": lambda s: "---|" in s or re.match(r"#{1,6} clipbridge", s) is not None,
}
WRITER = {fmt: f"clipbridge.reports.{fmt}" for fmt in MARKERS}


def _name(path: Path) -> str:
    parts = list(path.relative_to(APP.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


SOURCES = {_name(p): p.read_text(encoding="utf-8") for p in sorted(APP.rglob("*.py"))}


def _docstrings(tree: ast.AST) -> set[int]:
    holders = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {id(n.body[0].value) for n in ast.walk(tree) if isinstance(n, holders) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}


def strings(source: str) -> list[str]:
    """Every string constant of the code, f-string pieces included; docstrings left out."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    return [n.value for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in skip]


def writers(fmt: str, sources: dict[str, str]) -> set[str]:
    return {m for m, src in sources.items() if any(MARKERS[fmt](s) for s in strings(src))}


@pytest.mark.parametrize("fmt", [pytest.param(f, id=f) for f in MARKERS])
def test_one_module_writes_each_format(fmt):
    assert writers(fmt, SOURCES) == {WRITER[fmt]}


@pytest.mark.parametrize("fmt,module,extra", [
    pytest.param("sarif", "clipbridge.diff.formats", 'LOG = {"version": "2.1.0", "runs": []}', id="sarif-in-diff"),
    pytest.param("junit", "clipbridge.fleet.reports", 'ROOT = "<testsuite name=\'fleet\'>"', id="junit-in-fleet"),
    pytest.param("junit", "clipbridge.chain.formats", 'TAG = "testcase"', id="junit-element-in-chain"),
    pytest.param("github", "clipbridge.fix.formats", 'def f(x):\n    return f"::warning title={x}::"', id="github-in-fix"),
    pytest.param("markdown", "clipbridge.lint.view", 'SEP = "|---|---|"', id="markdown-table-in-lint"),
    pytest.param("markdown", "clipbridge.fleet.reports", 'TOP = "# clipbridge fleet"', id="markdown-heading-in-fleet"),
])
def test_a_second_writer_is_caught(fmt, module, extra):
    assert writers(fmt, {**SOURCES, module: SOURCES[module] + "\n" + extra + "\n"}) == {WRITER[fmt], module}


def test_prose_is_not_a_writer():
    """A docstring may name the formats; only code writes them."""
    assert writers("sarif", {"m": '"""SARIF 2.1.0, ruleId and partialFingerprints."""\n'}) == set()
