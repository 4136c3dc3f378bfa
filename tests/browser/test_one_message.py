"""One message per error (issue 47, item 6): whatever fails, in the spec view or the model view, its message is on
the page once, at a laptop's 1366x768 and a phone's 390x844. A problem's `detail` is written from its `errors`
(app/clipbridge/api/problems.py), so the page shows the errors and leaves the detail out; the header status says
that something failed and where, not the message again."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from tests.browser.test_inspector import drop_file, example, open_inspector, open_model_view
from tests.browser.test_model_view import SCREENS, sized

NOT_A_NUMBER = "Not a number: 'six'"
NOT_ONNX = "the model is not ONNX protobuf"
MIN_MAX = "Attribute 'min' must be less or equal than 'max'"


def occurrences(page, text: str) -> int:
    """How often `text` is on the page as a reader sees it (innerText leaves hidden views out)."""
    return page.evaluate("(t) => document.body.innerText.split(t).length - 1", text)


def a_field_error(page, server: str) -> str:
    open_inspector(page, server)
    example(page, "ONNX: relu6-f16")
    page.get_by_label("max", exact=True).fill("six")
    expect(page.locator("#f-max-err")).to_contain_text(NOT_A_NUMBER)
    expect(page.locator("#status")).to_have_text("Error: not translated; the problem is shown with the source spec.")
    return NOT_A_NUMBER


def an_error_without_a_field(page, server: str) -> str:
    open_inspector(page, server)
    page.get_by_label("Source dialect").select_option("openvino")
    page.get_by_label("min", exact=True).fill("7")
    expect(page.locator("#source-errors")).to_contain_text(MIN_MAX)
    expect(page.locator("#status")).to_have_text("Error: not translated; the problem is shown with the source spec.")
    return MIN_MAX


def a_scan_of_no_model(page, server: str) -> str:
    open_model_view(page, server)
    drop_file(page, "#dropzone", "broken.onnx", list(b"garbage"))
    errors = page.locator("#scan-errors li")
    expect(errors.first).to_have_text("400 Unreadable artifact")
    expect(errors.nth(1)).to_contain_text(f"model: {NOT_ONNX}")
    expect(page.locator("#status")).to_have_text("Scan of broken.onnx failed")
    return NOT_ONNX


def a_diff_problem(page, server: str) -> str:
    # the engines this host may lack: the service's problem is given, as the diff route writes it
    msg = "the input 'x' has shape [2] but the model expects [1, 3]"
    problem = {"type": "about:blank", "title": "Invalid input tensor", "status": 422, "detail": f"{msg} (inputs.x)",
               "errors": [{"loc": "inputs.x", "msg": msg}]}
    page.route("**/v1/models/diff*", lambda route: route.fulfill(
        status=422, content_type="application/problem+json", body=json.dumps(problem)))
    open_model_view(page, server)
    drop_file(page, "#diff-dropzone", "m.onnx", [8, 7])
    expect(page.locator("#diff-errors li")).to_have_text(["422 Invalid input tensor", f"inputs.x: {msg}"])
    return msg


def a_problem_without_errors(page, server: str) -> str:
    msg = "The service stayed busy; try again."
    problem = {"type": "about:blank", "title": "Busy", "status": 429, "detail": msg}
    page.route("**/v1/models/inspect*", lambda route: route.fulfill(
        status=429, content_type="application/problem+json", body=json.dumps(problem)))
    open_model_view(page, server)
    drop_file(page, "#dropzone", "m.onnx", [8, 7])
    expect(page.locator("#scan-errors li")).to_have_text([f"429 Busy: {msg}"])
    return msg


CASES = {
    "spec-field-error": a_field_error,
    "spec-error-without-field": an_error_without_a_field,
    "scan-unreadable-model": a_scan_of_no_model,
    "diff-problem-with-errors": a_diff_problem,
    "scan-problem-without-errors": a_problem_without_errors,
}


@pytest.mark.parametrize("screen", list(SCREENS), ids=list(SCREENS))
@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_each_error_message_is_shown_once(page, server, screen, case):
    sized(page, screen)
    message = CASES[case](page, server)
    assert occurrences(page, message) == 1, page.evaluate("document.body.innerText")
