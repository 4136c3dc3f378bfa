"""Markdown for a pull-request comment: the status matrix, then the findings with their witnesses."""

from __future__ import annotations

from clipbridge.lint.report import LintReport

MAX_ROWS = 200  # a GitHub comment holds 65536 characters
ICON = {"exact": "exact", "drift": "**drift**", "unsupported": "**unsupported**"}


def cell(text: object) -> str:
    """Table-cell safe: pipes escaped, newlines flattened, backticks kept out of code spans' way."""
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def render(report: LintReport) -> str:
    out = [f"### clipbridge: `{cell(report.artifact)}`", "", report.summary() + ".", ""]
    clips: dict[int, tuple[str, str]] = {}
    status: dict[tuple[int, str], str] = {}
    for c in report.cases:
        clips.setdefault(c.clip, (c.where, c.pattern))
        status[(c.clip, c.target)] = c.status
    out += ["| # | clip | pattern | " + " | ".join(cell(t) for t in report.targets) + " |",
            "|---|---|---|" + "---|" * len(report.targets)]
    for cid, (where, pattern) in sorted(clips.items()):
        cells = [ICON.get(status.get((cid, t), ""), status.get((cid, t), "")) for t in report.targets]
        out.append(f"| {cid} | `{cell(where)}` | {cell(pattern)} | " + " | ".join(cells) + " |")
    shown = [i for i in report.items if not i.suppressed]
    cut = len(shown) - MAX_ROWS
    shown = sorted(shown, key=lambda i: (-["info", "warning", "error"].index(i.severity), i.clip))[:MAX_ROWS]
    if shown:
        out += ["", "| severity | code | clip | target | message | witness |", "|---|---|---|---|---|---|"]
        for i in shown:
            w = i.finding.get("witness")
            wit = f"{w['input']} → {w['source_output']} / {w['target_output']}" if w else ""
            out.append(f"| {i.severity} | `{i.code}` | `{cell(i.where)}` | {cell(i.target or 'any')} | "
                       f"{cell(i.message)} | {cell(wit)} |")
    if cut > 0:
        out += ["", f"... and {cut} more finding(s) (the full list: `--format sarif` or `json`)."]
    if report.suppressed:
        out += ["", f"{report.suppressed} finding(s) suppressed by the baseline."]
    out += ["", "Each code: `clipbridge explain CODE`."]
    return "\n".join(out) + "\n"
