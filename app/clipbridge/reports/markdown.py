"""Markdown (a pull-request comment, a step summary, summary.md): headings, paragraphs, tables and callouts, every
text escaped for a table cell. The only module that writes Markdown."""

from __future__ import annotations

from clipbridge.reports.view import Block, Code, Heading, Inline, Paragraph, Quote, Strong


def cell(text: object) -> str:
    """Table-cell safe: pipes escaped, newlines flattened, backticks kept out of code spans' way."""
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def inline(x: Inline) -> str:
    if isinstance(x, Code):
        return f"`{cell(x.text)}`"
    if isinstance(x, Strong):
        return f"**{cell(x.text)}**"
    if isinstance(x, tuple):
        return "".join(inline(p) for p in x)
    return cell(x)


def _row(cells: tuple[Inline, ...]) -> str:
    return "| " + " | ".join(inline(c) for c in cells) + " |"


def _block(b: Block) -> list[str]:
    if isinstance(b, Heading):
        return ["#" * b.level + " " + inline(b.text)]
    if isinstance(b, Paragraph):
        return [inline(line) for line in b.lines]
    if isinstance(b, Quote):
        return [f"> **{b.label}:** {cell(line)}" for line in b.lines]
    return [_row(b.header), "|" + "---|" * len(b.header), *(_row(r) for r in b.rows)]


def render(blocks: list[Block]) -> str:
    """The blocks in order, a blank line between two."""
    out: list[str] = []
    for b in blocks:
        out += ([""] if out else []) + _block(b)
    return "\n".join(out) + "\n"
