"""The inspector's ES modules (app/clipbridge/static/*.js) keep the project's module rule (docs/development.md): each
under 300 lines, each opening with a header comment that says what lives there and who may import it, and that
header naming every module that does import it. Read from the source text; no browser, no server."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

STATIC = Path(__file__).resolve().parents[1] / "app" / "clipbridge" / "static"
MAX_LINES = 300
# Vendored unchanged (docs/inspector.md): the @dagrejs/dagre ESM bundle, minified, kept byte-for-byte.
VENDORED = {"dagre.js"}
# Loaded by a page, imported by no module: the inspector's entry (index.html) and Swagger UI's starter (docs.html).
ENTRIES = {"main.js", "docs.js"}
IMPORT = re.compile(r"^import\b[^;]*?\bfrom '\./([^']+)';", re.M | re.S)
WHO = re.compile(r"\b(Imported by|Loaded by)\b")
ANY = "Imported by any module"


def modules() -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(STATIC.glob("*.js")) if p.name not in VENDORED}


def header(text: str) -> str:
    """The leading block of // comment lines (empty when the file does not open with one)."""
    lines = []
    for line in text.splitlines():
        if not line.startswith("//"):
            break
        lines.append(line)
    return "\n".join(lines)


def importers(mods: dict[str, str]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for name, text in mods.items():
        for target in IMPORT.findall(text):
            found.setdefault(target, set()).add(name)
    return found


def problems(mods: dict[str, str], vendored: set[str] = VENDORED, entries: set[str] = ENTRIES) -> list[str]:
    """Every break of the rule in mods ({file name: text}), one line each."""
    out = []
    who = importers(mods)
    for name, text in mods.items():
        n = len(text.splitlines())
        if n >= MAX_LINES:
            out.append(f"{name}: {n} lines (the rule: under {MAX_LINES}; split it along a seam)")
        head = header(text)
        if not head:
            out.append(f"{name}: no header comment (say what lives there and who may import it)")
        elif not WHO.search(head):
            out.append(f"{name}: its header does not say who may import it ('Imported by ...' or 'Loaded by ...')")
        elif ANY not in head:
            out += [f"{name}: imported by {user}, which its header does not name" for user in sorted(who.get(name, ()))
                    if user not in head]
        if name not in entries and not who.get(name):
            out.append(f"{name}: no module imports it")
        out += [f"{name}: imports ./{target}, which is not in static/" for target in IMPORT.findall(text)
                if target not in mods and target not in vendored]
    return out


def test_the_scan_sees_the_modules():
    mods = modules()
    assert {"main.js", "editor.js", "api.js", "dom.js"} <= set(mods)
    assert importers(mods)["editor.js"]  # the import pattern matches the modules' own imports


def test_every_module_keeps_the_rule():
    assert problems(modules()) == []


def test_index_html_loads_the_entry_module():
    assert '<script type="module" src="/static/main.js"></script>' in (STATIC / "index.html").read_text()


GOOD = {
    "main.js": "// The entry. Loaded by index.html.\n\nimport { a } from './a.js';\n",
    "a.js": "// A helper. Imported by main.js only.\n\nexport const a = 1;\n",
}


def test_a_good_layout_passes():
    assert problems(GOOD, set(), {"main.js"}) == []


@pytest.mark.parametrize(("change", "expected"), [
    ({"a.js": "// A helper. Imported by main.js only.\n" + "x;\n" * 299}, "a.js: 300 lines"),
    ({"a.js": "export const a = 1;\n"}, "a.js: no header comment"),
    ({"a.js": "// A helper.\nexport const a = 1;\n"}, "a.js: its header does not say who may import it"),
    ({"b.js": "// B. Loaded by nobody.\nimport { a } from './a.js';\n"}, "a.js: imported by b.js, which its header"),
    ({"b.js": "// B. Imported by main.js.\n"}, "b.js: no module imports it"),
    ({"main.js": "// The entry. Loaded by index.html.\nimport { c } from './c.js';\n"}, "main.js: imports ./c.js"),
])
def test_a_break_is_caught(change, expected):
    found = problems({**GOOD, **change}, set(), {"main.js"})
    assert any(p.startswith(expected) for p in found), found
