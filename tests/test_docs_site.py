"""The documentation site: `mkdocs build --strict` builds every docs/ page offline (and the pages load nothing from
elsewhere), every internal link of the README and of the pages resolves (the file, and the heading an anchor
names), and the README stays a front page."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """The anchor Python-Markdown's toc (MkDocs) and GitHub give a heading, for the headings these pages use."""
    text = re.sub(r"[`*]", "", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return re.sub(r" +", "-", text)


def anchors(path: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", path.read_text(), flags=re.S | re.M)  # no headings inside code
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6} (.+?)\s*$", text, flags=re.M)}


def links(path: Path) -> list[tuple[int, str]]:
    text = path.read_text()
    out = []
    for m in LINK.finditer(re.sub(r"^```.*?^```", lambda b: "\n" * b.group(0).count("\n"), text, flags=re.S | re.M)):
        out.append((text.count("\n", 0, m.start()) + 1, m.group(1) or m.group(2)))
    return out


def broken(path: Path) -> list[str]:
    """Every relative link of a page that names no file, or a heading that is not there."""
    out = []
    for line, target in links(path):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        dest = path if not file else (path.parent / file).resolve()
        if not dest.exists():
            out.append(f"{path.relative_to(ROOT)}:{line}: {target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            out.append(f"{path.relative_to(ROOT)}:{line}: {target} (no heading #{anchor})")
    return out


def test_slug_reads_headings_as_mkdocs_and_github_do():
    assert slug("Execute and compare") == "execute-and-compare"
    assert slug("StableHLO `clamp`") == "stablehlo-clamp"
    assert slug("Per-dialect semantics (what it implements)") == "per-dialect-semantics-what-it-implements"


def test_the_link_check_finds_a_broken_link_and_a_missing_anchor(tmp_path, monkeypatch):
    page = tmp_path / "page.md"
    (tmp_path / "other.md").write_text("# Other\n\n## Here\n")
    page.write_text("[a](other.md#here) [b](other.md#gone) [c](missing.md) [d](https://example.org/x)\n"
                    "```\n[e](inside-code.md)\n```\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert broken(page) == ["page.md:1: other.md#gone (no heading #gone)", "page.md:1: missing.md (no such file)"]


@pytest.mark.parametrize("path", [README, *sorted(DOCS.glob("*.md"))], ids=lambda p: p.name)
def test_every_internal_link_resolves(path):
    assert not broken(path)


def test_readme_is_a_front_page():
    text = README.read_text()
    assert len(text.splitlines()) <= 300
    for dialect in ("ONNX", "OpenVINO", "DirectML", "StableHLO", "WebNN", "TOSA", "TensorFlow Lite", "TensorRT",
                    "Core ML", "PyTorch"):
        assert dialect in text.split("## ")[0], f"the README's first section does not name {dialect}"
    assert "docs/diff.md" in text


def test_every_readme_link_to_docs_is_in_the_site_nav():
    nav = (ROOT / "mkdocs.yml").read_text()
    for _, target in links(README):
        if target.startswith("docs/") and target.split("#")[0].endswith(".md"):
            assert target.split("#")[0].removeprefix("docs/") in nav, target


def test_mkdocs_builds_every_page_offline_and_strict(tmp_path):
    site = tmp_path / "site"
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    for page in DOCS.glob("*.md"):
        built = site / ("index.html" if page.stem == "index" else f"{page.stem}/index.html")
        assert built.is_file(), f"{page.name} was not built"
    assert "WARNING" not in r.stderr, r.stderr[-3000:]
    for html in site.rglob("*.html"):  # the site reads offline: no script or stylesheet from elsewhere
        text = html.read_text()
        assert not re.search(r'<script[^>]+src="https?:|<link[^>]+rel="stylesheet"[^>]+href="https?:', text), html


@pytest.mark.parametrize("script", ["example_model.py", "relu6_model.py"])
def test_each_example_model_is_what_its_script_builds(script):
    """The models the README's examples read (docs/example.onnx, docs/relu6.onnx) are their scripts' output, byte
    for byte: a changed script must come with its regenerated model."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(f"docs_{script[:-3]}", DOCS / script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    target = DOCS / script.replace("_model.py", ".onnx")
    assert module.build().SerializeToString() == target.read_bytes(), f"python docs/{script} regenerates {target.name}"
