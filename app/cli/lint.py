"""The linter's side of the CLI: output formats, filters, baselines, `scan`, `lint`, `explain`, `probe`, `bundle`.
app/cli/main.py only wires arguments to these (this module never imports app.cli.main)."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import mmap
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.service.capabilities import default_help, target_forms
from app.dialects.kit.common import Mode
from app.core.errors import ClipBridgeError
from app.lint import baseline as baseline_file
from app.lint import github, junit, markdown, sarif
from app.lint.bundle import _npy, build, safe
from app.lint.filters import filter_scan
from app.lint.probe import probe
from app.lint.report import LEVELS, LintReport, apply_filters, from_scan, from_translate, target_label
from app.lint.rules import RULE_IDS, check_codes, explain, explain_text
from app.scan.report import scan, worst_status
from app.scan.rewrite import rewrite
from app.service.specs import Spec
from app.service.translate import default_targets

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
    p.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE instead of stdout")


def _report(report: LintReport, args: argparse.Namespace) -> LintReport:
    select = check_codes(args.select, "--select")
    ignore = check_codes(args.ignore, "--ignore")
    base = baseline_file.load(Path(args.baseline)) if args.baseline else None
    return apply_filters(report, select, ignore, args.fail_on, base)


def _write(text: str, args: argparse.Namespace) -> None:
    if args.output:
        Path(args.output).write_text(text)
    else:
        sys.stdout.write(text)


def render(report: LintReport, fmt: str) -> str:
    if fmt == "sarif":
        return json.dumps(sarif.render(report), indent=2, allow_nan=False) + "\n"
    if fmt == "junit":
        return junit.render(report)
    if fmt == "github":
        return github.render(report)
    return markdown.render(report)


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
        with contextlib.redirect_stdout(buf):  # the scan table prints itself (app/cli/main.py)
            table(body)
        text = buf.getvalue()
        if report.filtered:
            text += f"lint: {report.summary()}; {len(report.failing())} at or above {report.fail_on}\n"
        _write(text, args)
    else:
        _write(render(report, args.format), args)
    return report.exit_code(status_code)


def scan_output(body: dict[str, Any], args: argparse.Namespace, status_code: int,
                table: Callable[[dict[str, Any]], None]) -> int:
    return finish(from_scan(body, args.model), body, args, status_code, table)


def translate_labels(body: dict[str, Any], to: list[str] | None) -> list[str]:
    """The targets as asked (--to), else the default ones translate() used: every other dialect, newest."""
    if to:
        return list(to)
    return [t.dialect for t in default_targets(body["source"].get("dialect", ""))]


def translate_table(body: dict[str, Any], labels: list[str]) -> None:
    rows = [["target", "status", "findings"]]
    for i, t in enumerate(body["translations"]):
        codes = ", ".join(f"{f['code']} ({f['severity']})" for f in t["findings"]) or "-"
        rows.append([target_label(t["target"], labels[i] if i < len(labels) else f"target{i}"), t["status"], codes])
    widths = [max(len(r[k]) for r in rows) for k in range(2)]
    lines = [f"source: {body['meaning']['summary']}"]
    lines += ["  ".join([r[0].ljust(widths[0]), r[1].ljust(widths[1]), r[2]]).rstrip() for r in rows]
    print("\n".join(lines))


def translate_output(body: dict[str, Any], args: argparse.Namespace, status_code: int) -> int:
    labels = translate_labels(body, args.to)
    report = from_translate(body, args.spec if args.spec != "-" else "stdin", labels)
    return finish(report, body, args, status_code, lambda b: translate_table(b, labels))


def cmd_explain(args: argparse.Namespace) -> int:
    codes = list(RULE_IDS) if args.code in (None, "all") else check_codes([args.code], "code")
    if args.format == "json":
        json.dump([explain(c) for c in codes] if len(codes) > 1 else explain(codes[0]), sys.stdout, indent=2,
                  allow_nan=False)
        sys.stdout.write("\n")
    else:
        print("\n\n".join(explain_text(c) for c in codes))
    return 0


def _spec_and_semantics(args: argparse.Namespace) -> tuple[Any, dict[str, Any], list[str] | None]:
    from pydantic import TypeAdapter

    data = read_json_file(args.spec)
    if isinstance(data, dict) and "source" in data:
        data = data["source"]
    if isinstance(data, dict) and "spec" in data:
        data = data["spec"]
    return TypeAdapter(Spec).validate_python(data), data, args.semantics


def cmd_probe(args: argparse.Namespace) -> int:
    import numpy as np

    spec, _, sems = _spec_and_semantics(args)
    p = probe(spec, sems, Mode(args.mode))  # type: ignore[arg-type]
    body = {**p.to_json(), "precision": args.precision}
    if args.npy:
        out = Path(args.npy)
        out.mkdir(parents=True, exist_ok=True)
        (out / "inputs.npy").write_bytes(_npy(p.inputs))
        for s in p.semantics:
            if s.outputs is not None:
                (out / f"expected_{safe(s.label)}.npy").write_bytes(_npy(np.asarray(s.outputs)))
        (out / "probes.json").write_text(json.dumps(body, indent=2, allow_nan=False) + "\n")
        print(f"wrote {len(p.inputs)} probes to {out}/inputs.npy and expected_<semantics>.npy", file=sys.stderr)
    else:
        json.dump(body, sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
    return 1 if p.differing() else 0


def cmd_bundle(args: argparse.Namespace) -> int:
    spec, source, sems = _spec_and_semantics(args)
    data = build(spec, source, sems, Mode(args.mode), precision=args.precision)  # type: ignore[arg-type]
    Path(args.output).write_bytes(data)
    print(f"wrote {args.output} ({len(data)} bytes); unzip it and run: python run_bundle.py", file=sys.stderr)
    return 0


def _probe_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("spec", nargs="?", default="-", help="a spec as JSON (file or - for stdin)")
    p.add_argument("--semantics", action="append", metavar="DIALECT", help=f"{target_forms()}; repeatable; "
                   f"{default_help()}")
    p.add_argument("--mode", choices=["literal", "preserve"], default="literal",
                   help="how the spec becomes another dialect's op (default literal: the same numbers)")
    p.add_argument("--precision", choices=["model", "deployed"], default="model",
                   help="how run_bundle.py runs the engines: model (default) pins the inference precision to the "
                        "model's element type; deployed uses the engine's defaults on that host "
                        "(docs/host-differences.md)")


def _rewrite_status(done: list[dict], skipped: list[dict]) -> int:
    """The rewritten model's exit code, as scan's: 2 if a clip was skipped or stays unsupported, 1 drift, 0 exact."""
    after = {item["after"] for item in done}
    if skipped or "unsupported" in after:
        return 2
    return 1 if "drift" in after else 0


def cmd_scan(args: argparse.Namespace) -> int:
    path = Path(args.model)
    weights_path = Path(args.weights) if args.weights else None
    if weights_path is None and path.suffix.lower() == ".xml" and path.with_suffix(".bin").is_file():
        weights_path = path.with_suffix(".bin")
    with open(path, "rb") as f, (open(weights_path, "rb") if weights_path else open(os.devnull, "rb")) as w:
        data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if path.stat().st_size else b""
        weights = (mmap.mmap(w.fileno(), 0, access=mmap.ACCESS_READ) if weights_path.stat().st_size else b""
                   ) if weights_path else None  # an empty file cannot be mapped: it is an empty .bin
        if args.rewrite:
            if not args.rewrite_for:
                raise ClipBridgeError("--rewrite needs --for TARGET (e.g. --for directml:5_0)")
            out = rewrite(data, args.rewrite_for, args.opset)
            Path(args.rewrite).write_bytes(out.model_bytes)
            for item in out.done:
                print(f"rewrote {item['path']}/{item['node']}: bounds [{', '.join(item['bounds'])}], "
                      f"{args.rewrite_for}: {item['before']} -> {item['after']}")
            for item in out.skipped:
                print(f"skipped {item['path']}/{item['node']}: {item['reason']}")
            print(f"wrote {args.rewrite} (opset {out.opset})")
            return _rewrite_status(out.done, out.skipped)
        result = scan(data, weights, args.target, Mode(args.mode))
    return scan_output(result.to_json(), args, {"exact": 0, "drift": 1}.get(worst_status(result), 2),
                       print_scan_table)


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
    if body.get("clip_like"):
        nan = "; ".join(f"{c['node']} ({c['pattern']}): NaN -> " + ", ".join(f"{e} {r}" for e, r in c["nan_input"].items())
                        for c in body["clip_like"][:20])
        print(f"clip-like ops (not translated; `clipbridge diff` runs them): {nan}")


def print_rows(rows: list[list[str]]) -> None:
    """Rows of cells as left-aligned columns two spaces apart (the scan and dialects tables)."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip())


def cmd_lint(args: argparse.Namespace) -> int:
    """`clipbridge scan` on each model (what the pre-commit hook runs); the worst exit code."""
    worst = 0
    for path in args.models:
        ns = argparse.Namespace(**{**vars(args), "model": path, "weights": None, "rewrite": None,
                                   "rewrite_for": None, "opset": None, "baseline": None, "write_baseline": None,
                                   "output": None})
        if args.format == "table":
            print(f"== {path}")
        try:
            code = cmd_scan(ns)
        except (ClipBridgeError, OSError, ValueError) as exc:
            print(f"error: {path}: {exc}", file=sys.stderr)
            code = 2
        worst = max(worst, code)
    return worst


def add_subcommands(sub: Any) -> None:
    """explain, probe, bundle, lint."""
    lt = sub.add_parser("lint", help="scan several models (the pre-commit hook); exit code: the worst of them")
    lt.add_argument("models", nargs="+", help=".onnx files or IR .xml files (with their .bin beside them)")
    lt.add_argument("--target", "--to", dest="target", action="append", help=f"{target_forms()}; repeatable or "
                    f"comma-separated; 'default' and 'all' name groups; {default_help()}")
    lt.add_argument("--mode", choices=["preserve", "literal"], default="preserve",
                    help="preserve (default): target numbers that compute what the source computes; literal: the "
                         "source's numbers under the target's rules")
    lt.add_argument("--format", choices=["table", "github", "markdown"], default="table",
                    help="table (default), github (workflow commands), markdown (a PR comment)")
    lt.add_argument("--select", action="append", metavar="CODE", help="report only these codes (repeatable, or "
                    "comma-separated); see `clipbridge explain`")
    lt.add_argument("--ignore", action="append", metavar="CODE", help="drop these codes (repeatable, or "
                    "comma-separated)")
    lt.add_argument("--fail-on", choices=LEVELS, help="exit 1 when a finding at or above this severity remains "
                    "(default warning)")
    lt.set_defaults(func=cmd_lint)
    pr = sub.add_parser("probe", help="the inputs that matter for a spec and each dialect's expected output; "
                                      "exit 1 when the dialects disagree on one")
    _probe_args(pr)
    pr.add_argument("--npy", metavar="DIR", help="write inputs.npy and expected_<semantics>.npy to DIR")
    pr.set_defaults(func=cmd_probe)
    b = sub.add_parser("bundle", help="a repro zip: spec, ONNX model, OpenVINO IR, DxDispatch model, probes, "
                                      "expected outputs, run_bundle.py")
    _probe_args(b)
    b.add_argument("--output", "-o", default="clipbridge-bundle.zip",
                   help="the zip to write (default clipbridge-bundle.zip)")
    b.set_defaults(func=cmd_bundle)
    e = sub.add_parser("explain", help="what a finding code means, each dialect's rule and source, a witness")
    e.add_argument("code", nargs="?", help=f"a finding code, or 'all' (default); one of {', '.join(RULE_IDS)}")
    e.add_argument("--format", choices=["text", "json"], default="text",
                   help="text (default) or json (the rule catalogue entries)")
    e.set_defaults(func=cmd_explain)


def read_json_file(path: str) -> Any:
    raw = sys.stdin.read() if path == "-" else Path(path).read_text()

    def no_constants(c: str) -> Any:
        raise ClipBridgeError(f"bare {c} is not JSON; write \"nan\" or \"inf\" as strings")
    return json.loads(raw, parse_constant=no_constants)
