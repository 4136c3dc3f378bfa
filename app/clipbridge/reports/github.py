"""GitHub Actions workflow commands: one ::error/::warning/::notice annotation per finding, then the summary.
The only module that writes them."""

from __future__ import annotations

from clipbridge.reports.view import Finding, Report

COMMAND = {"error": "error", "warning": "warning", "note": "notice"}
RANK = {"error": 0, "warning": 1, "note": 2}


def escape_data(text: str) -> str:
    """The message part of a workflow command (GitHub's runner: %, CR, LF)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A property value (file=, title=): also ':' and ',' which separate properties."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _line(f: Finding) -> str:
    title = f.title if f.title is not None else f"clipbridge {f.rule}"
    body = f.annotation if f.annotation is not None else f.message
    return (f"::{COMMAND[f.level]} file={escape_property(f.location.artifact)},title={escape_property(title)}"
            f"::{escape_data(body)}")


def render(report: Report) -> str:
    """Annotations for the findings no baseline holds, then a notice with the summary."""
    # Errors first: GitHub shows only the first annotations of each kind per step (10 at the time of writing).
    lines = [_line(f) for f in sorted(report.findings, key=lambda f: RANK[f.level]) if not f.suppressed]
    if report.summary is not None:
        title, text = report.summary
        lines.append(f"::notice title={escape_property(title)}::{escape_data(text)}")
    return "\n".join(lines) + "\n" if lines else ""
