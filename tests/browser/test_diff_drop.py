"""The inspector's diff drop: a model dropped there is run on the engines and its differences shown."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.test_inspector import drop_file, open_model_view
from tests.diff import models as M


def test_drop_a_model_on_the_diff_zone(page, server, output_dir, screenshot):
    data = list(M.relu_chain())
    open_model_view(page, server)
    drop_file(page, "#diff-dropzone", "relu.onnx", data)
    # Issue 44: the verdict is about the outputs on an ordinary sample (equal); the Relu's NaN is the edge
    # probe's, in its own section.
    expect(page.locator(".diff-verdict strong")).to_have_text("equal", timeout=60_000)
    expect(page.locator(".diff-first")).to_have_text("No divergence.")
    edge = page.locator(".diff-edge")
    expect(edge.locator(".edge-verdict strong")).to_have_text("explained")
    expect(edge.locator(".edge-first")).to_have_text("First divergence: relu_1 (Relu)")
    expect(page.locator("#status")).to_contain_text(
        "Diff of relu.onnx: equal (edge probe: explained, first divergence at relu_1)")
    row = edge.locator(".diff-table tbody tr")
    expect(row).to_have_count(1)
    expect(row.locator("td").nth(4)).to_have_text("nan-input")
    expect(row.locator("td").nth(5)).to_contain_text("input nan → onnxruntime nan, openvino 0")
    screenshot(page, "diff")


def test_a_file_that_is_no_model_is_refused_in_place(page, server):
    open_model_view(page, server)
    with page.expect_file_chooser() as chooser:
        page.get_by_label("Or choose a model (and .npz)").click()
    chooser.value.set_files({"name": "notes.txt", "mimeType": "text/plain", "buffer": b"hello"})
    expect(page.locator("#diff-errors")).to_contain_text("Choose an .onnx model")


def test_scan_lists_clip_like_ops(page, server):
    data = list(M.hardsigmoid_chain())
    open_model_view(page, server)
    drop_file(page, "#dropzone", "hsig.onnx", data)
    expect(page.locator(".clip-like li")).to_have_text(
        "hsig_1 hard-sigmoid: NaN → onnxruntime propagate, openvino one, onnx-reference propagate")
