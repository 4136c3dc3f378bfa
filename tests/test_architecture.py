"""The import contract of app/ (docs/architecture.md), read from the source with `ast`: no import circles, no
`app.*` import inside a function, and the layering rules that hold today. A declared exception names its reason."""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[1] / "app" / "clipbridge"

# The layers, each a package (docs/architecture.md). core: the foundation, importing only itself.
CORE = ("clipbridge.core",)
# The behaviour table (issue 45): every fact about how an engine or a spec computes, one row each. It imports only
# core and itself; the dialects, scan, diff, fix, chain and the engine registry read their facts from it.
BEHAVIOUR = ("clipbridge.behaviour",)
# The kernels, the engine plumbing and the dialect kit: each imports only core and itself.
KERNELS = ("clipbridge.kernels",)
ENGINES = ("clipbridge.engines",)
# The engine registry (docs/architecture.md, Engines): a module per engine, reached only through the registry; the
# package imports only core, the engines' configuration and itself.
RUNTIMES = "clipbridge.engines.runtimes"
NOT_AN_ENGINE = ("base", "names", "registry", "gpu")  # its interface, parser, list and the devices' shared probe
RUNTIMES_MAY_IMPORT = ("clipbridge.core", "clipbridge.engines.config", "clipbridge.engines.threads",
                       "clipbridge.engines.budget", "clipbridge.behaviour", RUNTIMES)  # an engine's rows
KIT = ("clipbridge.dialects.kit",)
# The report formats (SARIF, JUnit, GitHub, Markdown), each written once from the findings view: they import only
# core and the package itself (its version); every command's report (lint, diff, fix, chain, fleet) imports them.
REPORTS = ("clipbridge.reports",)
# The service: the use cases over the registry. They never import scan, lint, diff, fix or the top.
SERVICE = ("clipbridge.service",)
# The top: the transports and entry points. They may import each other; nothing below them imports them.
TOP = ("clipbridge.api", "clipbridge.cli", "clipbridge.main", "clipbridge.server", "clipbridge.client", "clipbridge.__main__")
# Fleet mode: above diff and scan, beside the CLI; only the CLI imports it, and it never imports the top.
FLEET = ("clipbridge.fleet",)
# The converter chain (docs/chain.md): it uses diff's engine runs, it is not inside diff; only the top imports it.
CHAIN = ("clipbridge.chain",)
BELOW_CHAIN = ("clipbridge.core", "clipbridge.engines", "clipbridge.diff", "clipbridge.scan", "clipbridge.dialects",
               *REPORTS, *BEHAVIOUR)  # and `app` itself: __version__
# What the fix's proof may import of the diff: the two-sided diff's entry (report), its Options (run) and the sides.
# The diff's internal steps (engines, child, subgraphs) are what an executor that intercepts the diff would match.
PROOF_REACHES = ("clipbridge.diff", "clipbridge.diff.report", "clipbridge.diff.run", "clipbridge.diff.sides")
# What a dialect module may never import: the layers above the dialects.
ABOVE_DIALECTS = ("clipbridge.service", "clipbridge.scan", "clipbridge.lint", "clipbridge.diff", "clipbridge.fix", *FLEET, *CHAIN, *TOP)
# The modules of app/clipbridge/dialects that are no dialect: the kit, the registry and the package itself.
NOT_A_DIALECT = ("kit", "registry")

# (importer, imported) pairs allowed past a rule below, each with its reason. Keep this short: a new entry is a
# design decision, not a way to make the test pass.
TOP_IMPORT_EXCEPTIONS: dict[tuple[str, str], str] = {}
FLEET_IMPORT_EXCEPTIONS = {
    ("clipbridge.api.schemas_export", "clipbridge.fleet.models"): "schemas/ holds every report's schema, fleet's "
    "results.jsonl line among them; fleet/models.py imports pydantic and diff's models only, never a worker",
}

_SERVE_ONLY = ("`clipbridge serve` only: the server's modules import uvicorn and the ASGI stack, which every other "
               "command would pay for at start")
FUNCTION_IMPORT_EXCEPTIONS = {
    ("clipbridge.cli.main", "clipbridge.server.observability"): _SERVE_ONLY,
    ("clipbridge.cli.main", "clipbridge.server.serving"): _SERVE_ONLY,
}


# (module, dialect) pairs allowed past "core and the service never name a dialect in code", each with its reason.
NAMING_EXCEPTIONS: dict[tuple[str, str], str] = {
    **{("clipbridge.core.findings", d): "each code's one-line explanation cites the dialects as examples: removed when the "
       "rule texts move into each dialect's catalogue (issue 26)"
       for d in ("onnx", "openvino", "directml", "pytorch", "stablehlo")},
    ("clipbridge.core.drift", "directml"): "two finding messages (the ambiguous min > max, ScaleBias precision) name "
                                    "DirectML: removed when the drift/translate path takes them from the dialect",
    **{("clipbridge.service.translate", d): "two finding messages (bounds computed at run time, a strided DirectML tensor) "
       "name the dialects: removed when the drift/translate path takes them from the dialect"
       for d in ("onnx", "openvino", "directml")},
}


def _name(path: Path) -> str:
    parts = list(path.relative_to(APP.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(p): p for p in sorted(APP.rglob("*.py"))}


def _dialect(module: str) -> str | None:
    """The dialect an app/clipbridge/dialects module belongs to: its package (clipbridge.dialects.onnx.spec -> onnx) or, for the flat
    modules of today, its name up to the first underscore (clipbridge.dialects.onnx_port -> onnx); None for the kit, the
    registry and clipbridge.dialects itself."""
    parts = module.split(".")
    if len(parts) < 3 or parts[:2] != ["clipbridge", "dialects"] or parts[2] in NOT_A_DIALECT:
        return None
    return parts[2].split("_")[0]


DIALECTS = frozenset(d for d in map(_dialect, MODULES) if d is not None)


def _target(module: str, node: ast.ImportFrom | ast.Import, alias: ast.alias, is_package: bool) -> str | None:
    """The app module an import names (the longest existing prefix), or None outside app/."""
    if isinstance(node, ast.Import):
        full = alias.name
    else:
        base = node.module or ""
        if node.level:
            here = module.split(".") if is_package else module.split(".")[:-1]
            here = here[:len(here) - node.level + 1]
            base = ".".join(here + ([base] if base else []))
        full = f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base
    if full != "clipbridge" and not full.startswith("clipbridge."):
        return None
    while full not in MODULES:
        full = full.rpartition(".")[0]
    return full


@lru_cache(maxsize=None)
def imports(module: str, source: str | None = None) -> list[tuple[str, int, bool]]:
    """(imported app module, line, inside a function) for every import statement of `module` (its file, or
    `source` in its place)."""
    path = MODULES[module]
    tree = ast.parse(source if source is not None else path.read_text(encoding="utf-8"))
    found: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                for alias in child.names:
                    target = _target(module, child, alias, path.name == "__init__.py")
                    if target is not None and target != module:
                        found.append((target, child.lineno, in_function))
            visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(tree, False)
    return found


# Words of an identifier or a string: camelCase, snake_case and prose alike (DirectMLSpec -> direct, ml, spec).
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def dialects_named(text: str, dialects: frozenset[str]) -> set[str]:
    """The dialects `text` names: one to three consecutive words that spell a dialect's name (OpenVinoSpec,
    "The DirectML tensor", openvino_bf16_variant); an engine such as onnxruntime is one word, so it names none."""
    words = [w.lower() for w in _WORD.findall(text)]
    return {"".join(words[i:j]) for i in range(len(words)) for j in range(i + 1, min(i + 4, len(words) + 1))} & dialects


def _docstrings(tree: ast.AST) -> set[int]:
    holders = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {id(n.body[0].value) for n in ast.walk(tree) if isinstance(n, holders) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}


def _texts(node: ast.AST, docstrings: set[int]) -> list[str]:
    """The identifiers and string literals one node writes in code (docstrings and comments are prose)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
        return [node.value]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.alias):
        return [node.name, node.asname or ""]
    if isinstance(node, ast.ImportFrom):
        return [node.module or ""]
    for kind, field in ((ast.Name, "id"), (ast.Attribute, "attr"), (ast.arg, "arg"), (ast.keyword, "arg")):
        if isinstance(node, kind):
            return [getattr(node, field) or ""]
    return []


@lru_cache(maxsize=None)
def names(module: str, source: str | None = None) -> list[tuple[str, int]]:
    """(dialect, line) for every identifier or string literal of `module`'s code that names a dialect."""
    tree = ast.parse(source if source is not None else MODULES[module].read_text(encoding="utf-8"))
    docstrings = _docstrings(tree)
    return [(d, getattr(node, "lineno", 0)) for node in ast.walk(tree) for text in _texts(node, docstrings)
            for d in sorted(dialects_named(text, DIALECTS))]


def naming(sources: dict[str, str] | None = None) -> list[str]:
    """Every place core or the service names a dialect in code, past the declared exceptions."""
    sources = sources or {}
    return [f"{m}:{line} names the dialect {d}: core and the service never name a dialect in code"
            for m in sorted(MODULES) if _under(m, (*CORE, *SERVICE))
            for d, line in names(m, sources.get(m)) if (m, d) not in NAMING_EXCEPTIONS]


def graph(sources: dict[str, str] | None = None) -> dict[str, set[str]]:
    """module -> the app modules it imports (module level and inside functions alike)."""
    sources = sources or {}
    return {m: {t for t, _, _ in imports(m, sources.get(m))} for m in MODULES}


def circles(g: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(g[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(g):
        if v not in index:
            connect(v)
    return found


def _under(module: str, prefixes: tuple[str, ...] | set[str]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def _engine_module(module: str) -> bool:
    """One engine's module under the registry (clipbridge.engines.runtimes.openvino), not its interface or list."""
    parent, _, last = module.rpartition(".")
    return parent == RUNTIMES and last not in NOT_AN_ENGINE


def violations(g: dict[str, set[str]]) -> list[str]:
    """Every layering rule broken by the graph, as readable lines."""
    out = []
    for m, targets in sorted(g.items()):
        for t in sorted(targets):
            if _under(m, CORE) and not _under(t, CORE):
                out.append(f"{m} -> {t}: core imports only core")
            if _under(m, BEHAVIOUR) and not _under(t, (*CORE, *BEHAVIOUR)):
                out.append(f"{m} -> {t}: the behaviour table imports only core and itself")
            if _under(m, KERNELS) and not _under(t, (*CORE, *KERNELS)):
                out.append(f"{m} -> {t}: kernels import only core and kernels")
            if _under(m, ENGINES) and not _under(t, (*CORE, *ENGINES, *BEHAVIOUR)):  # an engine's rows
                out.append(f"{m} -> {t}: engine plumbing imports only core, the behaviour table and itself")
            if _under(m, (RUNTIMES,)) and not _under(t, RUNTIMES_MAY_IMPORT):
                out.append(f"{m} -> {t}: the engine registry imports only core, the engines' configuration and itself")
            if _engine_module(t) and not _under(m, (RUNTIMES,)):
                out.append(f"{m} -> {t}: an engine module is reached through the engine registry")
            if _under(m, REPORTS) and t != "clipbridge" and not _under(t, (*CORE, *REPORTS)):
                out.append(f"{m} -> {t}: the report formats import only core and themselves")
            if _under(m, KIT) and not _under(t, (*CORE, *KIT)):
                out.append(f"{m} -> {t}: the dialect kit imports only core and itself")
            if _dialect(m) and not (_under(t, (*CORE, *ENGINES, *KIT, *BEHAVIOUR)) or _dialect(t) == _dialect(m)):
                out.append(f"{m} -> {t}: a dialect imports only core, the engines, the kit, the behaviour table and "
                           "itself")
            if _under(m, SERVICE) and _under(t, ("clipbridge.scan", "clipbridge.lint", "clipbridge.diff", "clipbridge.fix", *TOP)):
                out.append(f"{m} -> {t}: the service never imports scan, lint, diff, fix or the top")
            if _under(m, ("clipbridge.dialects",)) and _under(t, ABOVE_DIALECTS):
                out.append(f"{m} -> {t}: a dialect never imports the layers above it")
            if _under(m, ("clipbridge.scan", "clipbridge.lint")) and _under(t, TOP):
                out.append(f"{m} -> {t}: scan and lint never import the API, CLI or server")
            if _under(m, ("clipbridge.scan",)) and _under(t, ("clipbridge.diff", "clipbridge.fix")):
                out.append(f"{m} -> {t}: scan sits below diff and fix")
            if _under(m, ("clipbridge.diff",)) and _under(t, ("clipbridge.fix",)):
                out.append(f"{m} -> {t}: diff sits below fix (a fix hands the diff its side's replay policy)")
            if m == "clipbridge.fix.proof" and _under(t, ("clipbridge.diff",)) and t not in PROOF_REACHES:
                out.append(f"{m} -> {t}: the proof reaches the diff through its sides and report only, never the "
                           "diff's internal steps (issue 45: no interception)")
            if _under(t, FLEET) and not _under(m, (*FLEET, "clipbridge.cli")) and (m, t) not in FLEET_IMPORT_EXCEPTIONS:
                out.append(f"{m} -> {t}: fleet sits above diff and scan; only the CLI imports it")
            if _under(m, CHAIN) and t != "clipbridge" and not _under(t, (*BELOW_CHAIN, *CHAIN)):
                out.append(f"{m} -> {t}: the chain imports only core, the engines, diff, scan, the dialects, the report "
                           "formats and itself")
            if _under(t, CHAIN) and not _under(m, (*CHAIN, *TOP)):
                out.append(f"{m} -> {t}: only the API and the CLI import the chain")
            if m == "clipbridge.diff.passes" and t in ("clipbridge.diff.run", "clipbridge.diff.report"):
                out.append(f"{m} -> {t}: the capture passes sit below the runs and the walk that call them")
            if _under(t, TOP) and not _under(m, TOP) and (m, t) not in TOP_IMPORT_EXCEPTIONS:
                out.append(f"{m} -> {t}: the API, CLI and server are the top; nothing imports them")
    return out


def function_imports(sources: dict[str, str] | None = None) -> list[str]:
    sources = sources or {}
    return [f"{m}:{line} imports {t} inside a function" for m in sorted(MODULES)
            for t, line, inside in imports(m, sources.get(m)) if inside and (m, t) not in FUNCTION_IMPORT_EXCEPTIONS]


def test_the_scan_sees_app():
    """The test reads the real tree: the modules and edges it must see are there."""
    g = graph()
    assert {"clipbridge.cli.main", "clipbridge.service.specs", "clipbridge.dialects.registry", "clipbridge.dialects.onnx", "clipbridge.cli.lint"} <= g.keys()
    assert "clipbridge.dialects.registry" in g["clipbridge.service.specs"] and "clipbridge.dialects.onnx" in g["clipbridge.dialects.registry"]
    assert "clipbridge.cli.lint" in g["clipbridge.cli.main"]
    assert {"onnx", "openvino", "directml", "tosa", "webnn", "pytorch"} <= DIALECTS
    assert {"kit", "registry", "onnx_port"}.isdisjoint(DIALECTS)


def test_no_import_circles():
    assert circles(graph()) == []


def test_no_app_import_inside_a_function():
    """Optional third-party engines may be imported inside functions; app modules never are."""
    assert function_imports() == []


def test_layering_rules():
    assert violations(graph()) == []


def test_core_and_the_service_name_no_dialect():
    """Adding a dialect is one folder and one registry line: nothing below the dialects knows their names."""
    assert naming() == []


def test_declared_exceptions_are_still_needed():
    """An exception whose import is gone is dropped from the list, so the list stays the truth."""
    g = graph()
    assert [pair for pair in {**TOP_IMPORT_EXCEPTIONS, **FLEET_IMPORT_EXCEPTIONS} if pair[1] not in g[pair[0]]] == []
    late = {(m, t) for m in MODULES for t, _, inside in imports(m) if inside}
    assert [pair for pair in FUNCTION_IMPORT_EXCEPTIONS if pair not in late] == []
    assert [(m, d) for m, d in NAMING_EXCEPTIONS if m not in MODULES or d not in {n for n, _ in names(m)}] == []


# --- the rules can fail: each broken on purpose in a copy of one module's source -------------------------------

def _with(module: str, extra: str) -> dict[str, str]:
    return {module: MODULES[module].read_text(encoding="utf-8") + "\n" + extra + "\n"}


@pytest.mark.parametrize("module,extra", [
    pytest.param("clipbridge.dialects.registry", "import clipbridge.service.specs", id="registry-specs-back-edge"),
    pytest.param("clipbridge.cli.lint", "from clipbridge.cli.main import main", id="lint-cli-back-edge"),
    pytest.param("clipbridge.core.exact", "from clipbridge.core.meaning import Meaning", id="core-pair"),
])
def test_a_circle_is_caught(module, extra):
    assert circles(graph(_with(module, extra))) != []


@pytest.mark.parametrize("module,extra", [
    pytest.param("clipbridge.service.translate", "def f():\n    from clipbridge.service.specs import Spec", id="from-import"),
    pytest.param("clipbridge.scan.report", "def f():\n    import clipbridge.core.numbers", id="plain-import"),
    pytest.param("clipbridge.lint.rules", "def f():\n    from . import report", id="relative-import"),
    pytest.param("clipbridge.core.numbers", "async def f():\n    from clipbridge import exact", id="async-function"),
])
def test_an_import_inside_a_function_is_caught(module, extra):
    assert function_imports(_with(module, extra)) != []


def test_a_third_party_import_inside_a_function_is_allowed():
    assert function_imports(_with("clipbridge.service.translate", "def f():\n    import onnxruntime")) == []


@pytest.mark.parametrize("module,extra,rule", [
    pytest.param("clipbridge.core.exact", "from clipbridge.dialects import common", "core imports only core", id="core-up"),
    pytest.param("clipbridge.kernels.half", "from clipbridge.dialects import common", "kernels import only", id="kernels-up"),
    pytest.param("clipbridge.service.translate", "from clipbridge.scan import report", "the service never", id="service-scan"),
    pytest.param("clipbridge.service.capabilities", "from clipbridge.lint import rules", "the service never", id="service-lint"),
    pytest.param("clipbridge.dialects.tosa", "from clipbridge.service.translate import translate_one", "a dialect never", id="dialect-up"),
    pytest.param("clipbridge.dialects.kit.common", "from clipbridge.lint import rules", "a dialect never", id="dialect-lint"),
    pytest.param("clipbridge.scan.report", "from clipbridge.api import models", "scan and lint never", id="scan-api"),
    pytest.param("clipbridge.lint.report", "import clipbridge.cli.main", "scan and lint never", id="lint-cli"),
    pytest.param("clipbridge.service.translate", "from clipbridge.main import app", "nothing imports them", id="service-main"),
    pytest.param("clipbridge.diff.report", "from clipbridge.server import serving", "nothing imports them", id="diff-server"),
    pytest.param("clipbridge.diff.passes", "from clipbridge.diff import run", "the capture passes sit below",
                 id="passes-run"),
    pytest.param("clipbridge.engines.sandbox", "from clipbridge.dialects import tosa", "engine plumbing imports only", id="engines-up"),
    pytest.param("clipbridge.kernels.plan", "from clipbridge.engines import config", "kernels import only", id="kernels-engines"),
    pytest.param("clipbridge.dialects.kit.common", "from clipbridge.engines import config", "the dialect kit imports only",
                 id="kit-engines"),
    pytest.param("clipbridge.dialects.kit.base", "from clipbridge.dialects import onnx", "the dialect kit imports only",
                 id="kit-dialect"),
    pytest.param("clipbridge.dialects.tosa", "from clipbridge.dialects import webnn", "a dialect imports only", id="dialect-dialect"),
    pytest.param("clipbridge.dialects.onnx.emit", "from clipbridge.dialects.openvino import minmax",
                 "a dialect imports only", id="dialect-module-of-another"),
    pytest.param("clipbridge.dialects.tflite", "from clipbridge.dialects import registry", "a dialect imports only",
                 id="dialect-registry"),
    pytest.param("clipbridge.scan.report", "from clipbridge.diff import report", "scan sits below diff", id="scan-diff"),
    pytest.param("clipbridge.diff.report", "from clipbridge.fleet import runner", "fleet sits above", id="diff-fleet"),
    pytest.param("clipbridge.api.diff_routes", "from clipbridge.fleet import job", "only the CLI imports it", id="api-fleet"),
    pytest.param("clipbridge.fleet.runner", "from clipbridge.cli import main", "nothing imports them", id="fleet-cli"),
    pytest.param("clipbridge.diff.report", "from clipbridge.chain import report", "only the API and the CLI import the chain",
                 id="diff-chain"),
    pytest.param("clipbridge.chain.report", "from clipbridge.fix import run", "the chain imports only", id="chain-fix"),
    pytest.param("clipbridge.reports.sarif", "from clipbridge.lint import rules", "the report formats import only",
                 id="reports-lint"),
    pytest.param("clipbridge.behaviour.rows", "from clipbridge.scan import patterns", "the behaviour table imports only",
                 id="behaviour-scan"),
    pytest.param("clipbridge.behaviour.model", "from clipbridge.dialects import openvino",
                 "the behaviour table imports only", id="behaviour-dialect"),
    pytest.param("clipbridge.engines.runtimes.openvino", "from clipbridge.engines import sandbox",
                 "the engine registry imports only", id="runtime-sandbox"),
    pytest.param("clipbridge.diff.engines", "from clipbridge.engines.runtimes import onnxruntime",
                 "reached through the engine registry", id="diff-engine-module"),
    pytest.param("clipbridge.reports.junit", "from clipbridge.diff import formats", "the report formats import only",
                 id="reports-diff"),
    pytest.param("clipbridge.diff.sides", "from clipbridge.fix import replay", "diff sits below fix", id="diff-fix"),
    pytest.param("clipbridge.fix.proof", "from clipbridge.diff import engines", "the proof reaches the diff",
                 id="proof-diff-internals"),
    pytest.param("clipbridge.fix.proof", "from clipbridge.diff.child import single_node", "the proof reaches the diff",
                 id="proof-diff-child"),
])
def test_a_layering_break_is_caught(module, extra, rule):
    assert any(rule in line for line in violations(graph(_with(module, extra))))


def test_a_dialect_module_belongs_to_its_dialect():
    """Flat modules of today and the packages to come map to the same dialect; the kit and the registry to none."""
    assert [_dialect(m) for m in ("clipbridge.dialects.onnx", "clipbridge.dialects.onnx_port", "clipbridge.dialects.onnx.spec",
                                  "clipbridge.dialects.tflite_engine", "clipbridge.dialects.kit.base", "clipbridge.dialects.registry",
                                  "clipbridge.dialects")] == ["onnx", "onnx", "onnx", "tflite", None, None, None]


@pytest.mark.parametrize("module,extra", [
    pytest.param("clipbridge.service.execute", 'BACKEND = "tosa"', id="service-string"),
    pytest.param("clipbridge.service.execute", "from clipbridge.dialects import webnn", id="service-import"),
    pytest.param("clipbridge.service.capabilities", "def stablehlo_notes() -> None: ...", id="service-function-name"),
    pytest.param("clipbridge.service.field_errors", "class TFLiteError(Exception): ...", id="service-camel-case"),
    pytest.param("clipbridge.core.numbers", 'MESSAGE = "The DirectML tensor is strided"', id="core-prose-in-code"),
    pytest.param("clipbridge.core.dtypes", "TOSA_NAMES = {}", id="core-dtypes-other-dialect"),
])
def test_naming_a_dialect_is_caught(module, extra):
    assert naming(_with(module, extra)) != []


@pytest.mark.parametrize("module,extra", [
    pytest.param("clipbridge.service.execute", 'def f() -> None:\n    """TOSA and WebNN say so."""', id="docstring"),
    pytest.param("clipbridge.service.execute", "# onnx in a comment", id="comment"),
    pytest.param("clipbridge.service.execute", 'ENGINE = "onnxruntime"', id="engine-name"),
])
def test_prose_and_engine_names_are_not_dialect_names(module, extra):
    assert naming(_with(module, extra)) == []
