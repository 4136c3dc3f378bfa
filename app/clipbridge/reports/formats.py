"""A report in one of the CI formats, by the one writer of that format."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

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


def render_body(body: dict[str, Any], fmt: str, table: Callable[[dict[str, Any]], str],
                view: Callable[[dict[str, Any], str], Report], artifact: str) -> str:
    """A command's JSON body as `fmt`: json pretty-printed without NaN (the HTTP body), the command's own table, or
    a CI format from the command's findings view by that format's one writer."""
    if fmt == "json":
        return json.dumps(body, indent=2, allow_nan=False) + "\n"
    if fmt == "table":
        return table(body)
    return render(view(body, artifact), fmt)
