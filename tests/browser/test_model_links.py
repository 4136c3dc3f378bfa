"""Issue 47: each model view (scan, diff, fix, chain) has a URL that restores it, at a laptop's 1366x768 and a
phone's 390x844. The URL carries the view, the card last used and the cards' options, never the model: a link asks
for the model again, or with `example=1` runs the bundled example model again (docs/inspector.md)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.test_inspector import drop_file, open_model_view
from tests.diff import models as M

SCREENS = {"laptop-1366x768": (1366, 768), "phone-390x844": (390, 844)}


def sized(page, screen: str) -> None:
    width, height = SCREENS[screen]
    page.set_viewport_size({"width": width, "height": height})


@pytest.mark.parametrize("screen", list(SCREENS))
@pytest.mark.parametrize(("section", "card"), [
    pytest.param("scan", "#scan", id="scan"),
    pytest.param("diff", "#diff", id="diff"),
    pytest.param("fix", "#diff", id="fix-is-the-diff-card"),
    pytest.param("chain", "#chain", id="chain"),
])
def test_a_model_view_link_restores_the_view_and_its_options(page, server, screen, section, card) -> None:
    sized(page, screen)
    page.goto(f"{server}/#view=model&section={section}&precision=deployed&chain=torch,onnx&static=1")
    expect(page.locator("#model-view")).to_be_visible()
    expect(page.locator("#spec-view")).to_be_hidden()
    expect(page.locator("#diff-precision")).to_have_value("deployed")
    expect(page.locator("#chain-stages")).to_have_value("torch,onnx")
    expect(page.locator("#chain-static")).to_be_checked()
    expect(page.locator("#status")).to_contain_text("drop the model again")
    expect(page.locator(card)).to_be_in_viewport()


@pytest.mark.parametrize("screen", list(SCREENS))
def test_the_url_follows_the_model_view_and_a_fresh_page_restores_it(page, new_page, server, screen) -> None:
    sized(page, screen)
    open_model_view(page, server)
    expect(page).to_have_url(re.compile(r"#view=model"))
    page.locator("#diff-precision").select_option("deployed")
    expect(page).to_have_url(re.compile(r"section=diff.*precision=deployed"))
    fresh = new_page(server)
    sized(fresh, screen)
    fresh.goto(page.url)
    expect(fresh.locator("#model-view")).to_be_visible()
    expect(fresh.locator("#diff-precision")).to_have_value("deployed")
    page.locator("#view-spec").click()
    expect(page).to_have_url(re.compile(r"#spec="))


def test_an_example_link_runs_the_example_again(page, server) -> None:
    page.goto(f"{server}/#view=model&section=diff&example=1")
    expect(page.locator(".diff-verdict strong")).to_have_text(re.compile(r"\w+"), timeout=90_000)
    expect(page.locator("#scan-out")).to_contain_text("example.onnx")


def test_a_dropped_model_is_not_claimed_by_the_link(page, server) -> None:
    open_model_view(page, server)
    drop_file(page, "#diff-dropzone", "relu.onnx", list(M.relu_chain()))
    expect(page.locator(".diff-verdict strong")).to_have_text("equal", timeout=60_000)
    assert "example=1" not in page.url and "section=diff" in page.url
