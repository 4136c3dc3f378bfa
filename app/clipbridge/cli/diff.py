"""`clipbridge diff MODEL` (exit 0 equal, 1 the engines differ, 2 an error) and `clipbridge trace MODEL`, the
precision trace (exit 0 the float16 run equals the float32 one, 1 it differs, 2 an error).

Until 0.2.0 `diff` still reads its old spellings, each noting the new one on stderr: `--fix OUT.onnx` (now
`clipbridge fix`), `--chain STAGES [--static]` (now `clipbridge chain`) and an `ENGINE@f16` engine (now
`clipbridge trace`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from clipbridge.cli import chain as chain_cli
from clipbridge.cli import deprecated
from clipbridge.cli import fix as fix_cli
from clipbridge.cli import model_options as o
from clipbridge.core.errors import ClipBridgeError
from clipbridge.diff import bundle, engines, formats, report, run, trace
from clipbridge.scan.external import embedded_from_file
from clipbridge.engines import quiet

TRACE_ENGINES = ", ".join(run.ENGINE_NAMES)


def _shared(p: argparse.ArgumentParser, body: str) -> None:
    """What diff and trace both take: inputs, precision, tolerances, seed, the report and its side files."""
    o.add_inputs(p)
    o.add_precision(p)
    p.add_argument("--rtol", type=float, help="relative tolerance (default: per dtype, docs/diff.md)")
    p.add_argument("--atol", type=float, help="absolute tolerance (default: per dtype, docs/diff.md)")
    o.add_seed(p)
    o.add_format(p, formats.FORMATS, body)
    o.add_output(p, "write the report here instead of stdout")
    p.add_argument("--node-data", metavar="OUT.json", help="write Model Explorer node data (differing elements per "
                                                           "node); the cause layer goes to OUT.causes.json")
    p.add_argument("--bundle", metavar="OUT.zip", help="write a zip that reproduces each introduced difference "
                                                       "(run_bundle.py)")


def add_subcommand(sub: Any) -> None:
    d = sub.add_parser("diff", help="run an ONNX model on real engines and explain every difference by its clip; "
                                    "exit 0 equal, 1 differs, 2 error")
    o.add_model(d)
    o.add_engine(d, f"{', '.join(run.ENGINE_NAMES)} (default: {', '.join(run.DEFAULT_ENGINES)}); the first is "
                    "the reference")
    _shared(d, "/v1/models/diff")
    d.add_argument("--fix", action=deprecated.OldSpelling, metavar="OUT.onnx",
                   new="`clipbridge fix MODEL --engine A --engine B --output OUT.onnx`")
    d.add_argument("--chain", action=deprecated.OldSpelling, metavar="STAGES",
                   new="`clipbridge chain MODEL STAGES`")
    d.add_argument("--static", action=deprecated.OldSpelling, nargs=0, default=False, new=None)  # of --chain
    d.set_defaults(func=cmd_diff)
    t = sub.add_parser("trace", help="where float16 first overflows, and what produced it: the model in float32 "
                                     "against a float16 copy; exit 0 equal, 1 differs, 2 error",
                       description="The precision trace (docs/diff.md): the first engine runs the model as it is, "
                                   "the second (the same one when only one is named) a float16 copy of it.")
    o.add_model(t)
    o.add_engine(t, f"one or two of {TRACE_ENGINES}: the first runs the model in float32, the second (default: "
                    f"the first) its float16 copy (default: {run.DEFAULT_ENGINES[0]})")
    _shared(t, "/v1/models/diff (method precision-trace)")
    t.set_defaults(func=cmd_trace)


def trace_engines(items: list[str] | None) -> tuple[str, str]:
    """`clipbridge trace`'s --engine: (the float32 engine, the engine of the float16 copy, marked @f16)."""
    names = o.engines(items, (run.DEFAULT_ENGINES[0],))
    if len(names) > 2 or any(n.endswith(trace.SUFFIX) for n in names):
        raise ClipBridgeError(f"trace takes one or two engines, without {trace.SUFFIX}: --engine A (float32 and "
                              "float16) or --engine A,B (A float32, B float16)", "--engine")
    return names[0], names[-1] + trace.SUFFIX


def cmd_trace(args: argparse.Namespace) -> int:
    return _run(args, trace_engines(args.engine))


def cmd_diff(args: argparse.Namespace) -> int:
    if args.chain:
        return chain_cli.cmd_chain(args)
    if args.static:
        raise ClipBridgeError("--static reads a converter chain's lowering: use `clipbridge chain MODEL STAGES "
                              "--static`", "--static")
    names = o.engines(args.engine)
    if args.fix:
        return fix_cli.run_fix(args, names, model_out=args.fix, report_out=args.output)
    if trace.is_trace(names):
        deprecated.note(args, "`clipbridge diff --engine ENGINE@f16`", "`clipbridge trace MODEL --engine ENGINE`")
    return _run(args, names)


def _run(args: argparse.Namespace, names: tuple[str, ...]) -> int:
    # the install command first, before the model is read (the engine of a float16 copy is an engine too)
    engines.require([n.removesuffix(trace.SUFFIX) for n in names], "--engine")
    model = embedded_from_file(args.model)  # external data next to the model is read, as onnx.load does
    npz = Path(args.inputs).read_bytes() if args.inputs else None
    opts = run.Options(names, args.precision, args.rtol, args.atol, args.seed)
    # The CLI runs the engines in its own process: the model is the caller's own file.
    with quiet.to_log("diff"):  # the engines' own lines go to the log (clipbridge -v), not the terminal
        body, runs = report.diff(run.direct, model, npz, opts)
    o.write_report(formats.render(body, args.format, Path(args.model).name), args.output)
    if args.node_data:
        path = Path(args.node_data)
        path.write_text(json.dumps(formats.node_data(body), indent=2))
        path.with_suffix(".causes.json").write_text(json.dumps(formats.cause_layer(body), indent=2))
    if args.bundle:
        Path(args.bundle).write_bytes(bundle.build(body, runs, opts.precision))
    return 0 if body["verdict"] == "equal" else 1
