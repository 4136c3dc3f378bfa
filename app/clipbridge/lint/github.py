"""GitHub Actions workflow commands: one ::error/::warning/::notice annotation per finding."""

from __future__ import annotations

from clipbridge.lint.report import RANK, LintReport

LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    """The message part of a workflow command (GitHub's runner: %, CR, LF)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A property value (file=, title=): also ':' and ',' which separate properties."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render(report: LintReport) -> str:
    """Annotations for unsuppressed findings, then a notice with the summary (and what the baseline held)."""
    lines = []
    # Errors first: GitHub shows only the first annotations of each kind per step (10 at the time of writing).
    for i in sorted(report.items, key=lambda i: -RANK[i.severity]):
        if i.suppressed:
            continue
        title = f"clipbridge {i.code}" + (f" ({i.target})" if i.target else "") + f" at {i.where}"
        body = i.message
        w = i.finding.get("witness")
        if w:
            body += (f"\nwitness: input {w['input']} gives {w['source_output']} (source), "
                     f"{w['target_output']} (target)")
        body += f"\nclipbridge explain {i.code}"
        lines.append(f"::{LEVEL[i.severity]} file={escape_property(report.artifact)},"
                     f"title={escape_property(title)}::{escape_data(body)}")
    lines.append(f"::notice title={escape_property('clipbridge summary')}::{escape_data(report.summary())}")
    return "\n".join(lines) + "\n"
