"""One CLI vocabulary (issue 37): the target flag and the mode, declared once for every command that takes them.

`--target` is the one target flag (repeatable, comma lists, the groups 'default' and 'all'); `--to` and
`--semantics`, the older names of translate and of probe/bundle, are read as it until OLD_NAMES_UNTIL, as the API
reads its old field names, each with one deprecation line on stderr (app/clipbridge/cli/deprecated.py). The whole
vocabulary, every flag of every command, is the table in docs/cli.md. `preserve` is the one default mode of every
command (docs/api.md, One vocabulary); `--output/-o` is declared here too. Imported by the modules of
app/clipbridge/cli/.
"""

from __future__ import annotations

import argparse
import sys

from clipbridge.api.model_base import OLD_NAMES_UNTIL
from clipbridge.cli.deprecated import Append, Store, renamed
from clipbridge.dialects import registry
from clipbridge.service.capabilities import default_help, target_forms

MODES = ("preserve", "literal")
DEFAULT_MODE = "preserve"
MODE_HELP = ("preserve (default, for every command): choose target numbers that compute what the source "
             "computes; literal: the source's numbers under the target's rules (what that framework computes "
             "from the same numbers)")
TARGET_FLAGS = ("--target", "--to", "--semantics")


def add_target(p: argparse.ArgumentParser, what: str) -> None:
    """--target (with its old names) on one command; `what` says what a target is to this command."""
    p.add_argument(*TARGET_FLAGS, dest="target", action=renamed(Append, TARGET_FLAGS[1:]), metavar="TARGET",
                   help=f"{what}: {target_forms()}; repeatable or comma-separated; 'default' and 'all' name groups "
                        f"(without the source's own dialect); {default_help()}. --to and --semantics are older "
                        f"names of --target, read until {OLD_NAMES_UNTIL}")


def add_output(p: argparse.ArgumentParser, what: str, required: bool = False, old: tuple[str, ...] = (),
               default: str | None = None, metavar: str = "PATH") -> None:
    """--output/-o: the file or folder the command writes (`old`: its older names, still read, each noted)."""
    p.add_argument("--output", "-o", *old, action=renamed(Store, old), dest="output", required=required,
                   default=default, metavar=metavar,
                   help=what + (f" ({', '.join(old)}: its older name)" if old else ""))


def add_mode(p: argparse.ArgumentParser) -> None:
    p.add_argument("--mode", choices=MODES, default=DEFAULT_MODE, help=MODE_HELP)


def expand_targets(items: list[str] | None, source: str) -> list[str] | None:
    """--target items, comma lists split; 'default' is the default dialects and 'all' every registered one, each
    without the source's own dialect (named alone, the source's dialect is a target like any other)."""
    if not items:
        return None
    out: list[str] = []
    for item in items:
        for part in (p.strip() for p in item.split(",")):
            group = {"default": registry.default_names(), "all": registry.names()}.get(part.lower())
            out += [n for n in group if n != source] if group is not None else [part] if part else []
    return out


def stdin_hint(where: str, example: str) -> None:
    """A line on stderr when a command is about to wait on a terminal's stdin: a user who typed no file sees
    why nothing happens, instead of a silent wait (piped input gets no hint)."""
    if where == "-" and sys.stdin is not None and sys.stdin.isatty():
        print(f"reading a JSON clip spec from stdin (end with Ctrl-D; or give a file), e.g. {example}",
              file=sys.stderr)
