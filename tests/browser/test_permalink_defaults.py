"""Issue 47: a permalink that leaves a field out shows, and then names, what the API assumes for it. An OpenVINO
spec without `version` used to show an empty Version select; it shows the schema's default (opset1), and the link
is rewritten with it, at a laptop's 1366x768 and a phone's 390x844."""

from __future__ import annotations

import json
import re
import urllib.parse

import pytest
from playwright.sync_api import expect

SCREENS = {"laptop-1366x768": (1366, 768), "phone-390x844": (390, 844)}


@pytest.mark.parametrize("screen", list(SCREENS))
def test_a_permalink_without_openvino_version_shows_the_default(page, server, screen: str) -> None:
    width, height = SCREENS[screen]
    page.set_viewport_size({"width": width, "height": height})
    spec = {"dialect": "openvino", "element_type": "f32", "min": 0, "max": 6}
    page.goto(f"{server}/#{urllib.parse.urlencode({'spec': json.dumps(spec)})}")
    expect(page.get_by_label("Version", exact=True)).to_have_value("opset1")
    expect(page).to_have_url(re.compile(r"%22version%22%3A%22opset1%22"))
    expect(page.locator("#meaning")).to_contain_text("clip to [0.0, 6.0]")
