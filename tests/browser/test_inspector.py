"""The inspector in a real browser: real clicks against the real server, offline (see conftest)."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import numpy as np
import onnx
import pytest
from defusedxml import ElementTree
from onnx import TensorProto, helper, numpy_helper
from playwright.sync_api import expect

from clipbridge.dialects import registry

STATIC = Path(__file__).resolve().parents[2] / "app" / "clipbridge" / "static"
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "object-src 'none'; base-uri 'none'; frame-ancestors 'none'")


def example(page, label: str) -> None:
    """Choose an example from the one menu: by its text, or "<dialect group>: <text>" for a registry example."""
    value = page.evaluate("""(label) => {
        for (const o of document.querySelectorAll('#examples option')) {
            const group = o.parentElement.tagName === 'OPTGROUP' ? o.parentElement.label : '';
            if (o.value && (o.textContent === label || `${group}: ${o.textContent}` === label)) return o.value;
        }
        return null;
    }""", label)
    assert value, f"no example {label!r} in the Examples menu"
    page.get_by_label("Examples", exact=True).select_option(value)
    # The panels show the chosen spec's translation, not the one before it (the first screen's may look alike).
    page.wait_for_function("() => document.getElementById('targets').dataset.spec === "
                           "new URLSearchParams(location.hash.slice(1)).get('spec')")


def panel(page, dialect: str):
    return page.locator(f"#target-{dialect}")


def badge(page, dialect: str):
    return panel(page, dialect).locator(".badge-slot .badge")


def open_inspector(page, server: str) -> None:
    page.goto(server + "/")
    expect(badge(page, "directml")).to_be_visible()


MODEL_VIEW = "Model scan & diff"  # the header switch to the model view (scan, diff and its Fix button)


def model_view_button(page):
    return page.get_by_role("button", name=MODEL_VIEW, exact=True)


def open_model_view(page, server: str) -> None:
    """The inspector, switched to the model view by its header button."""
    open_inspector(page, server)
    model_view_button(page).click()
    expect(model_view_button(page)).to_have_attribute("aria-pressed", "true")


def drop_file(page, zone: str, name: str, data: list[int]) -> None:
    """Drops one file `name` holding the bytes `data` on the drop zone `zone` (a CSS selector), as from the desktop."""
    transfer = page.evaluate_handle("""([bytes, name]) => {
        const dt = new DataTransfer();
        dt.items.add(new File([new Uint8Array(bytes)], name));
        return dt;
    }""", [data, name])
    page.locator(zone).dispatch_event("drop", {"dataTransfer": transfer})


# --- the page itself ---------------------------------------------------------------------------------

def test_page_and_assets_carry_the_csp(server):
    with urllib.request.urlopen(server + "/") as r:
        assert r.headers["Content-Security-Policy"] == CSP
        assert r.headers["X-Content-Type-Options"] == "nosniff"
        assert r.headers["Content-Type"].startswith("text/html")
        html = r.read().decode()
    assert '<script type="module" src="/static/main.js"></script>' in html
    for name, ctype in (("main.js", "text/javascript"), ("inspector.css", "text/css")):
        with urllib.request.urlopen(f"{server}/static/{name}") as r:
            assert r.headers["Content-Type"].startswith(ctype)
            assert r.headers["X-Content-Type-Options"] == "nosniff"
    for bad in ("nope.js", "..%2Fapi%2Finspector.py", ".hidden.js", "index.html"):
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(f"{server}/static/{bad}")
        assert info.value.code == 404, bad


def test_static_sources_keep_to_the_rules():
    """No inline script or style, no HTML built from strings, nothing loaded from elsewhere (offline)."""
    html = (STATIC / "index.html").read_text()
    assert "style=" not in html and "<style" not in html
    assert re.findall(r"<script\b[^>]*>", html) == ['<script type="module" src="/static/main.js">']
    for path in STATIC.glob("*.js"):
        text = path.read_text()
        for banned in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function",
                       ".style."):
            assert banned not in text, f"{path.name}: {banned}"
    for path in [*STATIC.glob("*.js"), *STATIC.glob("*.css"), STATIC / "index.html"]:
        urls = set(re.findall(r"https?://[^\s'\")]+", path.read_text())) - {"http://www.w3.org/2000/svg"}
        assert not urls, f"{path.name} refers to {urls}"


# --- examples, findings, witnesses -------------------------------------------------------------------

def literal(page) -> None:
    """The literal translation mode (an example sets the spec only: the mode stays the user's choice)."""
    page.get_by_label("literal", exact=True).check()


def test_example_shows_findings_badges_and_meaning(page, server):
    open_inspector(page, server)
    literal(page)
    example(page, "OpenVINO: int8-fractional")
    expect(page.get_by_label("Source dialect")).to_have_value("openvino")
    expect(page.get_by_label("literal", exact=True)).to_be_checked()  # choosing an example kept the mode
    expect(page.get_by_label("min", exact=True)).to_have_value("0.5")
    expect(page.locator("#meaning")).to_contain_text("int8: clip to [1, 100]")
    expect(badge(page, "directml")).to_have_text("drift")
    expect(badge(page, "onnx")).to_have_text("drift")
    finding = panel(page, "directml").locator(".finding", has_text="bound-rounding")
    expect(finding.locator(".sev")).to_have_text("error")
    expect(finding).to_contain_text("The effective lower bound changes: 1 -> 0")
    expect(finding.locator(".behaviours")).to_contain_text("ceil(0.5) to i8: 1")
    expect(finding.locator(".witness-text")).to_have_text(
        "Witness (specification): x = 0 gives 1 (source) and 0 (target)")

    page.get_by_label("preserve", exact=True).check()
    expect(badge(page, "directml")).to_have_text("exact")
    expect(badge(page, "onnx")).to_have_text("exact")


def test_run_witness_shows_differing_outputs(page, server):
    open_inspector(page, server)
    literal(page)
    example(page, "OpenVINO: int8-fractional")
    finding = panel(page, "directml").locator(".finding", has_text="bound-rounding")
    finding.get_by_role("button", name="Run witness").click()
    result = finding.locator(".witness-result")
    expect(result).to_have_text("openvino [specification]: 1 · directml:6_4 [specification]: 0 (outputs differ)")
    expect(result).to_have_class(re.compile(r"\bdiffer\b"))


def test_witness_runs_under_the_chosen_target_version(page, server):
    """min > max in int8: ONNX Clip-13 gives max; DirectML CLIP at FL 2.1 (current document) gives Min."""
    open_inspector(page, server)
    literal(page)
    example(page, "ONNX: min-gt-max")
    expect(badge(page, "openvino")).to_have_text("unsupported")
    page.get_by_label("DirectML feature level").select_option("2_1")
    expect(page).to_have_url(re.compile(r"directml=2_1"))
    # The URL moves at once; the panel re-renders when the new translation lands: wait for it, so the click
    # does not hit the FL 6.4 panel's button while it is being replaced.
    expect(panel(page, "directml").locator(".target-spec pre")).to_contain_text('"feature_level": "2_1"')
    finding = panel(page, "directml").locator(".finding", has_text="min-greater-than-max")
    finding.get_by_role("button", name="Run witness").click()
    expect(finding.locator(".witness-result")).to_have_text((
        "onnx [specification]: 2 · directml:2_1 [specification, current-doc reading]: 5 (outputs differ)"))


def test_switching_a_target_version_retranslates(page, server):
    open_inspector(page, server)
    example(page, "ONNX: int64-big")
    expect(badge(page, "directml")).to_have_text("exact")
    expect(badge(page, "openvino")).to_have_text("drift")
    expect(panel(page, "directml").locator(".target-spec pre")).to_contain_text('"ELEMENT_WISE_CLIP1"')
    page.get_by_label("DirectML feature level").select_option("2_1")
    expect(badge(page, "directml")).to_have_text("unsupported")
    expect(panel(page, "directml").locator(".finding", has_text="dtype-unsupported")).to_be_visible()
    page.get_by_label("DirectML feature level").select_option("5_0")
    expect(badge(page, "directml")).to_have_text("exact")
    expect(page).to_have_url(re.compile(r"directml=5_0"))


# --- permalink ---------------------------------------------------------------------------------------

def test_permalink_reproduces_the_view(page, new_page, server):
    spec = {"dialect": "onnx", "opset": 13, "elem_type": "INT8", "min": 5, "max": 2}
    fragment = urllib.parse.urlencode({"spec": json.dumps(spec), "mode": "literal", "onnx": "13",
                                       "openvino": "opset16", "directml": "2_1"})
    page.goto(f"{server}/#{fragment}")
    expect(page.get_by_label("min", exact=True)).to_have_value("5")
    expect(page.get_by_label("max", exact=True)).to_have_value("2")
    expect(page.get_by_label("literal", exact=True)).to_be_checked()
    expect(page.get_by_label("DirectML feature level")).to_have_value("2_1")
    expect(badge(page, "openvino")).to_have_text("unsupported")
    expect(badge(page, "directml")).to_have_text("drift")

    # An edit moves the link along; the link alone reproduces the edited view in a fresh browser context.
    page.get_by_label("max", exact=True).fill("3")
    expect(page.locator("#meaning")).to_contain_text("int8: clip to [5, 3]")
    expect(page).to_have_url(re.compile(r"%22max%22%3A3"))
    link = page.url
    findings = panel(page, "directml").locator(".finding .code").all_text_contents()

    fresh = new_page(server)
    fresh.goto(link)
    expect(fresh.get_by_label("max", exact=True)).to_have_value("3")
    expect(fresh.get_by_label("literal", exact=True)).to_be_checked()
    expect(fresh.get_by_label("DirectML feature level")).to_have_value("2_1")
    expect(fresh.locator("#meaning")).to_have_text(page.locator("#meaning").text_content())
    expect(badge(fresh, "openvino")).to_have_text("unsupported")
    expect(panel(fresh, "directml").locator(".finding .code")).to_have_text(findings)


def test_permalink_keeps_big_integers_exact(page, server):
    spec = '{"dialect":"onnx","opset":13,"elem_type":"UINT64","min":1,"max":18446744073709551615}'
    page.goto(f"{server}/#{urllib.parse.urlencode({'spec': spec})}")
    expect(page.get_by_label("max", exact=True)).to_have_value("18446744073709551615")
    expect(page.locator("#meaning")).to_contain_text("18446744073709551615")


# --- artifacts ---------------------------------------------------------------------------------------

def save(page, button, output_dir: Path) -> Path:
    with page.expect_download() as info:
        button.click()
    download = info.value
    path = output_dir / download.suggested_filename
    download.save_as(path)
    return path


def test_download_artifacts(page, server, output_dir):
    open_inspector(page, server)
    example(page, "DirectML: dml-scalebias")
    onnx_panel = panel(page, "onnx")
    expect(badge(page, "onnx")).to_have_text("drift")

    path = save(page, onnx_panel.get_by_role("button", name="Download .onnx"), output_dir)
    assert path.suffix == ".onnx"
    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    assert {"Clip", "Mul", "Add"} <= {n.op_type for n in model.graph.node}
    from onnx.reference import ReferenceEvaluator
    x = np.linspace(-20, 20, 192, dtype=np.float16).reshape(1, 3, 8, 8)
    (y,) = ReferenceEvaluator(model).run(None, {model.graph.input[0].name: x})
    expected = np.clip(x.astype(np.float32) * np.float32(0.5) + np.float32(1), 0, 6).astype(np.float16)
    np.testing.assert_array_equal(y, expected)

    spec_path = save(page, onnx_panel.get_by_role("button", name="Download .json"), output_dir)
    assert json.loads(spec_path.read_text()) == json.loads(onnx_panel.locator(".target-spec pre").text_content())

    ov_panel = panel(page, "openvino")
    xml_path = save(page, ov_panel.get_by_role("button", name="Download .xml"), output_dir)
    bin_path = save(page, ov_panel.get_by_role("button", name="Download .bin"), output_dir)
    layers = ElementTree.parse(xml_path).getroot().iter("layer")
    assert "Clamp" in {layer.get("type") for layer in layers}
    import openvino
    ov_model = openvino.Core().read_model(str(xml_path), str(bin_path))
    assert "Clamp" in {op.get_type_name() for op in ov_model.get_ops()}

    example(page, "ONNX: relu6-f16")
    expect(panel(page, "directml").locator(".target-spec pre")).to_contain_text('"FLOAT16"')
    cpp = save(page, panel(page, "directml").get_by_role("button", name="Download .cpp"), output_dir).read_text()
    assert "DML_ELEMENT_WISE_CLIP_OPERATOR_DESC" in cpp


def test_copy_buttons(page, server):
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    open_inspector(page, server)
    example(page, "ONNX: relu6-f16")
    expect(badge(page, "openvino")).to_have_text("exact")
    ov = panel(page, "openvino")
    ov.get_by_role("button", name="Copy IR XML").click()
    expect(ov.locator(".artifacts .done")).to_have_text("Copy IR XML: copied")
    assert 'type="Clamp"' in page.evaluate("navigator.clipboard.readText()")
    page.get_by_role("button", name="Copy permalink").click()
    expect(page.locator("#copy-link-done")).to_have_text("Link copied")
    assert page.evaluate("navigator.clipboard.readText()") == page.url


# --- transfer plot -----------------------------------------------------------------------------------

def test_transfer_plot_marks_differences(page, server, screenshot):
    open_inspector(page, server)
    literal(page)
    example(page, "OpenVINO: int8-fractional")
    plot = page.locator("#plot")
    expect(plot.locator("polyline.curve-0")).not_to_have_count(0)
    expect(plot.locator("polyline.curve-1")).not_to_have_count(0)
    expect(plot.locator("polyline.curve-2")).not_to_have_count(0)
    expect(plot.locator("circle.diff").first).to_be_visible()
    expect(plot.locator("desc")).to_contain_text("differ")
    legend = page.locator("#plot-legend li")
    expect(legend).to_have_text(["openvino (source) [specification]: int8: clip to [1, 100]",
                                 "onnx:13 [specification]: int8: clip to [0, 100]",
                                 "directml:6_4 [specification]: int8: clip to [0, 100]"])
    # Every integer input below 1 differs: openvino clamps it to 1 (ceil 0.5), the others to 0 (trunc 0.5).
    rows = page.locator(".diff-table tbody tr")
    expect(rows).to_have_count(12)
    expect(rows.last.locator("th")).to_have_text("0")
    for k in range(12):
        expect(rows.nth(k).locator("td")).to_have_text(["1", "0", "0"])
    expect(page.locator(".plot-summary")).to_have_text(re.compile(r"^\d+ of \d+ sample inputs differ\.$"))
    screenshot(page, "inspector")


def test_transfer_plot_of_floats_shows_special_inputs(page, server):
    open_inspector(page, server)
    example(page, "ONNX: clip6-defaults")
    expect(page.locator("#meaning")).to_contain_text("float16: clip to [-inf, inf]")
    special = page.locator(".special-table tbody tr")
    expect(special.locator("th")).to_have_text(["-inf", "inf", "nan"])
    expect(special.nth(1).locator("td")).to_have_text(["inf", "inf", "inf"])


# --- errors next to their fields ---------------------------------------------------------------------

def test_api_errors_appear_next_to_their_fields(page, server):
    open_inspector(page, server)
    example(page, "ONNX: relu6-f16")
    max_field = page.get_by_label("max", exact=True)
    max_field.fill("six")
    expect(page.locator("#f-max-err")).to_contain_text("Not a number: 'six'")
    expect(max_field).to_have_attribute("aria-invalid", "true")
    expect(panel(page, "directml").locator(".errors")).to_contain_text("fix the source spec")
    max_field.fill("6")
    expect(badge(page, "directml")).to_be_visible()
    expect(page.locator("#f-max-err")).to_be_empty()

    example(page, "DirectML: dml-scalebias")
    page.get_by_label("Feature level", exact=True).select_option("2_1")
    page.get_by_label("Sizes").fill("1, 3, 224")
    expect(page.locator("#f-desc-InputTensor-Sizes-err")).to_have_text("DirectML FL 2.1 needs exactly 4 dimensions. Got: 3")
    page.get_by_label("Sizes").fill("1, 3, 224, 224")
    expect(badge(page, "onnx")).to_have_text("drift")
    expect(page.locator("#f-desc-InputTensor-Sizes-err")).to_be_empty()


def test_errors_without_a_form_field_are_listed(page, server):
    open_inspector(page, server)
    page.get_by_label("Source dialect").select_option("openvino")
    page.get_by_label("min", exact=True).fill("7")
    expect(page.locator("#source-errors")).to_contain_text("Attribute 'min' must be less or equal than 'max'")


def test_json_editor_keeps_big_integers_and_reports_syntax(page, server):
    open_inspector(page, server)
    page.get_by_label("JSON", exact=True).check()
    editor = page.get_by_label("Spec as JSON")
    editor.fill('{"dialect": "onnx", "opset": 13, "elem_type": "UINT64", "min": 1, "max": 18446744073709551615}')
    expect(page.locator("#meaning")).to_contain_text("uint64: clip to [1, 18446744073709551615]")
    editor.fill('{"dialect": "onnx", "opset": 13,')
    expect(page.locator("#source-errors")).to_contain_text("JSON:")
    expect(editor).to_have_attribute("aria-invalid", "true")
    editor.fill('{"dialect": "onnx", "opset": 13, "elem_type": "INT8", "min": 1, "max": 1000}')
    expect(page.locator("#source-errors")).to_contain_text("spec.max")


def test_ir_xml_editor(page, server):
    open_inspector(page, server)
    page.get_by_label("Source dialect").select_option("openvino")
    page.get_by_label("IR XML", exact=True).check()
    xml = page.get_by_label("OpenVINO IR XML")
    expect(xml).to_have_value(re.compile(r'type="Clamp"'))
    xml.fill(xml.input_value().replace('min="0"', 'min="2"'))
    expect(page.locator("#meaning")).to_contain_text("clip to [2.0, 6.0]")
    page.get_by_label("Form", exact=True).check()
    expect(page.get_by_label("min", exact=True)).to_have_value("2")


# --- keyboard and labels -----------------------------------------------------------------------------

def test_keyboard_use_and_labelled_controls(page, server):
    open_inspector(page, server)
    page.get_by_label("Examples", exact=True).focus()
    page.get_by_label("Examples", exact=True).select_option("min-gt-max")
    expect(page.get_by_label("max", exact=True)).to_have_value("2")
    page.get_by_label("preserve", exact=True).focus()
    page.keyboard.press("ArrowRight")  # radio group: moves to and selects "literal"
    expect(page.get_by_label("literal", exact=True)).to_be_checked()
    page.get_by_label("Opset", exact=True).focus()
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "f-elem-type"
    unlabelled = page.evaluate("""() => [...document.querySelectorAll('input, select, textarea, button')]
        .filter((el) => !(el.labels && el.labels.length) && !el.getAttribute('aria-label')
                        && !(el.tagName === 'BUTTON' && el.textContent.trim()))
        .map((el) => el.outerHTML)""")
    assert unlabelled == []


# --- model drop zone ---------------------------------------------------------------------------------

def relu6_model(path: Path) -> Path:
    lo = numpy_helper.from_array(np.array(0, dtype=np.float32), "clip_min")
    hi = numpy_helper.from_array(np.array(6, dtype=np.float32), "clip_max")
    node = helper.make_node("Clip", ["x", "clip_min", "clip_max"], ["y"], name="clip_1")
    graph = helper.make_graph([node], "relu6", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])], [lo, hi])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, str(path))
    return path


def test_upload_model_shows_the_scan_table(page, server, output_dir, screenshot):
    model = relu6_model(output_dir / "relu6.onnx")
    open_inspector(page, server)
    expect(page.get_by_label("Or choose files")).to_be_hidden()  # the model view is one switch away
    model_view_button(page).click()
    expect(model_view_button(page)).to_have_attribute("aria-pressed", "true")
    with page.expect_file_chooser() as chooser:
        page.get_by_label("Or choose files").click()
    chooser.value.set_files(str(model))
    rows = page.locator(".scan-table tbody tr")
    expect(rows).to_have_count(1)
    cells = rows.first.locator("td")
    expect(cells.nth(2)).to_have_text("clip_1")
    expect(cells.nth(3)).to_have_text("Clip-13")
    expect(cells.nth(4)).to_have_text("float32")
    headers = page.locator(".scan-table thead th").all_text_contents()
    assert {"onnx:13", "openvino:opset16", "directml:6_4"} <= set(headers)
    expect(rows.first.locator(".badge").first).to_have_text(re.compile(r"^(exact|drift|unsupported)$"))
    screenshot(page, "scan")
    rows.first.get_by_role("button", name=re.compile("Inspect clip 0")).click()
    expect(page.get_by_label("Source dialect")).to_be_visible()  # Inspect switches back to the spec view
    expect(page.get_by_label("Source dialect")).to_have_value("onnx")
    expect(page.get_by_label("elem_type")).to_have_value("FLOAT")
    expect(page.get_by_label("max", exact=True)).to_have_value("6")


def test_drop_a_model_on_the_zone(page, server, output_dir):
    data = list(relu6_model(output_dir / "dropped.onnx").read_bytes())
    open_inspector(page, server)
    model_view_button(page).click()
    drop_file(page, "#dropzone", "dropped.onnx", data)
    expect(page.locator(".scan-table tbody tr")).to_have_count(1)
    expect(page.locator(".scan-file")).to_have_text("dropped.onnx")


# --- API key -----------------------------------------------------------------------------------------

def test_api_key_is_asked_for_once_and_sent(new_page, keyed_server):
    base, key = keyed_server
    page = new_page(base)
    page.goto(base + "/")
    dialog = page.get_by_role("dialog")
    expect(dialog).to_be_visible()
    page.get_by_label("API key", exact=True).fill("wrong-key")
    page.get_by_role("button", name="Use this key").click()
    expect(page.locator("#key-why")).to_contain_text("refused")
    page.get_by_label("API key", exact=True).fill(key)
    page.get_by_role("button", name="Use this key").click()
    expect(dialog).to_be_hidden()
    expect(badge(page, "directml")).to_be_visible()
    assert page.evaluate("sessionStorage.getItem('clipbridge.apiKey')") == key
    literal(page)
    with page.expect_request(re.compile(r"/v1/translate$")) as request:
        example(page, "ONNX: min-gt-max")
    assert request.value.headers.get("x-api-key") == key
    expect(badge(page, "openvino")).to_have_text("unsupported")
    expect(dialog).to_be_hidden()


# --- every registered dialect (StableHLO is registered with one line, out of the defaults) ------------------

def test_stablehlo_is_a_source_with_a_schema_form_and_examples(page, server):
    """StableHLO's source choice, form (from its spec model's JSON Schema) and example buttons (from its
    Dialect.examples) come from /v1/dialects: no line of the inspector names it."""
    open_inspector(page, server)
    expect(page.get_by_label("Source dialect").locator("option[value=stablehlo]")).to_have_count(1)
    example(page, "stablehlo: relu6-f32")
    expect(page.get_by_label("Source dialect")).to_have_value("stablehlo")
    expect(page.get_by_label("element_type", exact=True)).to_have_value("f32")
    expect(page.get_by_label("shape", exact=True)).to_have_value("1, 4")
    expect(page.locator("#meaning")).to_contain_text("float32: clip to [0.0, 6.0]")
    expect(badge(page, "onnx")).to_have_text("exact")  # the default targets
    expect(badge(page, "openvino")).to_have_text("exact")
    expect(badge(page, "directml")).to_have_text("drift")  # DirectML does not document NaN
    expect(panel(page, "stablehlo")).to_have_count(0)
    expect(page.locator("#plot-legend li").first).to_contain_text("stablehlo (source)")

    # A form edit goes to the service; its field error lands next to the field the schema form made.
    page.get_by_label("element_type", exact=True).select_option("i8")
    page.get_by_label("max", exact=True).fill("300")
    expect(page.locator("#f-max-err")).to_contain_text("300 is outside i8 [-128, 127]")
    page.get_by_label("max", exact=True).fill("100")
    expect(page.locator("#meaning")).to_contain_text("int8: clip to [0, 100]")
    expect(page).to_have_url(re.compile(r"%22element_type%22%3A%22i8%22"))

    page.get_by_label("Source dialect").select_option("onnx")  # the translation into it, when there is one
    expect(page.get_by_label("elem_type")).to_have_value("INT8")


def test_stablehlo_as_a_target_panel_plot_curve_and_permalink(page, new_page, server, output_dir):
    open_inspector(page, server)
    target = page.get_by_role("group", name="Translate to")
    expect(target.get_by_label("stablehlo")).not_to_be_checked()  # out of the defaults (in_defaults=False)
    expect(target.get_by_label("ONNX")).to_be_checked()
    literal(page)
    example(page, "OpenVINO: int8-fractional")
    target.get_by_label("stablehlo").check()
    sh = panel(page, "stablehlo")
    expect(badge(page, "stablehlo")).to_have_text("drift")  # literal: 0.5 is no value of i8
    expect(sh.locator("h2")).to_have_text("stablehlo")
    expect(sh.get_by_label("stablehlo version")).to_have_value("1")
    expect(sh.locator(".target-spec pre")).to_contain_text('"element_type": "i8"')
    page.get_by_label("preserve", exact=True).check()
    expect(badge(page, "stablehlo")).to_have_text("exact")
    expect(sh.locator(".target-spec pre")).to_contain_text('"min": 1')
    mlir = save(page, sh.get_by_role("button", name="Download stablehlo_mlir"), output_dir).read_text()
    assert "stablehlo.clamp" in mlir and "dense<1>" in mlir

    legend = page.locator("#plot-legend li")
    expect(legend).to_have_count(4)
    expect(legend.last).to_contain_text("stablehlo:1 [specification]: int8: clip to [1, 100]")
    expect(page.locator("#plot polyline.curve-3")).not_to_have_count(0)
    expect(page).to_have_url(re.compile(r"targets=onnx%2Copenvino%2Cdirectml%2Cstablehlo"))
    fresh = new_page(server)
    fresh.goto(page.url)
    expect(fresh.get_by_role("group", name="Translate to").get_by_label("stablehlo")).to_be_checked()
    expect(badge(fresh, "stablehlo")).to_have_text("exact")

    # The drop zone scans with the chosen targets: StableHLO is a column of the scan table too.
    model = relu6_model(output_dir / "relu6-columns.onnx")
    model_view_button(page).click()
    with page.expect_file_chooser() as chooser:
        page.get_by_label("Or choose files").click()
    chooser.value.set_files(str(model))
    expect(page.locator(".scan-table thead th")).to_contain_text(["onnx:13", "openvino:opset16", "directml:6_4",
                                                                   "stablehlo:1"])
    expect(page.locator(".scan-table tbody tr").first.locator(".badge")).to_have_count(4)

    page.get_by_role("button", name="Spec", exact=True).click()
    target.get_by_label("stablehlo").uncheck()
    expect(panel(page, "stablehlo")).to_have_count(0)
    expect(legend).to_have_count(3)


@pytest.mark.parametrize("name", registry.names())
def test_every_registered_dialect_is_a_source_and_a_target(page, server, name):
    """Whatever the registry holds: a source option, a target checkbox, and its first example (Dialect.examples)
    translates into the default targets with a badge each."""
    d = registry.DIALECTS[name]
    open_inspector(page, server)
    expect(page.get_by_label("Source dialect").locator(f"option[value={name}]")).to_have_count(1)
    box = page.get_by_role("group", name="Translate to").locator(f"input[value={name}]")
    expect(box).to_have_count(1)
    if d.in_defaults:
        expect(box).to_be_checked()
    else:
        expect(box).not_to_be_checked()
    if not d.examples:
        return
    label = next(iter(d.examples))
    example(page, f"{dialect_label(name)}: {label}")
    expect(page.get_by_label("Source dialect")).to_have_value(name)
    expect(page.locator("#status")).to_have_text(re.compile(r"^Translated"))
    others = [n for n in registry.default_names() if n != name]
    expect(page.locator(".target .badge-slot .badge")).to_have_count(len(others))
    expect(page.locator("#plot-legend li")).to_have_count(len(others) + 1)


def dialect_label(name: str) -> str:
    return {"onnx": "ONNX", "openvino": "OpenVINO", "directml": "DirectML"}.get(name, name)


def test_a_spec_the_schema_form_cannot_hold_opens_as_json(page, server):
    """A per-element (tensor) bound is no form field: the spec opens in the JSON view and still translates."""
    spec = {"dialect": "stablehlo", "element_type": "f32", "shape": [2], "min": [0, 1], "max": 6}
    page.goto(f"{server}/#{urllib.parse.urlencode({'spec': json.dumps(spec)})}")
    expect(page.get_by_label("JSON", exact=True)).to_be_checked()
    expect(page.get_by_label("Spec as JSON")).to_have_value(re.compile(r'"min": \[\s*0,\s*1\s*\]'))
    expect(badge(page, "onnx")).to_be_visible()
    page.get_by_label("Form", exact=True).check()  # the form refuses it and says why
    expect(page.locator("#source-errors")).to_contain_text("a tensor bound or a nested field is edited as JSON")


# --- one answer per question about NaN: what each card and witness shows (issue 37) ---------------------------

def _open_spec(page, server: str, spec: dict) -> None:
    """The inspector on a spec given in the URL (TensorRT is not among the example menu's default dialects)."""
    page.goto(server + "/#spec=" + urllib.parse.quote(json.dumps(spec, separators=(",", ":"))) + "&mode=preserve")
    expect(badge(page, "onnx")).to_be_visible()


def test_cards_say_what_they_show_and_a_readings_witness_runs_under_it(page, server):
    """The default is the specification for every dialect (TensorRT too); a spec pinning TensorRT's observed
    reading says so on its card, and a witness that holds under a reading runs under it (`reading` on
    /v1/compare), labelled from the output's `shows`."""
    trt = {"dialect": "tensorrt", "version": "10", "dtype": "float32", "alpha": 0, "beta": 6}
    _open_spec(page, server, trt)
    expect(page.locator("#meaning")).to_contain_text("Specification: ")
    expect(panel(page, "onnx").locator(".meaning")).to_contain_text("Specification: ")
    finding = panel(page, "onnx").locator(".finding", has_text="under the observed reading").first
    finding.get_by_role("button", name="Run witness").click()
    expect(finding.locator(".witness-result")).to_have_text(
        "tensorrt [observed engine (TensorRT)]: 0 · onnx:13 [specification]: nan (outputs differ)")
    page.goto("about:blank")
    _open_spec(page, server, {**trt, "reading": "observed"})
    expect(page.locator("#meaning")).to_contain_text("Observed engine (TensorRT): ")
    expect(panel(page, "onnx").locator(".finding", has_text="under the header reading").first).to_be_visible()
