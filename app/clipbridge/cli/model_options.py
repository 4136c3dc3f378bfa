"""The options the model-side commands share (diff, trace, fix, chain; --output is vocabulary.add_output), declared
once so that each means the same on every command (docs/cli.md, the vocabulary), and the report writer they share.
Imported by app/clipbridge/cli/diff.py, fix.py and chain.py."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from clipbridge.cli.vocabulary import add_output
from clipbridge.diff import run
from clipbridge.diff.inputs import SEED

PRECISION_HELP = ("model: every engine pinned to the model's types (default); deployed: each engine's default "
                  "(OpenVINO picks bf16 on CPUs with avx512_bf16/AMX)")


def add_model(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help="an .onnx file (tensor data in external files next to it is read, as onnx.load "
                   "does; the service never reads external data)")


def add_inputs(p: argparse.ArgumentParser) -> None:
    p.add_argument("--inputs", metavar="IN.npz", help="the inputs, keyed by graph input name (default: generated "
                                                      "boundary values, seeded)")


def add_engine(p: argparse.ArgumentParser, help_text: str) -> None:
    p.add_argument("--engine", action="append", metavar="ENGINE", help=f"repeatable or comma-separated: {help_text}")


def add_precision(p: argparse.ArgumentParser) -> None:
    p.add_argument("--precision", choices=["model", "deployed"], default="model", help=PRECISION_HELP)


def add_seed(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seed", type=int, default=SEED, help=f"the input generator's seed (default {SEED})")


def add_format(p: argparse.ArgumentParser, formats: tuple[str, ...], body: str) -> None:
    p.add_argument("--format", choices=formats, default="table",
                   help=f"table (default); json: the {body} body; the others for CI: {', '.join(formats[2:])}")


def engines(items: list[str] | None, default: tuple[str, ...] = run.DEFAULT_ENGINES) -> tuple[str, ...]:
    """--engine items, comma lists split; `default` when none is given."""
    names = tuple(p.strip() for item in items or [] for p in item.split(",") if p.strip())
    return names or default


def write_report(text: str, where: str | None) -> None:
    """The report to the file named, or to stdout."""
    if where:
        Path(where).write_text(text)
    else:
        sys.stdout.write(text)
