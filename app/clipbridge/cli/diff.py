"""`clipbridge diff MODEL`: exit 0 equal, 1 the engines differ, 2 an error."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from clipbridge.diff import bundle, engines, formats, probe, report, run, samples, sets, shapes, tolerance
from clipbridge.core.errors import ClipBridgeError
from clipbridge.diff.inputs import SEED
from clipbridge.cli import chain as chain_cli
from clipbridge.cli import fix as fix_cli
from clipbridge.scan.external import embedded_from_file


def add_subcommand(sub: Any) -> None:
    d = sub.add_parser("diff", help="run an ONNX model on real engines and explain every difference by its clip; "
                                    "exit 0 equal, 1 differs, 2 error")
    d.add_argument("model", help="an .onnx file (tensor data in external files next to it is read, as onnx.load "
                   "does; the service never reads external data)")
    d.add_argument("--inputs", metavar="IN.npz", nargs="+",
                   help="the inputs, keyed by graph input name: one .npz, several, or a folder of them, each one "
                        "sample (default: an ordinary generated sample, seeded)")
    d.add_argument("--classes", type=int, metavar="AXIS", help="with an input set: the class axis of the outputs, "
                   "for top-1 and top-5 agreement in the statistics")
    d.add_argument("--engine", action="append", help="repeatable or comma-separated: "
                   f"{', '.join(run.ENGINE_NAMES)} (default: {', '.join(run.DEFAULT_ENGINES)})")
    d.add_argument("--precision", choices=["model", "deployed"], default="model",
                   help="model: every engine pinned to the model's types (default); deployed: each engine's "
                        "default (OpenVINO picks bf16 on CPUs with avx512_bf16/AMX)")
    d.add_argument("--rtol", type=float, help="relative tolerance (default: per dtype, docs/diff.md)")
    d.add_argument("--atol", type=float, help="absolute tolerance (default: per dtype, docs/diff.md)")
    d.add_argument("--tolerance", action="append", metavar="NAME=RTOL,ATOL",
                   help="repeatable: the tolerance of output NAME (* for every output), over the per-dtype default "
                        "(docs/diff.md); the report names the tolerance each output was compared with")
    d.add_argument("--shape", action="append", metavar="INPUT=DIMS",
                   help="repeatable: generate INPUT at this shape, e.g. image=8x3x224x224 (symbolic dimensions "
                        "take the value given, fixed ones must match; default: 1 for each symbolic dimension)")
    d.add_argument("--seed", type=int, default=SEED, help=f"the generator's seed (default {SEED})")
    d.add_argument("--probe", choices=probe.PROBES, default="edge",
                   help="edge (default): a second pass on generated NaN, +-inf, float16's 65504 and each clip's "
                        "bounds, reported as its own `edge` section; off: the ordinary pass only")
    d.add_argument("--fail-on", action="append", metavar="masked|edge", default=None,
                   help="repeatable or comma-separated: also exit 1 when a difference is masked inside the model "
                        "(masked) or the edge probe differs (edge); by default only the outputs decide")
    d.add_argument("--format", choices=formats.FORMATS, default="table",
                   help="table (default); json: the /v1/models/diff body; sarif, junit, github, markdown for CI")
    d.add_argument("--output", "-o", help="write the report here instead of stdout")
    d.add_argument("--node-data", metavar="OUT.json", help="write Model Explorer node data (differing elements per "
                                                           "node); the cause layer goes to OUT.causes.json")
    d.add_argument("--bundle", metavar="OUT.zip", help="write a zip that reproduces each introduced difference "
                                                       "(run_bundle.py)")
    d.add_argument("--fix", metavar="OUT.onnx", help="write OUT.onnx so that the second engine computes what the "
                   "first computes on MODEL, and print the fix with its proof (docs/diff.md, Fix)")
    d.add_argument("--chain", metavar="STAGES", help="follow MODEL (a torch.export .pt2, or an .onnx) across "
                   "converters: a comma list of torch, onnx, openvino, tflite, tflite:builtin, coreml (docs/chain.md)")
    d.add_argument("--static", action="store_true", help="with --chain: the lowering table and its predictions "
                                                          "only, read from the converted graphs; nothing runs")
    d.set_defaults(func=cmd_diff)


def _listed(items: list[str] | None) -> tuple[str, ...]:
    """A repeatable option that also takes comma lists, flattened."""
    return tuple(p.strip() for item in items or [] for p in item.split(",") if p.strip())


def _engines(items: list[str] | None) -> tuple[str, ...]:
    return _listed(items) or run.DEFAULT_ENGINES


def _one_input(args: argparse.Namespace) -> None:
    """--inputs as one path where it names one .npz file (what --fix and --chain read); several, or a folder, is
    an input set, which only the diff itself takes."""
    items = args.inputs or []
    if len(items) == 1 and not Path(items[0]).is_dir():
        args.inputs = items[0]
    elif items and (getattr(args, "fix", None) or getattr(args, "chain", None)):
        raise ClipBridgeError("--fix and --chain take one .npz", "--inputs")


def cmd_diff(args: argparse.Namespace) -> int:
    _one_input(args)
    if getattr(args, "chain", None):
        return chain_cli.cmd_chain(args)
    if getattr(args, "static", False):
        raise ClipBridgeError("--static reads a converter chain's lowering: give --chain too", "--static")
    engines.require(_engines(args.engine), "--engine")  # the install command first, before the model is read
    model = embedded_from_file(args.model)  # external data next to the model is read, as onnx.load does
    npzs = samples.files([args.inputs] if isinstance(args.inputs, str) else args.inputs or [])
    npz = npzs[0][1] if len(npzs) == 1 else None
    if getattr(args, "fix", None):
        return fix_cli.cmd_fix(args, _engines(args.engine))
    opts = run.Options(_engines(args.engine), args.precision, args.rtol, args.atol, args.seed,
                       probe=args.probe, fail_on=_listed(args.fail_on),
                       tolerances=tolerance.parse(args.tolerance, "--tolerance"),
                       shapes=shapes.parse(args.shape, "--shape"))
    opts.check("--")
    # The CLI runs the engines in its own process: the model is the caller's own file.
    body, runs = _diff(opts, model, npz, args.format, npzs if len(npzs) > 1 else None, args.classes)
    text = formats.render(body, args.format, Path(args.model).name)
    if args.output:
        Path(args.output).write_text(text)
    else:
        sys.stdout.write(text)
    if args.node_data:
        path = Path(args.node_data)
        path.write_text(json.dumps(formats.node_data(body), indent=2))
        path.with_suffix(".causes.json").write_text(json.dumps(formats.cause_layer(body), indent=2))
    if args.bundle:
        Path(args.bundle).write_bytes(bundle.build(body, runs, opts.precision))
    return 1 if body["fails"] else 0


def _diff(opts: run.Options, model: bytes, npz: bytes | None, fmt: str,
          npzs: list[tuple[str, bytes]] | None = None, classes: int | None = None) -> tuple[dict, Any]:
    """report.diff, where a fault of clipbridge's own is an error (exit 2, with a JSON body under --format json),
    never a traceback with exit 1, which reads as "the engines differ" (issue 44)."""
    try:
        if npzs:  # an input set: sessions once, the statistics, the walk on the first differing sample
            return sets.diff(run.direct, model, npzs, opts, classes)
        return report.diff(run.direct, model, npz, opts)
    except (ClipBridgeError, OSError, ValueError, KeyboardInterrupt):
        raise
    except Exception as exc:  # the cause rules, the walk: ours, not the model's
        message = f"the diff failed: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
        if fmt == "json":
            sys.stdout.write(json.dumps({"verdict": "error", "error": {"message": message, "loc": None}}) + "\n")
        raise ClipBridgeError(message) from exc
