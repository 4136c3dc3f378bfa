"""`clipbridge fix MODEL --engine A --engine B --output OUT.onnx`: write OUT.onnx for B to compute what the model
computes on A, print the fix and its proof in --format (to --report FILE, or stdout); exit 0 when the proof is
equal, 1 when not, 2 on error. `--engine A --engine A@f16` writes the float16 model with the smallest repair of
its overflow (docs/diff.md, Precision trace). `clipbridge diff --fix OUT.onnx` is its older spelling.

A model with external data is read weightless (issue 46: its weights stay in their files, past 2 GB too), and
OUT.onnx is written with its weights as external data beside it: each data file the fixed model names is copied
into OUT's folder by streaming, under its location, unless OUT's folder is the model's own (then the same files
are named, nothing is copied); a different file of that name there is refused, exit 2 naming --output, never
overwritten (clipbridge.scan.external_out). A model with every tensor inside is written as one file, as before."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from clipbridge.cli import model_options as o
from clipbridge.core.errors import ClipBridgeError
from clipbridge.diff import engines as diff_engines
from clipbridge.diff import run
from clipbridge.diff.trace import SUFFIX
from clipbridge.fix import formats
from clipbridge.fix.facts import ENGINES as FIX_ENGINES  # the engines whose facts the rules know
from clipbridge.fix.service import fix
from clipbridge.scan.external import embedded_from_file, weightless
from clipbridge.scan.external_out import plan, write_model
from clipbridge.engines import quiet


def add_subcommand(sub: Any) -> None:
    f = sub.add_parser("fix", help="write the model so that engine B computes what engine A computes, and prove it; "
                                   "exit 0 the proof is equal, 1 it is not, 2 error")
    o.add_model(f)
    o.add_engine(f, f"exactly two of {', '.join(FIX_ENGINES)}: A (the reference) then B (the target; B@f16: "
                    "the float16 model with its overflow repaired)")
    o.add_output(f, "the fixed model to write", required=True, metavar="OUT.onnx")
    o.add_inputs(f)
    o.add_precision(f)
    o.add_format(f, formats.FORMATS, "/v1/models/fix")
    f.add_argument("--report", metavar="FILE", help="write the report (in --format) here instead of stdout")
    f.set_defaults(func=cmd_fix)


def cmd_fix(args: argparse.Namespace) -> int:
    return run_fix(args, o.engines(args.engine), model_out=args.output, report_out=args.report)


def run_fix(args: argparse.Namespace, engines: tuple[str, ...], model_out: str, report_out: str | None) -> int:
    """The fix, for `clipbridge fix` and the older `clipbridge diff --fix OUT.onnx` (whose --output was the report)."""
    if len(engines) != 2:
        raise ClipBridgeError("fix needs exactly two engines: --engine A (the reference) --engine B (the target)",
                              "--engine")
    # the install command first, before the model is read (B@f16 runs on B)
    diff_engines.require([e.removesuffix(SUFFIX) for e in engines], "--engine")
    # The weights stay in their files (an OnDisk model, issue 46), except for B@f16: the precision trace writes a
    # float16 copy of every weight, so it reads them in (as `clipbridge trace` does).
    model = (embedded_from_file if engines[1].endswith(SUFFIX) else weightless)(args.model)
    plan(model, model_out)  # a data file OUT's folder cannot take is refused now, not after the fix has run
    npz = Path(args.inputs).read_bytes() if args.inputs else None
    # The CLI runs the engines in its own process: the model is the caller's own file.
    with quiet.to_log("fix"):  # the engines' own lines go to the log (clipbridge -v), not the terminal
        fixed = fix(model, npz, engines[0], engines[1], args.precision, execute=run.direct)
    write_model(fixed.model, model_out)  # external weights: beside OUT, as beside the model (external_out)
    body = {**fixed.body, "model": {**fixed.body["model"], "path": str(model_out)}}
    o.write_report(formats.render(body, args.format, Path(args.model).name), report_out)
    return 0 if body["verdict"] == "equal" else 1
