"""The old spellings of the CLI (issue 43): each keeps working until OLD_NAMES_UNTIL and prints one line on stderr
naming the new one, once per run however often it is typed.

Two kinds: an old flag name beside its new one (`--to` for `--target`, `--out` for `--output`, `--for` for
`--target`), declared with the argparse actions below so that the vocabulary test (tests/test_cli_vocabulary.py)
can tell an old name from a flag outside the vocabulary; and an old command spelling (`diff --fix`, `diff --chain`,
`diff --engine E@f16`, `fleet SOURCE...`), noted by the command that still reads it. Imported by the modules of
app/clipbridge/cli/ only.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from clipbridge.api.model_base import OLD_NAMES_UNTIL

_SEEN = "_deprecations_seen"  # the namespace attribute that remembers what was said (argparse copies it upward)


def note(namespace: argparse.Namespace, old: str, new: str) -> None:
    """One line on stderr: `old` still works until OLD_NAMES_UNTIL, `new` is its spelling now; said once per run."""
    seen: set[str] = getattr(namespace, _SEEN, None) or set()
    setattr(namespace, _SEEN, seen)
    if old not in seen:
        seen.add(old)
        print(f"clipbridge: deprecated: {old} is now {new} (the old spelling works until {OLD_NAMES_UNTIL})",
              file=sys.stderr)


class _Renamed(argparse.Action):
    """A flag whose option strings after the first are old names: typing one of those notes the first."""

    old_names: tuple[str, ...] = ()

    def _note_old(self, namespace: argparse.Namespace, option_string: str | None) -> None:
        if option_string in self.old_names:
            note(namespace, option_string, self.option_strings[0])


class Store(_Renamed):
    """argparse's "store" with old names: Store(["--output", "-o", "--out"], old=("--out",))."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        self._note_old(namespace, option_string)
        setattr(namespace, self.dest, values)


class Append(_Renamed):
    """argparse's "append" with old names (`--target`, with `--to` and `--semantics`)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        self._note_old(namespace, option_string)
        setattr(namespace, self.dest, [*(getattr(namespace, self.dest, None) or []), values])


def renamed(kind: type[_Renamed], old: Sequence[str]) -> type[_Renamed]:
    """The action class `kind` with these option strings marked old (a class per flag: argparse builds actions
    from a class and keyword arguments, and `old_names` is not one of argparse's keywords)."""
    return type(kind.__name__, (kind,), {"old_names": tuple(old)})


class OldSpelling(argparse.Action):
    """A flag that is an old command spelling as a whole (`diff --fix` is now `clipbridge fix`): it stores its
    value as before and notes the new spelling (`new` None: a part of another old spelling, which says it, as
    `--static` is of `diff --chain`). Hidden from --help."""

    def __init__(self, option_strings: list[str], dest: str, new: str | None, **kwargs: Any) -> None:
        self.new = new
        super().__init__(option_strings, dest, help=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        if self.new:
            note(namespace, f"`clipbridge {parser.prog.split()[-1]} {option_string}`", self.new)
        setattr(namespace, self.dest, True if self.nargs == 0 else values)


def is_old(action: argparse.Action, option_string: str) -> bool:
    """Whether this option string of the action is an old name (for the vocabulary test and docs/cli.md)."""
    return isinstance(action, OldSpelling) or option_string in getattr(action, "old_names", ())


FLEET_COMMANDS = ("run", "merge", "-h", "--help")


def rewrite_argv(argv: list[str], namespace: argparse.Namespace) -> list[str]:
    """`clipbridge fleet SOURCE...` (before `fleet run`) is `clipbridge fleet run SOURCE...`: the one old spelling
    that argparse cannot take as it is, since `fleet` now has subcommands."""
    if len(argv) >= 2 and argv[0] == "fleet" and argv[1] not in FLEET_COMMANDS:
        note(namespace, "`clipbridge fleet SOURCE...`", "`clipbridge fleet run SOURCE...`")
        return ["fleet", "run", *argv[1:]]
    return argv
