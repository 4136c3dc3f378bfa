"""The inspector's examples and starting specs come from the registry (/v1/dialects `examples`), never from the
page's own code: the menu lists every registered dialect's examples under its name, a dialect's starting spec is
its "start" example (else its first), and choosing an example leaves the translation mode alone
(docs/inspector.md, "Examples")."""

from __future__ import annotations

import json
import re
import urllib.parse
from typing import Any

from playwright.sync_api import expect

from clipbridge.dialects import registry
from tests.browser.test_inspector import dialect_label, open_inspector

INVALID = {"dialect": "onnx", "opset": 13, "elem_type": "INT8", "min": 1, "max": 1000}  # 1000 is no int8


def starting_spec(name: str) -> dict[str, Any] | None:
    """What the inspector starts a dialect from: its "start" example, else its first, else nothing."""
    examples = registry.DIALECTS[name].examples
    return examples.get("start") or next(iter(examples.values()), None)


def spec_in_link(page) -> dict[str, Any]:
    fragment = urllib.parse.urlparse(page.url).fragment
    return json.loads(urllib.parse.parse_qs(fragment)["spec"][0])


def test_the_menu_is_every_registered_example_grouped_by_dialect(page, server):
    open_inspector(page, server)
    menu = page.evaluate("""() => [...document.querySelectorAll('#examples optgroup option')]
        .map((o) => [o.parentElement.label, o.textContent])""")
    assert menu == [[dialect_label(n), e] for n, d in registry.DIALECTS.items() for e in d.examples]
    groups = page.evaluate("() => [...document.querySelectorAll('#examples optgroup')].map((g) => g.label)")
    assert groups == [dialect_label(n) for n, d in registry.DIALECTS.items() if d.examples]  # none when empty


def test_an_example_sets_the_spec_and_keeps_the_mode(page, server):
    open_inspector(page, server)
    name, d = next((n, d) for n, d in registry.DIALECTS.items() if len(d.examples) > 1)
    last = list(d.examples)[-1]
    for mode in ("literal", "preserve"):
        page.get_by_label(mode, exact=True).check()
        page.get_by_label("Examples", exact=True).select_option(f"{name}-{last}")
        expect(page.get_by_label("Source dialect")).to_have_value(name)
        expect(page.get_by_label(mode, exact=True)).to_be_checked()
        expect(page).to_have_url(re.compile(rf"[#&]mode={mode}\b"))
        assert spec_in_link(page) == d.examples[last]


def test_the_first_screen_is_the_first_dialects_starting_spec(page, server):
    open_inspector(page, server)
    first = next(n for n in registry.names() if registry.DIALECTS[n].examples)
    expect(page.get_by_label("Source dialect")).to_have_value(first)
    expect(page.get_by_label("preserve", exact=True)).to_be_checked()
    assert spec_in_link(page) == starting_spec(first)


def test_a_dialect_switch_without_a_translation_gives_its_starting_spec(page, server):
    """With the source in error there is no translation to carry over: each dialect opens at its starting spec."""
    link = f"{server}/#{urllib.parse.urlencode({'spec': json.dumps(INVALID)})}"
    open_inspector(page, server)
    for name in registry.names():
        spec = starting_spec(name)
        if name == INVALID["dialect"] or spec is None:
            continue
        page.goto(link)
        expect(page.locator("#status")).to_have_text(re.compile(r"^Error"))
        page.get_by_label("Source dialect").select_option(name)
        page.wait_for_function("(d) => new URLSearchParams(location.hash.slice(1)).get('spec')"
                               ".includes(`\"dialect\":\"${d}\"`)", arg=name)
        assert spec_in_link(page) == spec, name
