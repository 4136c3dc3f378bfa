"""Issue 47: the inspector shows each error once. The server's problem+json states one error twice, as its
`detail` ("msg (loc)") and as its field error ({loc, msg}); the page lists it once, at a laptop's 1366x768 and a
phone's 390x844, on the scan and the diff drop zones."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.test_inspector import drop_file, open_model_view

SCREENS = {"laptop-1366x768": (1366, 768), "phone-390x844": (390, 844)}
ZONES = {"scan": ("#dropzone", "#scan-errors"), "diff": ("#diff-dropzone", "#diff-errors")}
MESSAGE = "the model is not ONNX protobuf"


@pytest.mark.parametrize("screen", list(SCREENS))
@pytest.mark.parametrize("view", list(ZONES))
def test_an_error_is_shown_once(page, server, screen: str, view: str) -> None:
    width, height = SCREENS[screen]
    page.set_viewport_size({"width": width, "height": height})
    open_model_view(page, server)
    zone, errors = ZONES[view]
    drop_file(page, zone, "broken.onnx", list(b"\x0f garbage that is no protobuf"))
    box = page.locator(errors)
    expect(box).to_contain_text(MESSAGE, timeout=60_000)
    assert box.inner_text().count(MESSAGE) == 1, box.inner_text()
    expect(box.locator("li")).to_have_count(1)
