"""`clipbridge chain MODEL STAGES [--static]`: follow a model across converters (docs/chain.md); its older
spelling `clipbridge diff MODEL --chain STAGES [--static]` is read until 0.2.0 (app/clipbridge/cli/diff.py).

Exit codes: 0 every running hop is equal (or `--static`: the lowering table was read), 1 a hop differs or a
converter failed, 2 an error (an unreadable model, a bad chain or option, a missing piece of the [chain] extra:
checked before anything is built or converted, clipbridge.chain.preflight).

A chain with a LiteRT stage builds the LiteRT converter's environment on its first run (once: about 0.5 GB of
downloads, 2 GB installed; a message on stderr; CLIPBRIDGE_CHAIN_BUILD=0 turns that off, and a build that fails
leaves the hop not-installed). `clipbridge chain-env build` builds it explicitly, `clipbridge chain-env status`
says where and whether it is: exit 0 built, 1 not built (status), 2 the build failed."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from clipbridge.chain import converter_env, formats, preflight, report, stages
from clipbridge.cli import model_options as o
from clipbridge.core.errors import ClipBridgeError
from clipbridge.diff import run
from clipbridge.scan.external import embedded_from_file
from clipbridge.engines import quiet

STAGES_HELP = ("the stages, in order: a comma list or several words of torch, onnx, openvino, tflite, tflite:builtin, "
               "coreml (the model's own stage is put in front when missing)")


def cmd_chain(args: argparse.Namespace) -> int:
    """`clipbridge chain` (its STAGES words are joined into the comma list) and the older `diff --chain`."""
    if getattr(args, "stages", None):
        args.chain = ",".join(args.stages)
    fmt = args.format
    if fmt not in formats.FORMATS:
        raise ClipBridgeError(f"--format {fmt} is not a chain format; choose from {', '.join(formats.FORMATS)}",
                              "--format")
    with open(args.model, "rb") as f:  # the stages and the [chain] extra, from the model's first bytes: before
        preflight.check(args.chain, f.read(4), "--chain")  # the model is read, or anything is built
    model = embedded_from_file(args.model)  # an ONNX source's external data beside it, as diff reads it
    npz = Path(args.inputs).read_bytes() if args.inputs else None
    if not args.static:  # --static predicts LiteRT's lowering from the source where the environment is not built
        _build_if_needed(args.chain)
    # The CLI converts and runs in its own process, as diff does: the model is the caller's own file.
    with quiet.to_log("chain"):  # the converters' and engines' own lines go to the log (clipbridge -v)
        body = report.chain(run.direct, model, npz, args.chain, args.seed, static=args.static, loc="--chain")
    o.write_report(formats.render(body, fmt, Path(args.model).name), args.output)
    for h in body["hops"]:
        if h["status"] == "not-installed":
            print(f"note: {h['to']}: {h['error']}", file=sys.stderr)
    if args.static:
        return 0
    failed = any(h["status"] == "failed" for h in body["hops"])
    return 0 if body["verdict"] == "equal" and not failed else 1


def _say(line: str) -> None:
    print(f"note: {line}", file=sys.stderr)


def _build_if_needed(chain: str) -> None:
    """The CLI's first chain run with a LiteRT stage builds the converter environment (never the server's)."""
    named = {s.strip() for s in chain.split(",")}
    if not named & set(stages.LITERT_STAGES) or converter_env.python() is not None:
        return
    if os.environ.get("CLIPBRIDGE_CHAIN_BUILD", "1") == "0":
        return  # the hops say not-installed, with the command
    _say(f"building the LiteRT converter environment once (about 0.5 GB of downloads, 2 GB installed) in "
         f"{converter_env.env_dir()}")
    try:
        converter_env.build(log=_say)
    except ClipBridgeError as exc:  # no index reachable, no disk: the hop stays not-installed, the rest runs
        _say(exc.message)


def cmd_env(args: argparse.Namespace) -> int:
    where = converter_env.env_dir()
    if args.action == "status":
        built = converter_env.python() is not None
        print(f"{converter_env.NAME}: {'built' if built else 'not built'} in {where}")
        print(f"requirements: {' '.join(converter_env.REQUIREMENTS)}")
        return 0 if built else 1
    py = converter_env.build(log=_say)
    print(f"{converter_env.NAME}: built in {where} ({py})")
    return 0


def add_subcommand(sub: Any) -> None:
    c = sub.add_parser("chain", help="follow a model (a torch.export .pt2, or an .onnx) across converters, hop by "
                                     "hop; exit 0 every hop equal, 1 a hop differs or a converter failed, 2 error")
    c.add_argument("model", help="a torch.export .pt2 (torch.export.save), or an .onnx")
    c.add_argument("stages", nargs="+", metavar="STAGE", help=STAGES_HELP)
    c.add_argument("--static", action="store_true", help="the lowering table and its predictions only, read from "
                                                         "the converted graphs; nothing runs (exit 0)")
    o.add_inputs(c)
    o.add_seed(c)
    o.add_format(c, formats.FORMATS, "/v1/models/chain")
    o.add_output(c, "write the report here instead of stdout")
    c.set_defaults(func=cmd_chain)
    e = sub.add_parser("chain-env", help="build the LiteRT converter's environment of its own (docs/chain.md); "
                                         "exit 0 built, 1 not built (status), 2 the build failed")
    e.add_argument("action", choices=["build", "status"], help="build: once (about 0.5 GB of downloads, 2 GB "
                   "installed), reused after ($CLIPBRIDGE_CACHE, default ~/.cache/clipbridge); status: where it is "
                   "and whether it is built")
    e.set_defaults(func=cmd_env)
