"""/docs (Swagger UI) in a real browser, offline: every asset from the server, no CSP violation."""

from __future__ import annotations

import re
import urllib.error
import urllib.request

import pytest
from playwright.sync_api import expect

from tests.browser.test_inspector import CSP


def test_docs_page_has_no_inline_code_and_loads_nothing_from_elsewhere(server):
    with urllib.request.urlopen(server + "/docs") as r:
        assert r.headers["Content-Security-Policy"] == CSP  # exactly the inspector's
        assert r.headers["X-Content-Type-Options"] == "nosniff"
        html = r.read().decode()
    assert "style=" not in html and "<style" not in html
    assert re.findall(r"<script\b[^>]*>", html) == ['<script src="docs-assets/swagger-ui-bundle.js">',
                                                   '<script src="static/docs.js">']
    assert not re.findall(r"https?://", html)
    for gone in ("/redoc", "/docs/oauth2-redirect", "/docs-assets/redoc.standalone.js", "/docs-assets/..%2Fcore.py"):
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(server + gone)
        assert info.value.code == 404, gone


def test_swagger_ui_renders_offline_and_runs_an_operation(page, server):
    page.goto(server + "/docs")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("clipbridge")
    op = page.locator("#operations-translate-translate_v1_translate_post")
    expect(op).to_be_visible()
    op.locator(".opblock-summary").click()
    op.get_by_role("button", name="Try it out").click()
    op.locator("textarea.body-param__text").fill(
        '{"source": {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "min": 0, "max": 6},'
        ' "targets": ["openvino"]}')
    op.get_by_role("button", name="Execute").click()
    expect(op.locator(".live-responses-table tbody td.response-col_status").first).to_contain_text("200")
    expect(op.locator(".live-responses-table")).to_contain_text('"status": "exact"')
