"""The linter's commands of the CLI: `scan`, `lint`, `explain`, `probe`, `bundle` (their output: app/clipbridge/cli/output.py).
app/clipbridge/cli/main.py only wires arguments to these (this module never imports clipbridge.cli.main)."""

from __future__ import annotations

import argparse
import json
import mmap
import os
import sys
from pathlib import Path
from typing import Any

from clipbridge.cli import deprecated
from clipbridge.cli.output import FORMATS, lint_output, print_scan_table, scan_output
from clipbridge.cli.vocabulary import add_mode, add_output, add_target, expand_targets
from clipbridge.core.errors import ClipBridgeError
from clipbridge.dialects.kit.common import Mode
from clipbridge.lint.bundle import _npy, build, safe
from clipbridge.lint.probe import probe
from clipbridge.lint.report import LEVELS
from clipbridge.lint.rules import RULE_IDS, check_codes, explain, explain_text
from clipbridge.scan.report import scan, worst_status
from clipbridge.scan.rewrite import rewrite
from clipbridge.service.specs import Spec


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
        deprecated.note(args, 'a body\'s "source"', '"spec"')
        data = data["source"]
    if isinstance(data, dict) and "spec" in data:
        data = data["spec"]
    spec = TypeAdapter(Spec).validate_python(data)
    return spec, data, expand_targets(args.target, spec.dialect)


def cmd_probe(args: argparse.Namespace) -> int:
    import numpy as np

    spec, _, sems = _spec_and_semantics(args)
    p = probe(spec, sems, Mode(args.mode))  # type: ignore[arg-type]
    body = {**p.to_json(), "precision": args.precision}
    if args.output:
        out = Path(args.output)
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
    add_target(p, "whose rules give the expected outputs")
    add_mode(p)
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


def _open_model(args: argparse.Namespace) -> Any:
    """The model (and the IR's weights) mapped read-only; the .bin beside an .xml is found."""
    path = Path(args.model)
    weights_path = Path(args.weights) if args.weights else None
    if weights_path is None and path.suffix.lower() == ".xml" and path.with_suffix(".bin").is_file():
        weights_path = path.with_suffix(".bin")
    return path, weights_path


def _scan_body(args: argparse.Namespace) -> tuple[dict[str, Any], int]:
    """The scan's body and its status exit code (0 all exact, 1 drift, 2 unsupported)."""
    path, weights_path = _open_model(args)
    with open(path, "rb") as f, (open(weights_path, "rb") if weights_path else open(os.devnull, "rb")) as w:
        data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if path.stat().st_size else b""
        weights = (mmap.mmap(w.fileno(), 0, access=mmap.ACCESS_READ) if weights_path.stat().st_size else b""
                   ) if weights_path else None  # an empty file cannot be mapped: it is an empty .bin
        result = scan(data, weights, args.target, Mode(args.mode))
    return result.to_json(), {"exact": 0, "drift": 1}.get(worst_status(result), 2)


def _rewrite_target(args: argparse.Namespace) -> str:
    """The one target a rewrite is checked against: --target (or the older --for)."""
    items = expand_targets(args.target, "") or []
    if args.rewrite_for:
        items = [args.rewrite_for, *items]
    if len(items) != 1:
        raise ClipBridgeError(f"--rewrite needs exactly one --target (e.g. --target directml:5_0), not "
                              f"{len(items)}{': ' + ', '.join(items) if items else ''}", "--target")
    return items[0]


def _rewrite(args: argparse.Namespace) -> int:
    args.rewrite_for = _rewrite_target(args)
    out = rewrite(Path(args.model).read_bytes(), args.rewrite_for, args.opset)
    Path(args.rewrite).write_bytes(out.model_bytes)
    for item in out.done:
        print(f"rewrote {item['path']}/{item['node']}: bounds [{', '.join(item['bounds'])}], "
              f"{args.rewrite_for}: {item['before']} -> {item['after']}")
    for item in out.skipped:
        print(f"skipped {item['path']}/{item['node']}: {item['reason']}")
    print(f"wrote {args.rewrite} (opset {out.opset})")
    return _rewrite_status(out.done, out.skipped)


def cmd_scan(args: argparse.Namespace) -> int:
    if args.rewrite:
        return _rewrite(args)
    body, status = _scan_body(args)
    return scan_output(body, args, status, print_scan_table)


def cmd_lint(args: argparse.Namespace) -> int:
    """`clipbridge scan` on each model (what the pre-commit hook runs), in every format scan has; the worst exit
    code. The table prints each model's; the other formats are one report over every model."""
    worst, done = 0, []  # done: (model, scan body, status code) for the one-report formats
    for path in args.models:
        ns = argparse.Namespace(**{**vars(args), "model": path, "weights": None, "rewrite": None,
                                   "rewrite_for": None, "opset": None, "baseline": None, "write_baseline": None,
                                   "output": None})
        try:
            if args.format == "table":
                print(f"== {path}")
                code = cmd_scan(ns)
            else:
                body, status = _scan_body(ns)
                done.append((path, body, status))
                code = 0  # counted below, once the filters are applied
        except (ClipBridgeError, OSError, ValueError) as exc:
            print(f"error: {path}: {exc}", file=sys.stderr)
            code = 2
        worst = max(worst, code)
    if args.format != "table":
        worst = max(worst, lint_output(done, args))
    return worst


def add_subcommands(sub: Any) -> None:
    """explain, probe, bundle, lint."""
    lt = sub.add_parser("lint", help="scan several models (the pre-commit hook); exit code: the worst of them")
    lt.add_argument("models", nargs="+", help=".onnx files or IR .xml files (with their .bin beside them)")
    add_target(lt, "a column")
    add_mode(lt)
    lt.add_argument("--format", choices=FORMATS, default="table",
                    help="every format scan has: table (default), json (a list of the scan bodies, each with its "
                         "`file`), sarif (2.1.0, a run per model), junit (a testsuite per model x target), github, "
                         "markdown")
    add_output(lt, "write the report to FILE instead of stdout", metavar="FILE")
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
    add_output(pr, "write inputs.npy, expected_<semantics>.npy and probes.json to DIR instead of the JSON to stdout",
               old=("--npy",), metavar="DIR")
    pr.set_defaults(func=cmd_probe)
    b = sub.add_parser("bundle", help="a repro zip: spec, ONNX model, OpenVINO IR, DxDispatch model, probes, "
                                      "expected outputs, run_bundle.py")
    _probe_args(b)
    add_output(b, "the zip to write (default clipbridge-bundle.zip)", default="clipbridge-bundle.zip",
               metavar="FILE")
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
