"""The inspector's model view as a finished product (issue 37), at a laptop's 1366x768 and a phone's 390x844:
"Try the example model" fills scan and diff, the diff is drawn as a graph (first divergence and introduced
nodes marked, inherited ones shaded, a click shows cause and witness), every badge is readable (WCAG contrast
of the computed colours), no stray text, the header status follows the view, cause and witness reachable on a
phone without sideways scrolling, and every output says which reading it shows."""

from __future__ import annotations

import copy
import functools
import json
import re
import tomllib
import urllib.request
from pathlib import Path

import httpx

import onnx
import pytest
from onnx import TensorProto, helper
from playwright.sync_api import expect

from tests.browser.test_inspector import MODEL_VIEW, drop_file, open_inspector

ROOT = Path(__file__).resolve().parents[2]
SCREENS = {"laptop-1366x768": (1366, 768), "phone-390x844": (390, 844)}
WCAG_AA = 4.5  # normal text (WCAG 2.1, 1.4.3)

# The contrast of each element's computed text colour against its computed background, composited over the
# ancestors' backgrounds up to the first opaque one (the page's own white at worst); WCAG 2.1 relative luminance.
CONTRAST = """(els) => els.map((el) => {
  const rgba = (c) => { const p = c.match(/[\\d.]+/g).map(Number); return p.length === 3 ? [...p, 1] : p; };
  const layers = [];
  for (let e = el; e; e = e.parentElement) {
    const b = rgba(getComputedStyle(e).backgroundColor);
    layers.push(b);
    if (b[3] >= 1) break;
  }
  let bg = [255, 255, 255];
  for (const b of layers.reverse()) bg = bg.map((c, i) => b[i] * b[3] + c * (1 - b[3]));
  const f = rgba(getComputedStyle(el).color);
  const fg = bg.map((c, i) => f[i] * f[3] + c * (1 - f[3]));
  const lum = (rgb) => {
    const [r, g, b] = rgb.map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
  return { text: el.textContent, ratio: (hi + 0.05) / (lo + 0.05) };
})"""


def contrasts(page, selector: str) -> list[dict]:
    return page.locator(selector).evaluate_all(CONTRAST)


def sized(page, screen: str) -> tuple[int, int]:
    width, height = SCREENS[screen]
    page.set_viewport_size({"width": width, "height": height})
    return width, height


@functools.cache
def served(server: str, route: str) -> dict:
    """The server's own answer for the example model, asked over HTTP as the page asks (the page's query): what
    the page must show, whatever this host's engines answer."""
    query = {"precision": "model"} | ({"reference": "onnxruntime", "target": "openvino"} if "fix" in route else {})
    example = (ROOT / "app" / "clipbridge" / "static" / "example.onnx").read_bytes()
    res = httpx.post(f"{server}/v1/models/{route}", params=query, timeout=120,
                     files={"model": ("example.onnx", example, "application/octet-stream")})
    res.raise_for_status()
    return res.json()


def try_example(page, server: str) -> None:
    open_inspector(page, server)
    page.get_by_role("button", name=MODEL_VIEW, exact=True).click()
    page.get_by_role("button", name="Try the example model").click()
    expect(page.locator(".scan-table")).to_be_visible(timeout=60_000)
    expect(page.locator(".diff-verdict strong")).to_have_text(served(server, "diff")["verdict"], timeout=60_000)


def assert_no_sideways_scroll(page, width: int) -> None:
    scroll_width = page.evaluate("document.documentElement.scrollWidth")
    assert scroll_width <= width, f"the page scrolls sideways at {width}px: {scroll_width}px wide"


def assert_within(page, selector: str, width: int) -> None:
    """Every element `selector` matches lies inside the viewport's width (reachable without scrolling sideways)."""
    boxes = page.locator(selector).evaluate_all(
        "(els) => els.map((e) => { const r = e.getBoundingClientRect(); return [r.left, r.right]; })")
    assert boxes, selector
    out = [b for b in boxes if b[0] < 0 or b[1] > width + 0.5]
    assert not out, f"{selector} outside 0..{width}px: {out}"


def test_contrast_check_tells_unreadable_from_readable(page, server):
    """The check itself: white text on the page's white (the old Cause/Rule badges) fails, on a dark badge passes."""
    open_inspector(page, server)
    page.evaluate("""() => { const s = document.createElement('span'); s.id = 'probe'; s.textContent = 'cause';
      s.style.color = '#fff'; document.querySelector('main').append(s); }""")
    assert contrasts(page, "#probe")[0]["ratio"] < 1.1
    page.evaluate("() => { document.getElementById('probe').style.background = '#24425f'; }")
    assert contrasts(page, "#probe")[0]["ratio"] >= WCAG_AA


@pytest.mark.parametrize("screen", list(SCREENS), ids=list(SCREENS))
def test_example_model_scan_and_diff(page, server, screen, screenshot):
    width, _ = sized(page, screen)
    try_example(page, server)
    view = page.locator("#model-view")
    # No stray text: no literal null or undefined anywhere in the model view.
    assert not re.search(r"\b(null|undefined)\b", view.inner_text()), view.inner_text()
    expect(page.locator(".scan-table tbody tr")).to_have_count(int(
        re.search(r"(\d+) clips?", page.locator(".scan-table caption").inner_text()).group(1)))
    # Issue 44: the example's outputs agree on an ordinary sample, so its differences are the edge probe's; the
    # graph below is the edge section's (the main one is drawn only when the served body has one).
    expect(page.locator("#graph-detail")).to_have_count(1 if served(server, "diff")["graph"] else 0)
    edge = page.locator(".diff-edge")
    expect(edge.locator(".edge-verdict strong")).to_have_text(served(server, "diff")["edge"]["verdict"])
    # Two graphs may share the page: every element id is unique.
    assert page.evaluate("() => { const ids = [...document.querySelectorAll('[id]')].map((e) => e.id);"
                         " return ids.length === new Set(ids).size; }")
    # The graph: the first divergence marked, introduced nodes marked, inherited ones shaded.
    first = re.match(r"First divergence: (\S+)", edge.locator(".edge-first").inner_text()).group(1)
    expect(edge.locator("svg.graph .gnode.first")).to_have_attribute("data-node", first)
    assert edge.locator("svg.graph .origin-introduced").count() >= 1
    inherited = edge.locator("svg.graph .origin-inherited")
    assert inherited.count() >= 1
    for name in edge.locator(".diff-table tbody tr").evaluate_all("(rows) => rows.map((r) => r.dataset.node)"):
        expect(edge.locator(f'svg.graph .gnode-op[data-node="{name}"]')).to_have_count(1)
    # The first divergence is shown at once; a click on an inherited node shows its cause and witness.
    expect(page.locator("#edge-graph-detail h4")).to_contain_text(first)
    inherited.first.click()
    node = inherited.first.get_attribute("data-node")
    detail = page.locator("#edge-graph-detail")
    expect(detail.locator("h4")).to_contain_text(node)
    expect(detail.locator(".detail-cause .badge")).to_be_visible()
    expect(detail.locator(".detail-witness")).to_contain_text("at [")
    expect(detail).to_contain_text("inherited")
    # The table's node names show the same detail.
    page.get_by_role("button", name=f"Show {first} in the graph").click()
    expect(detail.locator("h4")).to_contain_text(first)
    expect(edge.locator(f'svg.graph .gnode-op[data-node="{first}"]')).to_have_class(re.compile("selected"))
    # Keyboard: a node is a focusable button.
    edge.locator(f'svg.graph .gnode-op[data-node="{node}"]').focus()
    page.keyboard.press("Enter")
    expect(detail.locator("h4")).to_contain_text(node)
    # Readable badges everywhere in the view (scan status, cause), at this size.
    low = [c for c in contrasts(page, "#model-view .badge") if c["ratio"] < WCAG_AA]
    assert not low, f"badges under {WCAG_AA}:1 at {screen}: {low}"
    # Cause and witness reachable without scrolling sideways.
    assert_no_sideways_scroll(page, width)
    for selector in (".diff-table td[data-label=Cause] .badge", ".diff-table td[data-label=Witness]",
                     ".scan-table td.notes-cell", "#edge-graph-detail"):
        assert_within(page, selector, width)
    page.evaluate("() => document.activeElement && document.activeElement.blur()")  # no focus ring in the picture
    screenshot(page, f"model-view-{screen}")
    if screen.startswith("laptop"):
        screenshot(page, "inspector-model", docs="inspector-model.png")


@pytest.mark.parametrize("screen", list(SCREENS), ids=list(SCREENS))
def test_fix_after_the_example(page, server, screen, tmp_path):
    width, _ = sized(page, screen)
    try_example(page, server)
    with page.expect_download(timeout=60_000) as dl:
        page.get_by_role("button", name="Fix for openvino").click()
    path = tmp_path / dl.value.suggested_filename
    dl.value.save_as(path)
    assert path.name == "example.fixed-for-openvino.onnx"
    onnx.checker.check_model(onnx.load(str(path)))
    expect(page.locator(".fix-verdict strong")).to_have_text(served(server, "fix")["proof"]["verdict"],
                                                             timeout=60_000)
    expect(page.locator("#fix-out .reading-note")).to_contain_text("observed engines")
    low = [c for c in contrasts(page, "#fix-out .badge") if c["ratio"] < WCAG_AA]
    assert page.locator("#fix-out .badge-rule").count() >= 1 and not low, low
    assert not re.search(r"\b(null|undefined)\b", page.locator("#fix-out").inner_text())
    assert_no_sideways_scroll(page, width)
    assert_within(page, ".fix-rules td[data-label=Why]", width)


@pytest.mark.parametrize("screen", list(SCREENS), ids=list(SCREENS))
def test_scan_badges_are_readable_and_the_status_follows_the_view(page, server, screen):
    width, _ = sized(page, screen)
    open_inspector(page, server)
    status = page.locator("#status")
    expect(status).to_contain_text("Translated")
    low = [c for c in contrasts(page, ".targets .badge") if c["ratio"] < WCAG_AA]
    assert not low, low
    page.get_by_role("button", name=MODEL_VIEW, exact=True).click()
    expect(status).not_to_contain_text("Translated")
    expect(status).to_have_text("Drop a model, or try the example model.")
    page.get_by_role("button", name="Try the example model").click()
    expect(status).to_contain_text(re.compile("Scanned example.onnx|Diff of example.onnx"), timeout=60_000)
    page.get_by_role("button", name="Spec", exact=True).click()
    expect(status).to_contain_text("Translated")
    assert_no_sideways_scroll(page, width)


def long_chain(before: int, after: int) -> bytes:
    """x -> Abs x `before` -> Clip(0, 6) -> Abs x `after` -> y: past the drawing bound, one differing clip."""
    names = [f"t{i}" for i in range(before + after + 2)]
    nodes = [helper.make_node("Abs", [names[i - 1] if i else "x"], [names[i]], name=f"abs_{i}") for i in range(before)]
    nodes.append(helper.make_node("Clip", [names[before - 1], "lo", "hi"], [names[before]], name="clip_mid"))
    nodes += [helper.make_node("Abs", [names[i - 1]], [names[i]], name=f"abs_{i}")
              for i in range(before + 1, before + after + 1)]
    out = names[before + after]
    graph = helper.make_graph(nodes, "long", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
                              [helper.make_tensor_value_info(out, TensorProto.FLOAT, [1, 8])],
                              [helper.make_tensor("lo", TensorProto.FLOAT, [], [0.0]),
                               helper.make_tensor("hi", TensorProto.FLOAT, [], [6.0])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model.SerializeToString()


def test_a_large_model_shows_the_neighbourhood_of_the_difference(page, server):
    open_inspector(page, server)
    page.get_by_role("button", name=MODEL_VIEW, exact=True).click()
    drop_file(page, "#diff-dropzone", "long.onnx", list(long_chain(150, 150)))
    # Issue 44: the clip differs on the edge probe's NaN, not on the ordinary sample: its graph is the edge
    # section's.
    edge = page.locator(".diff-edge")
    expect(edge.locator(".graph-legend .hint")).to_contain_text("the model is large", timeout=60_000)
    expect(edge.locator(".graph-legend .hint")).to_contain_text("of 301 nodes")
    expect(edge.locator('svg.graph .gnode.first')).to_have_attribute("data-node", "clip_mid")
    assert edge.locator("svg.graph .gnode-op").count() < 20
    assert edge.locator("svg.graph .gnode-stub").count() == 2  # cut above and below
    expect(page.locator("#edge-graph-detail .detail-cause .badge")).to_have_text("nan-input")


def test_a_missing_engine_names_the_install_command(page, server):
    """The core install: the server answers that an engine is missing; the page gives the [diff] extra's command
    instead of blaming the model."""
    page.route("**/v1/models/diff*", lambda route: route.fulfill(status=422, content_type="application/problem+json",
               body='{"type": "about:blank", "title": "Backend unavailable", "status": 422, "detail": '
                    '"diff needs onnxruntime, which is not installed here: pip install -e \\".[diff]\\" (engine)"}'))
    open_inspector(page, server)
    page.get_by_role("button", name=MODEL_VIEW, exact=True).click()
    page.get_by_role("button", name="Try the example model").click()
    hint = page.locator("#diff-errors .install-hint")
    expect(hint).to_contain_text('pip install -e ".[diff]"')
    expect(page.locator("#diff-errors")).not_to_contain_text("cannot load the model")
    expect(page.locator(".scan-table")).to_be_visible(timeout=60_000)  # the scan needs no engine


def canned_diff(page, body: dict) -> None:
    """The page's diff request answered with `body` (a served body changed to the case under test)."""
    page.route("**/v1/models/diff*", lambda route: route.fulfill(status=200, content_type="application/json",
                                                                 body=json.dumps(body)))


@pytest.mark.parametrize("screen", list(SCREENS), ids=list(SCREENS))
def test_a_masked_difference_is_shown_as_masked(page, server, screen, screenshot):
    """Issue 44: a difference inside the model that reaches no output is listed under "Masked inside the model",
    with its summary and node table, beside an `equal` verdict and never in a failure's red."""
    width, _ = sized(page, screen)
    body = copy.deepcopy(served(server, "diff"))
    hidden = copy.deepcopy(body["edge"]["nodes"][:2])
    hidden[-1]["cause"] = None  # an unexplained masked node is still no failure
    body |= {"verdict": "equal", "first_divergence": None, "nodes": [], "graph": None, "fails": False,
             "masked": {"nodes": hidden, "summary": f"{len(hidden)} node(s) differ inside the model without "
                        "reaching a differing output"}}
    canned_diff(page, body)
    try_example(page, server)
    masked = page.locator(".diff-masked")
    expect(masked.locator("h3")).to_have_text("Masked inside the model")
    expect(masked.locator(".masked-summary")).to_have_text(body["masked"]["summary"])
    expect(masked.locator(".diff-table tbody tr")).to_have_count(len(hidden))
    expect(masked.locator("td[data-label=Cause] .badge").last).to_have_text("unexplained")
    expect(masked.locator(".badge-bad")).to_have_count(0)
    expect(page.get_by_role("button", name="Fix for openvino")).to_be_visible()  # masked clips can be fixed too
    low = [c for c in contrasts(page, ".diff-masked .badge") if c["ratio"] < WCAG_AA]
    assert not low, f"masked badges under {WCAG_AA}:1 at {screen}: {low}"
    assert_no_sideways_scroll(page, width)
    for selector in (".diff-masked td[data-label=Cause] .badge", ".diff-masked td[data-label=Witness]"):
        assert_within(page, selector, width)
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    screenshot(page, f"model-view-masked-{screen}")


def test_an_edge_probe_error_names_its_message(page, server):
    """The edge probe's own error is shown in its section; the verdict about the outputs stands, and with nothing
    differing anywhere there is no fix to offer."""
    body = copy.deepcopy(served(server, "diff"))
    body |= {"verdict": "equal", "first_divergence": None, "nodes": [], "graph": None,
             "masked": {"nodes": [], "summary": None},
             "edge": {"verdict": "error", "error": {"message": "openvino cannot Cast NaN to int64", "loc": "engine"},
                      "inputs": None, "method": None, "outputs": [], "first_divergence": None, "nodes": [],
                      "masked": {"nodes": [], "summary": None}, "layout": [], "graph": None}}
    canned_diff(page, body)
    try_example(page, server)
    edge = page.locator(".diff-edge")
    expect(edge.locator(".edge-verdict strong")).to_have_text("error")
    expect(edge.locator(".edge-error")).to_contain_text("openvino cannot Cast NaN to int64")
    expect(page.locator(".diff-masked")).to_have_count(0)
    expect(page.locator("#fix-bar")).to_be_hidden()


def test_every_engine_output_names_its_reading(page, server):
    """Cards, plot and run witness read the specification unless the API names another reading; the diff reads
    the observed engines."""
    open_inspector(page, server)
    for item in page.locator(".targets .finding").all():
        expect(item.locator(".reading-tag")).to_have_text(re.compile(r"^(specification|observed engine)"))
    expect(page.locator(".targets .target .meaning").first).to_contain_text("Specification:")
    legend = page.locator("#plot-legend li")
    expect(legend.first).to_contain_text("[")
    for text in legend.all_inner_texts():
        assert re.search(r"\[(specification|observed engine)", text), text
    run = page.locator(".run-witness").first
    if run.count():
        run.click()
        expect(page.locator(".witness-result").first).to_contain_text(re.compile(r"\[(specification|observed)"))


def test_the_bundled_example_is_the_docs_example_and_package_data():
    """app/clipbridge/static/example.onnx is docs/example.onnx (copy it again when that changes) and ships in the wheel."""
    bundled = ROOT / "app" / "clipbridge" / "static" / "example.onnx"
    assert bundled.read_bytes() == (ROOT / "docs" / "example.onnx").read_bytes()
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["clipbridge.static"]
    assert "*.onnx" in patterns and "*.js" in patterns and "*.LICENSE" in patterns


def test_the_vendored_layout_library_carries_its_license():
    static = ROOT / "app" / "clipbridge" / "static"
    assert "Permission is hereby granted" in (static / "dagre.LICENSE").read_text()
    assert "For license information please see dagre.esm.js.LEGAL.txt" in (static / "dagre.js").read_text()


def test_the_example_model_is_served_as_bytes(server):
    with urllib.request.urlopen(server + "/static/example.onnx") as r:
        assert r.headers["Content-Type"] == "application/octet-stream"
        assert r.headers["X-Content-Type-Options"] == "nosniff"
        assert r.read() == (ROOT / "docs" / "example.onnx").read_bytes()
