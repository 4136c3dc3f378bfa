"""The inspector's first screen is the work: without scrolling, at a laptop's 1366x768 and a phone's 390x844,
the source dialect, the spec editor, the examples menu, the view switch, the target choice and the first
translation panel are inside the viewport, and no two of them overlap (issue 27)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.test_inspector import MODEL_VIEW

ROOT = Path(__file__).resolve().parents[2]

# What must be on the first screen: a name for the failure message -> a CSS selector.
ELEMENTS = {
    "view switch": ".views",
    "source dialect": "#dialect",
    "examples menu": "#examples",
    "spec editor": "#spec-form",
    "translate to": "#targets-to",
    "first translation panel head": "#targets > .card:first-child .target-head",
    "first translation panel badge": "#targets > .card:first-child .badge-slot .badge",
}
SCREENS = {"laptop-1366x768": (1366, 768), "phone-390x844": (390, 844)}


def boxes(page) -> dict[str, dict[str, float]]:
    out = {}
    for name, selector in ELEMENTS.items():
        box = page.locator(selector).bounding_box()
        assert box is not None, f"{name} ({selector}) is not rendered"
        out[name] = box
    return out


def outside(box: dict[str, float], width: int, height: int) -> bool:
    return box["x"] < 0 or box["y"] < 0 or box["x"] + box["width"] > width or box["y"] + box["height"] > height


def overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return (a["x"] < b["x"] + b["width"] and b["x"] < a["x"] + a["width"]
            and a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"])


def test_overlap_and_outside_read_boxes_as_rectangles():
    a = {"x": 0, "y": 0, "width": 10, "height": 10}
    assert overlap(a, {"x": 5, "y": 5, "width": 10, "height": 10})
    assert not overlap(a, {"x": 10, "y": 0, "width": 5, "height": 5})  # touching edges do not overlap
    assert outside({"x": 0, "y": 760, "width": 10, "height": 10}, 1366, 768)
    assert not outside(a, 1366, 768)


@pytest.mark.parametrize("screen", list(SCREENS), ids=list(SCREENS))
def test_first_screen_shows_the_work_without_scrolling(browser, server, output_dir, screen):
    from tests.browser.conftest import PageProblems

    width, height = SCREENS[screen]
    context = browser.new_context(viewport={"width": width, "height": height})
    problems = PageProblems(server)
    context.route("**/*", problems.route)
    page = context.new_page()
    page.on("console", problems.console)
    page.set_default_timeout(15000)
    try:
        page.goto(server + "/")
        expect(page.locator("#targets > .card:first-child .badge-slot .badge")).to_be_visible()
        expect(page.locator("#spec-form input, #spec-form select").first).to_be_visible()
        assert page.evaluate("window.scrollY") == 0
        shot = output_dir / f"first-screen-{screen}.png"
        page.screenshot(path=str(shot))  # the viewport only: what a user sees first
        found = boxes(page)
        out = [f"{n} {b}" for n, b in found.items() if outside(b, width, height)]
        assert not out, f"outside the {width}x{height} viewport: {out}"
        names = list(found)
        # The panel's head holds its badge: that pair is nested, not an overlap.
        crossing = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]
                    if overlap(found[a], found[b]) and {a, b} != {"first translation panel head",
                                                              "first translation panel badge"}]
        assert not crossing, f"overlapping at {width}x{height}: {crossing}"
        scroll_width = page.evaluate("document.documentElement.scrollWidth")
        assert scroll_width <= width, f"the page scrolls sideways at {width}px: {scroll_width}px wide"
        # The model view is one click away, and its drop zone is on that first screen too; the diff's drop
        # zone follows it in the same view.
        page.get_by_role("button", name=MODEL_VIEW, exact=True).click()
        expect(page.locator("#source")).to_be_hidden()
        zone = page.locator("#dropzone").bounding_box()
        assert zone is not None and not outside(zone, width, height), zone
        page.locator("#diff-dropzone").scroll_into_view_if_needed()
        expect(page.locator("#diff-dropzone")).to_be_in_viewport()
        page.evaluate("window.scrollTo(0, 0)")
        page.screenshot(path=str(output_dir / f"first-screen-{screen}-model.png"))
        page.get_by_role("button", name="Spec", exact=True).click()
        expect(page.locator("#dialect")).to_be_visible()
        docs = ROOT / "docs" / "inspector.png"  # the README's picture, refreshed on request (as conftest's)
        if screen.startswith("laptop") and (os.environ.get("CLIPBRIDGE_UPDATE_SCREENSHOT") == "1" or not docs.exists()):
            shutil.copyfile(shot, docs)
    finally:
        context.close()
    assert not problems.external and not problems.errors, (problems.external, problems.errors)
