"""`clipbridge fleet run SOURCE... --output DIR` and `clipbridge fleet merge DIR... --output DIR` (docs/fleet.md).
`clipbridge fleet SOURCE...` and `--out` are the older spellings, read until 0.2.0 (app/clipbridge/cli/deprecated.py).

Exit codes: 0 every model equal, 1 any model differs, 2 any model failed to run (or a usage error)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from clipbridge.cli.model_options import add_output
from clipbridge.core.errors import ClipBridgeError
from clipbridge.diff import passes
from clipbridge.diff import run as diff_run
from clipbridge.diff.inputs import SEED
from clipbridge.engines.venvs import cache_root
from clipbridge.fleet import runner
from clipbridge.fleet.backends import Limits
from clipbridge.fleet.keys import parse_engine
from clipbridge.fleet.sources import parse_shard

EXITS = "exit 0 every model equal, 1 any differs, 2 any failed to run"


def default_cache() -> Path:
    """fleet's part of clipbridge's cache, which $CLIPBRIDGE_CACHE moves as it does for the rest of the tool."""
    return cache_root() / "fleet"


def add_subcommand(sub: Any) -> None:
    fleet = sub.add_parser("fleet", help=f"scan and diff every model of a registry (run), join shards (merge); {EXITS}",
                           description="Scan and diff every model of a registry (docs/fleet.md).")
    commands = fleet.add_subparsers(dest="fleet_command", required=True, metavar="{run,merge}",
                                     help="run: scan and diff the models; merge: join the outputs of shards")
    f = commands.add_parser("run", help=f"scan and diff every model of a registry; {EXITS}",
                            description="Scan and diff every model of a registry (docs/fleet.md).")
    f.add_argument("sources", nargs="+", metavar="SOURCE", help=".onnx files, OpenVINO .xml files and directories "
                   "(searched recursively)")
    add_output(f, "the folder results.jsonl, report.sarif, junit.xml, summary.md (and changes.json with --against) "
               "go to", required=True, old=("--out",), metavar="DIR")
    f.add_argument("--engine", action="append", help="repeatable or comma-separated: "
                   f"{', '.join(diff_run.ENGINE_NAMES)}, or NAME==VERSION to run that version in its own environment "
                   f"(default: {', '.join(diff_run.DEFAULT_ENGINES)})")
    f.add_argument("--precision", choices=["model", "deployed"], default="model", help="as `clipbridge diff`")
    f.add_argument("--inputs-dir", metavar="DIR", help="a model's inputs are DIR/NAME.npz (or NAME.npz beside "
                   "it); without one, diff's seeded generated inputs")
    f.add_argument("--seed", type=int, default=SEED, help=f"the generator's seed (default {SEED})")
    f.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="parallel models (default: the CPUs)")
    f.add_argument("--backend", choices=["local", "ray"], default="local", help="local: sandbox worker processes "
                   "(default); ray: Ray tasks (pip install 'clipbridge[fleet]')")
    f.add_argument("--ray-address", help="join this Ray cluster (default: start a local instance)")
    f.add_argument("--shard", metavar="I/N", help="only the models whose sha256 mod N is I (e.g. "
                   "JOB_COMPLETION_INDEX/N on Kubernetes)")
    f.add_argument("--against", metavar="PREV_DIR", help="write changes.json: what changed since that run")
    f.add_argument("--cache", metavar="DIR", help=f"the result cache and built environments (default "
                   f"{default_cache()})")
    f.add_argument("--recycle", type=int, default=100, help="models per worker process before it is replaced "
                   "(default 100)")
    f.add_argument("--retries", type=int, default=2, help="a job whose process died runs again this many times, "
                   "then is recorded as an error (default 2)")
    f.add_argument("--timeout", type=float, default=600.0, help="seconds per model (default 600)")
    f.add_argument("--memory", metavar="SIZE", help="what one model's job may take above its worker's idle size, "
                   "e.g. 16GiB (default: CLIPBRIDGE_SANDBOX_MEMORY_MB, 4096 MiB); its diff holds at most half of it "
                   "in captured tensors (the diff's --memory). A model whose engines need more is an error line "
                   "naming this option")
    f.set_defaults(func=cmd_fleet)
    m = commands.add_parser("merge", help=f"join the outputs of shards into the files of one run; {EXITS}")
    m.add_argument("shards", nargs="+", metavar="DIR", help="the --output folders of the shards")
    add_output(m, "the folder the joined results.jsonl, report.sarif, junit.xml, summary.md go to", required=True,
               old=("--out",), metavar="DIR")
    m.add_argument("--against", metavar="PREV_DIR", help="write changes.json: what changed since that run")
    m.set_defaults(func=cmd_merge)


def _engines(items: list[str] | None) -> list[Any]:
    names = [p.strip() for item in items or [] for p in item.split(",") if p.strip()]
    return [parse_engine(n) for n in names or diff_run.DEFAULT_ENGINES]


def _positive(value: int, option: str) -> int:
    if value < 1:
        raise ValueError(f"{option} must be at least 1")
    return value


def _memory_mb(text: str | None) -> int | None:
    """--memory in MiB (a size such as 16GiB; at least 64 MiB, the sandbox's own floor); None: the default."""
    if text is None:
        return None
    size = passes.parse_size(text, "--memory")
    if size < 64 << 20:
        raise ClipBridgeError(f"--memory must be at least 64MiB for a model's job, got {text[:40]!r}", "--memory")
    return size >> 20


def cmd_merge(args: argparse.Namespace) -> int:
    return runner.merge([Path(d) for d in args.shards], Path(args.output), Path(args.against) if args.against else None)


def cmd_fleet(args: argparse.Namespace) -> int:
    limits = Limits(workers=_positive(args.workers, "--workers"), recycle=_positive(args.recycle, "--recycle"),
                    retries=max(0, args.retries), timeout_s=args.timeout, memory_mb=_memory_mb(args.memory))
    cfg = runner.Config(args.sources, Path(args.output), _engines(args.engine), Path(args.cache or default_cache()),
                        args.precision, args.inputs_dir, args.backend, args.ray_address, parse_shard(args.shard),
                        Path(args.against) if args.against else None, args.seed, limits)
    code = runner.run(cfg)
    print(f"wrote {args.output}/results.jsonl, report.sarif, junit.xml, summary.md"
          + (", changes.json" if args.against else "") + f" (exit {code})", file=sys.stderr)
    return code
