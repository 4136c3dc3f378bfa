"""The inspector's "Fix for openvino" button after a diff: it downloads the written model and shows the proof."""

from __future__ import annotations

import onnx
from playwright.sync_api import expect

from tests.browser.test_inspector import drop_file, open_model_view
from tests.diff import models as M


def test_fix_after_a_diff_downloads_the_model_and_shows_the_proof(page, server, tmp_path):
    data = list(M.relu_chain())
    open_model_view(page, server)
    expect(page.locator("#fix-bar")).to_be_hidden()
    drop_file(page, "#diff-dropzone", "relu.onnx", data)
    # Issue 44: equal on the ordinary sample; the clip difference to fix is the edge probe's.
    expect(page.locator(".diff-verdict strong")).to_have_text("equal", timeout=60_000)
    expect(page.locator(".diff-edge .edge-verdict strong")).to_have_text("explained")
    button = page.get_by_role("button", name="Fix for openvino")
    expect(button).to_be_visible()
    with page.expect_download(timeout=60_000) as dl:
        button.click()
    path = tmp_path / dl.value.suggested_filename
    dl.value.save_as(path)
    assert path.name == "relu.fixed-for-openvino.onnx"
    onnx.checker.check_model(onnx.load(str(path)), full_check=True)
    expect(page.locator(".fix-verdict strong")).to_have_text("equal", timeout=60_000)
    expect(page.locator(".fix-rules tbody tr").first).to_contain_text("nan-guard")
