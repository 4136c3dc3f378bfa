"""The CLI's output of scan and translate: the lint formats (table, json, SARIF, JUnit, GitHub, Markdown), the
filters and baselines, and the tables. Imported by app/clipbridge/cli/lint.py and app/clipbridge/cli/main.py."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

from clipbridge.cli.vocabulary import add_output
from clipbridge.lint import baseline as baseline_file
from clipbridge.lint.filters import filter_scan
from clipbridge.lint.report import LEVELS, LintReport, apply_filters, from_scan, from_translate, target_label
from clipbridge.lint.rules import check_codes
from clipbridge.lint.view import suites, view
from clipbridge.reports import formats as report_formats
from clipbridge.reports import junit, sarif
from clipbridge.service.translate import default_targets

FORMATS = ("table", "json", "sarif", "junit", "github", "markdown")


def add_lint_options(p: argparse.ArgumentParser, default_format: str) -> None:
    """--format and the filters, shared by scan and translate."""
    p.add_argument("--format", choices=FORMATS, default=default_format,
                   help="table, json (the HTTP body), sarif (2.1.0), junit (XML), github (workflow commands), "
                        f"markdown (a PR comment); default {default_format}")
    p.add_argument("--select", action="append", metavar="CODE", help="report only these codes (repeatable, or "
                   "comma-separated); see `clipbridge explain`")
    p.add_argument("--ignore", action="append", metavar="CODE", help="drop these codes (repeatable, or "
                   "comma-separated)")
    p.add_argument("--fail-on", choices=LEVELS, help="exit 1 when a finding at or above this severity remains "
                   "(default warning once any lint option is given); without lint options: 0 exact, 1 drift, "
                   "2 unsupported")
    p.add_argument("--baseline", metavar="FILE", help="findings in this file do not fail the run; new ones do")
    p.add_argument("--write-baseline", metavar="FILE", help="write every current finding to FILE (exit 0)")
    add_output(p, "write the report to FILE instead of stdout", metavar="FILE")


def _report(report: LintReport, args: argparse.Namespace) -> LintReport:
    select = check_codes(args.select, "--select")
    ignore = check_codes(args.ignore, "--ignore")
    base = baseline_file.load(Path(args.baseline)) if getattr(args, "baseline", None) else None
    return apply_filters(report, select, ignore, args.fail_on, base)


def _write(text: str, args: argparse.Namespace) -> None:
    if args.output:
        Path(args.output).write_text(text)
    else:
        sys.stdout.write(text)


def render(report: LintReport, fmt: str) -> str:
    """A CI format, by its one writer (clipbridge.reports) from the report's findings view."""
    return report_formats.render(view(report), fmt)


def finish(report: LintReport, body: dict[str, Any], args: argparse.Namespace, status_code: int,
           table: Callable[[dict[str, Any]], None]) -> int:
    """Filter, write a baseline if asked, render in the chosen format; the exit code."""
    report = _report(report, args)
    if args.write_baseline:
        n = baseline_file.write(report, Path(args.write_baseline))
        print(f"wrote {n} finding(s) to {args.write_baseline}", file=sys.stderr)
        return 0
    if report.kind == "scan" and args.format in ("json", "table"):
        body = filter_scan(body, check_codes(args.select, "--select"), check_codes(args.ignore, "--ignore"))
    if args.format == "json":
        _write(json.dumps(body, indent=2, allow_nan=False) + "\n", args)
    elif args.format == "table":
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):  # the scan table prints itself (print_scan_table)
            table(body)
        text = buf.getvalue()
        if report.filtered:
            text += f"lint: {report.summary()}; {len(report.failing())} at or above {report.fail_on}\n"
        _write(text, args)
    else:
        _write(render(report, args.format), args)
    return report.exit_code(status_code)


def lint_output(done: list[tuple[str, dict[str, Any], int]], args: argparse.Namespace) -> int:
    """`clipbridge lint` in a one-report format: every model's scan as one document (SARIF: a run per model;
    JUnit: each model's testsuites; JSON: a list of the scan bodies, each with its `file`); the worst exit code."""
    reports = [_report(from_scan(body, path), args) for path, body, _ in done]
    code = max((r.exit_code(status) for r, (_, _, status) in zip(reports, done)), default=0)
    if args.format == "json":
        bodies = [{"file": path, **filter_scan(body, check_codes(args.select, "--select"),
                                                check_codes(args.ignore, "--ignore"))} for path, body, _ in done]
        _write(json.dumps(bodies, indent=2, allow_nan=False) + "\n", args)
    elif args.format == "sarif":
        _write(sarif.render([view(r) for r in reports]), args)
    elif args.format == "junit":  # each model's testsuites, named `model: target`
        _write(junit.render("clipbridge lint", [s for r in reports for s in suites(r, f"{r.artifact}: ")]), args)
    else:
        _write("".join(render(r, args.format) for r in reports), args)
    return code


def scan_output(body: dict[str, Any], args: argparse.Namespace, status_code: int,
                table: Callable[[dict[str, Any]], None]) -> int:
    return finish(from_scan(body, args.model), body, args, status_code, table)


def translate_labels(body: dict[str, Any], to: list[str] | None) -> list[str]:
    """The targets as asked (--target), else the default ones translate() used: every other dialect, newest."""
    if to:
        return list(to)
    return [t.dialect for t in default_targets(body["source"].get("dialect", ""))]


def _witness_text(w: dict[str, Any] | None) -> str:
    if not w:
        return ""
    under = f" (under {w['reading']})" if w.get("reading") else ""
    return f"; witness: input {w['input']} -> source {w['source_output']}, target {w['target_output']}{under}"


def translate_table(body: dict[str, Any], labels: list[str]) -> None:
    """A row per finding (target, status, code and severity, message and witness), wrapped to TABLE_WIDTH."""
    rows = [["target", "status", "finding", "message and witness"]]
    for i, t in enumerate(body["translations"]):
        label = target_label(t["target"], labels[i] if i < len(labels) else f"target{i}")
        for k, f in enumerate(t["findings"] or [None]):
            head = [label, t["status"]] if k == 0 else ["", ""]
            rows.append(head + (["-", ""] if f is None else
                                [f"{f['code']} ({f['severity']})", f["message"] + _witness_text(f["witness"])]))
    print(f"source: {body['meaning']['summary']}")
    print_wrapped(rows)


def translate_output(body: dict[str, Any], args: argparse.Namespace, status_code: int) -> int:
    labels = translate_labels(body, args.target)
    report = from_translate(body, args.spec if args.spec != "-" else "stdin", labels)
    return finish(report, body, args, status_code, lambda b: translate_table(b, labels))


def print_scan_table(body: dict) -> None:
    labels = [t["label"] for t in body["targets"]]
    rows = [["#", "clip", "pattern", "dtype", *labels]]
    for c in body["clips"]:
        where = f"{c['path']}/{c['node']}"
        cells = [t["status"] for t in c["translations"]] or [f"error: {c['error']}"[:60]] + [""] * (len(labels) - 1)
        rows.append([str(c["id"]), where, c["pattern"], c["dtype"] or "?", *cells])
    print_rows(rows)
    s = body["summary"]
    counts = "; ".join(f"{t['label']}: {t['exact']} exact, {t['drift']} drift, {t['unsupported']} unsupported"
                       for t in s["targets"])
    print(f"\n{s['clips']} clips ({s['unresolved']} unresolved). {counts}")
    if s["worst"]:
        w = s["worst"]
        print(f"worst: [{w['severity']}] {w['code']} at clip {w['clip']} ({w['label']}): {w['message']}")
    for line in clip_like_lines(body.get("clip_like") or []):
        print(line)


CLIP_LIKE_SHOWN = 20  # clip-like ops listed in the text table; the rest are counted (JSON lists every one)


def clip_like_lines(clip_like: list[dict], shown: int = CLIP_LIKE_SHOWN) -> list[str]:
    """The clip-like ops, one line each, the first `shown` of them and then how many more (issue 47: one long line
    that silently listed 20 of 42)."""
    if not clip_like:
        return []
    lines = [f"clip-like ops: {len(clip_like)} (not translated; `clipbridge diff` runs them)"]
    lines += [f"  {c['node']} ({c['pattern']}): NaN -> " + ", ".join(f"{e} {r}" for e, r in c["nan_input"].items())
              for c in clip_like[:shown]]
    if len(clip_like) > shown:
        lines.append(f"  and {len(clip_like) - shown} more (`--format json` lists every one)")
    return lines


TABLE_WIDTH = 100  # a terminal's columns the wrapped tables fit (`dialects`, `translate --format table`)


def print_wrapped(rows: list[list[str]], width: int = TABLE_WIDTH) -> None:
    """Rows of cells as columns two spaces apart that fit `width`: the widest columns shrink (never below
    MIN_COLUMN) and their cells wrap onto continuation lines."""
    columns = range(len(rows[0]))
    words = [max((len(w) for r in rows for w in r[i].split()), default=1) for i in columns]  # never split a word
    widths = _fit([max(len(r[i]) for r in rows) for i in columns], width - 2 * (len(rows[0]) - 1), words)
    for r in rows:
        cells = [textwrap.wrap(c, w, break_on_hyphens=False) or [""] for c, w in zip(r, widths)]
        for n in range(max(len(c) for c in cells)):
            print("  ".join((c[n] if n < len(c) else "").ljust(w) for c, w in zip(cells, widths)).rstrip())


MIN_COLUMN = 8


def _trim(widths: list[int], room: int, least: list[int]) -> list[int]:
    """Take columns above their least width down one at a time, widest first, until the row fits `room`."""
    widths = list(widths)
    while sum(widths) > room:
        over = [i for i, (w, m) in enumerate(zip(widths, least)) if w > max(m, MIN_COLUMN)]
        if not over:
            break  # a single word wider than the room: let it overflow rather than split it
        widest = max(over, key=lambda i: widths[i])
        widths[widest] -= 1
    return widths


def _fit(natural: list[int], room: int, least: list[int]) -> list[int]:
    """Column widths within `room`: a column narrower than an equal share keeps its width; the wider ones share
    what is left in proportion to their own widths (so the long text columns wrap, the short ones never), and
    never below `least` (their longest word)."""
    keep = [w <= room // len(natural) for w in natural]
    while True:
        left = room - sum(w for w, k in zip(natural, keep) if k)
        wide = sum(w for w, k in zip(natural, keep) if not k)
        if wide <= left:
            return list(natural)
        share = [w if k else max(MIN_COLUMN, m, w * left // wide) for w, k, m in zip(natural, keep, least)]
        grown = [not k and s >= w for w, k, s in zip(natural, keep, share)]
        if not any(grown):
            return _trim(share, room, least)
        keep = [k or g for k, g in zip(keep, grown)]


def print_rows(rows: list[list[str]]) -> None:
    """Rows of cells as left-aligned columns two spaces apart (the scan and dialects tables)."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip())
