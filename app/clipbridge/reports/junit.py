"""JUnit XML: one <testsuites> document, a <testsuite> per suite of the reports given, a <testcase> per check.
Built with ElementTree (every text escaped); the only module that writes JUnit."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from clipbridge.reports.view import Case, Failure, Suite

COUNTS = ("tests", "failures", "errors", "skipped")


def _failure(parent: ET.Element, tag: str, f: Failure) -> None:
    attrs = {"message": f.message, **({"type": f.type} if f.type else {})}
    ET.SubElement(parent, tag, attrs).text = f.text


def _case(suite: ET.Element, case: Case) -> dict[str, int]:
    """The testcase element, appended to `suite`; what it adds to the counts."""
    attrs = {"name": case.name, "classname": case.classname}
    if case.seconds is not None:
        attrs["time"] = f"{case.seconds:.3f}"
    tc = ET.SubElement(suite, "testcase", attrs)
    if case.properties:  # the convention pytest's record_property writes, so that a CI tool reads them as data
        props = ET.SubElement(tc, "properties")
        for name, value in case.properties:
            ET.SubElement(props, "property", name=name, value=value)
    for f in case.failures:
        _failure(tc, "failure", f)
    if case.error is not None:
        _failure(tc, "error", case.error)
    if case.skipped:
        ET.SubElement(tc, "skipped")
    if case.output:
        ET.SubElement(tc, "system-out").text = case.output
    return {"tests": 1, "failures": int(bool(case.failures)), "errors": int(case.error is not None),
            "skipped": int(case.skipped)}


def _suite(root: ET.Element, suite: Suite, totals: dict[str, int]) -> None:
    el = ET.SubElement(root, "testsuite", name=suite.name)
    counts = dict.fromkeys(COUNTS, 0)
    for case in suite.cases:
        for k, v in _case(el, case).items():
            counts[k] += v
    for k, v in counts.items():
        el.set(k, str(v))
        totals[k] += v
    if suite.seconds is not None:
        el.set("time", f"{suite.seconds:.3f}")


def render(name: str, suites: list[Suite]) -> str:
    """The XML document, its declaration included; the counts of each suite and of the whole on their elements."""
    root = ET.Element("testsuites", name=name)
    totals = dict.fromkeys(COUNTS, 0)
    for suite in suites:
        _suite(root, suite, totals)
    for k, v in totals.items():
        root.set(k, str(v))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
