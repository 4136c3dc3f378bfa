"""A report in one of the CI formats, by the one writer of that format."""

from __future__ import annotations

from clipbridge.reports import github, junit, markdown, sarif
from clipbridge.reports.view import Report

CI_FORMATS = ("sarif", "junit", "github", "markdown")


def render(report: Report, fmt: str) -> str:
    if fmt == "sarif":
        return sarif.render([report])
    if fmt == "junit":
        return junit.render(report.junit_name, report.suites)
    if fmt == "github":
        return github.render(report)
    if fmt == "markdown":
        return markdown.render(report.markdown)
    raise ValueError(f"not a report format: {fmt}")
