"""The model view's "Follow across converters" panel (issue 36, app/clipbridge/static/chain.js), at a laptop's 1366x768 and a
phone's 390x844: an ONNX model with a Clip whose min is omitted goes to /v1/models/chain with the chain
`onnx,openvino` (an ONNX source: no torch conversion, seconds), the table shows the chain as columns with the Clip's
row and the openvino column, a click on a cell shows its witness, badges are readable, nothing scrolls sideways
and no null/undefined is printed. Mocked answers cover what this host cannot produce quickly: a 422 problem, and
failed, not-installed and static hops of a .pt2 chain."""

from __future__ import annotations

import json
import re
from urllib.parse import parse_qs, urlparse

import pytest
from onnx import TensorProto, helper
from playwright.sync_api import expect

from tests.browser.test_inspector import drop_file, open_model_view
from tests.browser.test_model_view import SCREENS, WCAG_AA, assert_no_sideways_scroll, assert_within, contrasts, sized

CLIP = "clipped"  # the Clip's output tensor: how the chain names an ONNX source op (OpenVINO keeps tensor names)


def clip_without_min() -> bytes:
    """x -> Clip(x, '', 6) -> clipped -> Abs -> y: an omitted min (lowest() in ONNX) feeding one more op."""
    nodes = [helper.make_node("Clip", ["x", "", "hi"], [CLIP], name="clip_max6"),
             helper.make_node("Abs", [CLIP], ["y"], name="abs")]
    x, y = (helper.make_tensor_value_info(name, TensorProto.FLOAT, [2, 8]) for name in ("x", "y"))
    graph = helper.make_graph(nodes, "clip_without_min", [x], [y],
                              [helper.make_tensor("hi", TensorProto.FLOAT, [], [6.0])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model.SerializeToString()


def no_stray_text(page) -> None:
    text = page.locator("#chain").inner_text()
    assert not re.search(r"\b(null|undefined)\b|\[object ", text), text


@pytest.mark.parametrize("screen", list(SCREENS), ids=list(SCREENS))
def test_an_onnx_model_followed_to_openvino(page, server, screen, screenshot):
    width, _ = sized(page, screen)
    open_model_view(page, server)
    expect(page.locator("#chain-stages")).to_have_value("torch,onnx,openvino")
    drop_file(page, "#chain-dropzone", "clip_without_min.onnx", list(clip_without_min()))
    expect(page.locator("#chain-stages")).to_have_value("onnx,openvino")  # an ONNX model starts at onnx
    expect(page.locator(".chain-verdict strong")).to_have_text(re.compile("^(equal|explained|unexplained)$"),
                                                               timeout=60_000)
    table = page.locator(".chain-table")
    expect(table.locator(f'tr.chain-row[data-node="{CLIP}"]')).to_have_count(1)
    expect(table.locator("tr.chain-row")).to_have_count(1)  # the Abs is no clip-like op: only the Clip
    row = table.locator(f'tr.chain-row[data-node="{CLIP}"]')
    expect(row.locator("td").first).to_contain_text(f"{CLIP} [clamp]")
    cell = row.locator('td[data-hop="openvino"]')
    expect(cell.locator(".chain-became")).to_have_text(re.compile(r"\S"))  # what OpenVINO made of the Clip
    expect(cell).to_contain_text(re.compile(r"=|\d+/\d+"))  # equal, or how many elements differ
    if screen.startswith("laptop"):
        expect(table.locator('thead th[data-hop="openvino"]')).to_contain_text("openvino")
        expect(table.locator('thead th[data-hop="openvino"] .badge')).to_be_visible()
    else:  # a card per row, each cell named by its hop and verdict
        expect(cell).to_have_attribute("data-label", re.compile(r"^openvino \("))
    # A click on the cell shows its witness (or says why there is none).
    cell.locator("button.chain-cell").click()
    detail = page.locator("#chain-detail")
    expect(detail.locator("h4")).to_contain_text(f"{CLIP} on openvino")
    if cell.locator(".badge").count():
        expect(detail.locator(".detail-witness")).to_contain_text("at [")
        expect(detail.locator(".detail-cause .badge")).to_be_visible()
    expect(page.locator("#status")).to_contain_text("Chain of clip_without_min.onnx")
    no_stray_text(page)
    low = [c for c in contrasts(page, "#chain .badge, #chain .mark") if c["ratio"] < WCAG_AA]
    assert not low, f"chain badges under {WCAG_AA}:1 at {screen}: {low}"
    assert_no_sideways_scroll(page, width)
    assert_within(page, f'.chain-table tr.chain-row td[data-hop="openvino"]', width)
    assert_within(page, "#chain-detail", width)
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    screenshot(page, f"chain-view-{screen}")


def test_a_problem_is_shown_with_its_message(page, server):
    problem = {"type": "about:blank", "title": "Unprocessable", "status": 422,
               "detail": "stage 'coreml': coremltools is not installed: pip install -e \".[chain]\"; or leave "
                         "'coreml' out of the chain (query.chain)",
               "errors": [{"loc": "query.chain", "msg": "stage 'coreml': coremltools is not installed"}]}
    page.route("**/v1/models/chain*", lambda route: route.fulfill(
        status=422, content_type="application/problem+json", body=json.dumps(problem)))
    open_model_view(page, server)
    drop_file(page, "#chain-dropzone", "model.pt2", [0x50, 0x4B, 3, 4])
    errors = page.locator("#chain-errors")
    # the status and title, then the field error with its place: the message once (issue 47), not also as the detail
    expect(errors.locator("li")).to_have_text(["422 Unprocessable",
                                               "query.chain: stage 'coreml': coremltools is not installed"])
    expect(errors.locator(".install-hint code")).to_have_text('pip install -e ".[chain]"')
    expect(page.locator("#chain-out")).to_be_empty()
    expect(page.locator("#status")).to_contain_text("Chain of model.pt2 failed")
    no_stray_text(page)


def static_pt2_body() -> dict:
    """A .pt2 chain's body as the API writes it, with a static hop, a failed hop and a not-installed hop."""
    clip = {"node": "clamp_4", "op": "clamp", "lo": None, "hi": 6.0, "module": "", "stack_trace": ""}
    engine = {"name": "onnxruntime", "version": "1.32.0", "precision": "f32", "delegate": "CPU"}

    def hop(to: str, status: str, error: str | None, lowering: list, predicted: list) -> dict:
        return {"from": "torch", "to": to, "status": status, "error": error, "converter": None, "engine": engine,
                "lowering": lowering, "predicted": predicted}

    became = [{"node": "clamp_4", "op": "clamp", "became": "Clip(x, '', 6.0)", "pairing": "ONNX node names",
               "findings": [{"rule": "omitted-bound-lowest", "input": "-inf", "source": "-inf", "became": "-FLT_MAX"}]}]
    failed = hop("coreml", "failed", "convert: AssertionError: dtypes differ", [],
                 [{"node": "clamp_4", "rule": "int-literal-refused"}])
    failed["cause"] = {"rule": "int-literal-refused", "nodes": ["clamp_4"]}
    return {"verdict": None, "static": True, "chain": ["torch", "onnx", "tflite", "coreml"], "source": "torch",
            "inputs": {"source": "generated", "seed": 20240, "tensors": []}, "clips": [clip],
            "stages": [], "rules": {"omitted-bound-lowest": "ONNX Clip-11+: an omitted bound is lowest()/max()"},
            "hops": [hop("onnx", "ok", None, became, [{"node": "clamp_4", "rule": "omitted-bound-lowest"}]),
                     hop("tflite", "not-installed", "the converter environment is not built: clipbridge chain-env "
                         "build", [], []), failed]}


@pytest.mark.parametrize("screen", list(SCREENS), ids=list(SCREENS))
def test_static_failed_and_missing_hops(page, server, screen):
    width, _ = sized(page, screen)
    asked = []

    def answer(route):
        asked.append(route.request.url)
        route.fulfill(status=200, content_type="application/json", body=json.dumps(static_pt2_body()))
    page.route("**/v1/models/chain*", answer)
    open_model_view(page, server)
    page.locator("#chain-static").check()
    drop_file(page, "#chain-dropzone", "model.pt2", [0x50, 0x4B, 3, 4])
    expect(page.locator(".chain-verdict strong")).to_have_text("static")
    query = parse_qs(urlparse(asked[0]).query)
    assert query == {"chain": ["torch,onnx,openvino"], "static": ["true"]}, query
    row = page.locator('tr.chain-row[data-node="clamp_4"]')
    expect(row.locator('td[data-hop="onnx"]')).to_have_attribute("data-label", "onnx (converted)")  # not compared
    expect(page.locator(".chain-summary")).to_have_count(0)  # nothing ran: no outputs, no divergence
    expect(row.locator('td[data-hop="onnx"] .chain-became')).to_have_text("Clip(x, '', 6.0)")
    expect(row.locator('td[data-hop="onnx"] .mark-predicted')).to_have_text("? omitted-bound-lowest")
    expect(row.locator('td[data-hop="tflite"] .chain-became')).to_have_text("—")
    expect(page.locator('.chain-hop-error[data-hop="tflite"] code')).to_have_text("clipbridge chain-env build")
    expect(page.locator('.chain-hop-error[data-hop="coreml"]')).to_contain_text(
        "coreml failed: convert: AssertionError: dtypes differ")
    expect(page.locator('.chain-hop-error[data-hop="coreml"] .badge')).to_have_text("int-literal-refused")
    row.locator('td[data-hop="coreml"] button.chain-cell').click()
    expect(page.locator("#chain-detail")).to_contain_text("No witness: this hop did not run.")
    no_stray_text(page)
    low = [c for c in contrasts(page, "#chain .badge, #chain .mark") if c["ratio"] < WCAG_AA]
    assert not low, low
    assert_no_sideways_scroll(page, width)
