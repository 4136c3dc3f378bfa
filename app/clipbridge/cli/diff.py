"""`clipbridge diff MODEL` (exit 0 every output agrees, 1 the outputs differ or a --fail-on part fails, 2 an error)
and `clipbridge trace MODEL`, the precision trace (the same diff: the model in float32 against a float16 copy).

Until 0.2.0 `diff` still reads its old spellings, each noting the new one on stderr: `--fix OUT.onnx` (now
`clipbridge fix`), `--chain STAGES [--static]` (now `clipbridge chain`) and an `ENGINE@f16` engine (now
`clipbridge trace`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from clipbridge.cli import chain as chain_cli
from clipbridge.cli import deprecated
from clipbridge.cli import diff_sides
from clipbridge.cli import fix as fix_cli
from clipbridge.cli import model_options as o
from clipbridge.core.errors import ClipBridgeError
from clipbridge.diff import bundle, engines, formats, passes, probe, report, run, samples, sets, shapes, sides
from clipbridge.diff import tolerance, trace
from clipbridge.engines import quiet
from clipbridge.scan.external import embedded_from_file, weightless

TRACE_ENGINES = ", ".join(run.ENGINE_NAMES)


def _shared(p: argparse.ArgumentParser, body: str) -> None:
    """What diff and trace both take: inputs (one, several or a folder), precision, tolerances, shapes, the seed,
    the edge probe, what fails the run, the report and its side files."""
    p.add_argument("--inputs", metavar="IN.npz", nargs="+",
                   help="the inputs, keyed by graph input name: one .npz, several, or a folder of them, each one "
                        "sample (default: an ordinary generated sample, seeded)")
    p.add_argument("--classes", type=int, metavar="AXIS", help="with an input set: the class axis of the outputs, "
                   "for top-1 and top-5 agreement in the statistics")
    o.add_precision(p)
    p.add_argument("--rtol", type=float, help="relative tolerance (default: per dtype, docs/diff.md)")
    p.add_argument("--atol", type=float, help="absolute tolerance (default: per dtype, docs/diff.md)")
    p.add_argument("--tolerance", action="append", metavar="NAME=RTOL,ATOL",
                   help="repeatable: the tolerance of output NAME (* for every output), over the per-dtype default "
                        "(docs/diff.md); the report names the tolerance each output was compared with")
    p.add_argument("--shape", action="append", metavar="INPUT=DIMS",
                   help="repeatable: generate INPUT at this shape, e.g. image=8x3x224x224 (symbolic dimensions "
                        "take the value given, fixed ones must match; default: 1 for each symbolic dimension)")
    o.add_seed(p)
    p.add_argument("--probe", choices=probe.PROBES, default="edge",
                   help="edge (default): a second pass on generated NaN, +-inf, float16's 65504 and each clip's "
                        "bounds, reported as its own `edge` section; off: the ordinary pass only")
    p.add_argument("--fail-on", action="append", metavar="masked|edge", default=None,
                   help="repeatable or comma-separated: also exit 1 when a difference is masked inside the model "
                        "(masked) or the edge probe differs (edge); by default only the outputs decide")
    o.add_format(p, formats.FORMATS, body)
    o.add_output(p, "write the report here instead of stdout")
    p.add_argument("--node-data", metavar="OUT.json", help="write Model Explorer node data (differing elements per "
                                                           "node); the cause layer goes to OUT.causes.json")
    p.add_argument("--bundle", metavar="OUT.zip", help="write a zip that reproduces each introduced difference "
                                                       "(run_bundle.py)")


def add_subcommand(sub: Any) -> None:
    d = sub.add_parser("diff", help="run an ONNX model on real engines and explain every difference by its clip; "
                                    "exit 0 the outputs agree, 1 they differ, 2 error")
    o.add_model(d)
    d.add_argument("side", nargs="?", metavar="MODEL@ENGINE",
                   help="a diff of two sides: MODEL and this both as MODEL@ENGINE (model.onnx@onnxruntime "
                        "rewritten.onnx@openvino), each engine running its own model; the first is the reference")
    o.add_engine(d, f"{', '.join(run.ENGINE_NAMES)} (default: {', '.join(run.DEFAULT_ENGINES)}); the first is "
                    "the reference")
    _shared(d, "/v1/models/diff")
    d.add_argument("--memory", metavar="SIZE", type=str, default=None,
                   help="the most captured tensors the diff holds at once, e.g. 2GiB or 512MiB (default: a quarter "
                        "of this machine's memory); past it the diff captures in passes, the report says how many")
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
    _one_input(args)
    return _run(args, trace_engines(args.engine))


def _listed(items: list[str] | None) -> tuple[str, ...]:
    """A repeatable option that also takes comma lists, flattened."""
    return tuple(p.strip() for item in items or [] for p in item.split(",") if p.strip())


def _one_input(args: argparse.Namespace) -> None:
    """--inputs as one path where it names one .npz file (what the older --fix and --chain read); several, or a
    folder, is an input set, which only the diff itself takes."""
    items = args.inputs or []
    if len(items) == 1 and not Path(items[0]).is_dir():
        args.inputs = items[0]
    elif items and (getattr(args, "fix", None) or getattr(args, "chain", None)):
        raise ClipBridgeError("--fix and --chain take one .npz", "--inputs")


def cmd_diff(args: argparse.Namespace) -> int:
    _one_input(args)
    if diff_sides.named(args):  # `diff A.onnx@ENGINE B.onnx@ENGINE`: each engine runs its own model
        return _run_sides(args)
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
    # External data stays in its files: the engines read it there (the precision trace writes a float16 copy of
    # every weight, so it reads them in, as onnx.load does)
    model = (embedded_from_file if trace.is_trace(names) else weightless)(args.model)
    npzs = samples.files([args.inputs] if isinstance(args.inputs, str) else args.inputs or [])
    npz = npzs[0][1] if len(npzs) == 1 else None
    opts = _options(args, names)
    # The CLI runs the engines in its own process: the model is the caller's own file.
    with quiet.to_log("diff"):  # the engines' own lines go to the log (clipbridge -v), not the terminal
        body, runs = _diff(opts, model, npz, args.format, npzs if len(npzs) > 1 else None, args.classes)
    return _finish(args, body, runs, opts, Path(args.model).name)


def _options(args: argparse.Namespace, names: tuple[str, ...]) -> run.Options:
    opts = run.Options(names, args.precision, args.rtol, args.atol, args.seed,
                       probe=args.probe, fail_on=_listed(args.fail_on),
                       tolerances=tolerance.parse(args.tolerance, "--tolerance"),
                       shapes=shapes.parse(args.shape, "--shape"),
                       memory=_memory(args))
    opts.check("--")
    return opts


def _finish(args: argparse.Namespace, body: dict, runs: Any, opts: run.Options, title: str) -> int:
    """The report and its side files; the exit code."""
    o.write_report(formats.render(body, args.format, title), args.output)
    if args.node_data:
        path = Path(args.node_data)
        path.write_text(json.dumps(formats.node_data(body), indent=2))
        path.with_suffix(".causes.json").write_text(json.dumps(formats.cause_layer(body), indent=2))
    if args.bundle:
        Path(args.bundle).write_bytes(bundle.build(body, runs, opts.precision))
    return 1 if body["fails"] else 0


def _run_sides(args: argparse.Namespace) -> int:
    """`diff A.onnx@ENGINE B.onnx@ENGINE` (clipbridge.cli.diff_sides): each engine runs its own model; the report
    says which tensors only one side has (`sides`, clipbridge.diff.sides)."""
    pairs = diff_sides.parse(args)
    engines.require([e for _, e in pairs], diff_sides.LOC)
    models = diff_sides.read(pairs, weightless)
    npzs = samples.files([args.inputs] if isinstance(args.inputs, str) else [])
    opts = _options(args, tuple(e for _, e in pairs))
    given = [sides.Side(m, e, opts.precision) for m, (_, e) in zip(models, pairs)]
    with quiet.to_log("diff"):
        unmatched = diff_sides.unmatched(pairs, models)
        body, runs = _diff(opts, given, npzs[0][1] if npzs else None, args.format)
    body["sides"] = diff_sides.section(pairs, unmatched)
    return _finish(args, body, runs, opts, " against ".join(f"{p.name}@{e}" for p, e in pairs))


def _memory(args: argparse.Namespace) -> int | None:
    """--memory in bytes, or the default budget (a quarter of this machine), given explicitly so that the largest
    tensor follows it too (run.Options.tensor_limit); the precision trace captures no regions."""
    value = getattr(args, "memory", None)
    return passes.default_budget() if value is None else passes.parse_size(value, "--memory")


def _diff(opts: run.Options, model: bytes | list[sides.Side], npz: bytes | None, fmt: str,
          npzs: list[tuple[str, bytes]] | None = None, classes: int | None = None) -> tuple[dict, Any]:
    """report.diff, where a fault of clipbridge's own is an error (exit 2, with a JSON body under --format json),
    never a traceback with exit 1, which reads as "the engines differ" (issue 44)."""
    try:
        if npzs:  # an input set: sessions once, the statistics, the walk on the first differing sample
            return sets.diff(run.direct, model, npzs, opts, classes)
        if isinstance(model, list):  # explicit sides (clipbridge.cli.diff_sides)
            return report.diff_sides(run.direct, model, npz, opts)
        return report.diff(run.direct, model, npz, opts)
    except (ClipBridgeError, OSError, ValueError, KeyboardInterrupt):
        raise
    except Exception as exc:  # the cause rules, the walk: ours, not the model's
        message = f"the diff failed: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
        if fmt == "json":
            sys.stdout.write(json.dumps({"verdict": "error", "error": {"message": message, "loc": None}}) + "\n")
        raise ClipBridgeError(message) from exc
