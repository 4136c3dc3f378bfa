"""The import contract of app/ (docs/architecture.md), read from the source with `ast`: no import circles, no
`app.*` import inside a function, and the layering rules that hold today. A declared exception names its reason."""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[1] / "app"

# The layers, each a package (docs/architecture.md). core: the foundation, importing only itself.
CORE = ("app.core",)
# The kernels and the engine plumbing: each imports only core and itself.
KERNELS = ("app.kernels",)
ENGINES = ("app.engines",)
# The service: the use cases over the registry. They never import scan, lint, diff, fix or the top.
SERVICE = ("app.service",)
# The top: the transports and entry points. They may import each other; nothing below them imports them.
TOP = ("app.api", "app.cli", "app.main", "app.server", "app.client", "app.__main__")
# What a dialect module may never import: the layers above the dialects.
ABOVE_DIALECTS = ("app.service", "app.scan", "app.lint", "app.diff", "app.fix", *TOP)

# (importer, imported) pairs allowed past a rule below, each with its reason. Keep this short: a new entry is a
# design decision, not a way to make the test pass.
TOP_IMPORT_EXCEPTIONS: dict[tuple[str, str], str] = {}

_SERVE_ONLY = ("`clipbridge serve` only: the server's modules import uvicorn and the ASGI stack, which every other "
               "command would pay for at start")
FUNCTION_IMPORT_EXCEPTIONS = {
    ("app.cli.main", "app.server.observability"): _SERVE_ONLY,
    ("app.cli.main", "app.server.serving"): _SERVE_ONLY,
}


def _name(path: Path) -> str:
    parts = list(path.relative_to(APP.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(p): p for p in sorted(APP.rglob("*.py"))}


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
    if full != "app" and not full.startswith("app."):
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


def violations(g: dict[str, set[str]]) -> list[str]:
    """Every layering rule broken by the graph, as readable lines."""
    out = []
    for m, targets in sorted(g.items()):
        for t in sorted(targets):
            if _under(m, CORE) and not _under(t, CORE):
                out.append(f"{m} -> {t}: core imports only core")
            if _under(m, KERNELS) and not _under(t, (*CORE, *KERNELS)):
                out.append(f"{m} -> {t}: kernels import only core and kernels")
            if _under(m, ENGINES) and not _under(t, (*CORE, *ENGINES)):
                out.append(f"{m} -> {t}: engine plumbing imports only core and itself")
            if _under(m, SERVICE) and _under(t, ("app.scan", "app.lint", "app.diff", "app.fix", *TOP)):
                out.append(f"{m} -> {t}: the service never imports scan, lint, diff, fix or the top")
            if _under(m, ("app.dialects",)) and _under(t, ABOVE_DIALECTS):
                out.append(f"{m} -> {t}: a dialect never imports the layers above it")
            if _under(m, ("app.scan", "app.lint")) and _under(t, TOP):
                out.append(f"{m} -> {t}: scan and lint never import the API, CLI or server")
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
    assert {"app.cli.main", "app.service.specs", "app.dialects.registry", "app.dialects.onnx", "app.cli.lint"} <= g.keys()
    assert "app.dialects.registry" in g["app.service.specs"] and "app.dialects.onnx" in g["app.dialects.registry"]
    assert "app.cli.lint" in g["app.cli.main"]


def test_no_import_circles():
    assert circles(graph()) == []


def test_no_app_import_inside_a_function():
    """Optional third-party engines may be imported inside functions; app modules never are."""
    assert function_imports() == []


def test_layering_rules():
    assert violations(graph()) == []


def test_declared_exceptions_are_still_needed():
    """An exception whose import is gone is dropped from the list, so the list stays the truth."""
    g = graph()
    assert [pair for pair in TOP_IMPORT_EXCEPTIONS if pair[1] not in g[pair[0]]] == []
    late = {(m, t) for m in MODULES for t, _, inside in imports(m) if inside}
    assert [pair for pair in FUNCTION_IMPORT_EXCEPTIONS if pair not in late] == []


# --- the rules can fail: each broken on purpose in a copy of one module's source -------------------------------

def _with(module: str, extra: str) -> dict[str, str]:
    return {module: MODULES[module].read_text(encoding="utf-8") + "\n" + extra + "\n"}


@pytest.mark.parametrize("module,extra", [
    pytest.param("app.dialects.registry", "import app.service.specs", id="registry-specs-back-edge"),
    pytest.param("app.cli.lint", "from app.cli.main import main", id="lint-cli-back-edge"),
    pytest.param("app.core.exact", "from app.core.meaning import Meaning", id="core-pair"),
])
def test_a_circle_is_caught(module, extra):
    assert circles(graph(_with(module, extra))) != []


@pytest.mark.parametrize("module,extra", [
    pytest.param("app.service.translate", "def f():\n    from app.service.specs import Spec", id="from-import"),
    pytest.param("app.scan.report", "def f():\n    import app.core.numbers", id="plain-import"),
    pytest.param("app.lint.rules", "def f():\n    from . import report", id="relative-import"),
    pytest.param("app.core.numbers", "async def f():\n    from app import exact", id="async-function"),
])
def test_an_import_inside_a_function_is_caught(module, extra):
    assert function_imports(_with(module, extra)) != []


def test_a_third_party_import_inside_a_function_is_allowed():
    assert function_imports(_with("app.service.translate", "def f():\n    import onnxruntime")) == []


@pytest.mark.parametrize("module,extra,rule", [
    pytest.param("app.core.exact", "from app.dialects import common", "core imports only core", id="core-up"),
    pytest.param("app.kernels.half", "from app.dialects import common", "kernels import only", id="kernels-up"),
    pytest.param("app.service.translate", "from app.scan import report", "the service never", id="service-scan"),
    pytest.param("app.service.capabilities", "from app.lint import rules", "the service never", id="service-lint"),
    pytest.param("app.dialects.tosa", "from app.service.translate import translate_one", "a dialect never", id="dialect-up"),
    pytest.param("app.dialects.kit.common", "from app.lint import rules", "a dialect never", id="dialect-lint"),
    pytest.param("app.scan.report", "from app.api import models", "scan and lint never", id="scan-api"),
    pytest.param("app.lint.report", "import app.cli.main", "scan and lint never", id="lint-cli"),
    pytest.param("app.service.translate", "from app.main import app", "nothing imports them", id="service-main"),
    pytest.param("app.diff.report", "from app.server import serving", "nothing imports them", id="diff-server"),
    pytest.param("app.engines.sandbox", "from app.dialects import tosa", "engine plumbing imports only", id="engines-up"),
])
def test_a_layering_break_is_caught(module, extra, rule):
    assert any(rule in line for line in violations(graph(_with(module, extra))))
