"""`clipbridge --version`: the package's version and each engine's installed version (the facts GET /v1/version
gives, from app/clipbridge/engines/extras.py). Imported by app/clipbridge/cli/main.py."""

from __future__ import annotations

import argparse

from clipbridge import __version__
from clipbridge.engines.extras import versions


class Version(argparse.Action):
    """`clipbridge --version`: the package and each engine's installed version (None: not installed), found when
    asked (not when the parser is built: every other command would pay for it)."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="print clipbridge's version and each engine's installed version, and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        print(version_text())
        parser.exit()


def version_text() -> str:
    """`clipbridge 0.1.0` and a line per engine: its version, or `not installed`."""
    found = versions()
    width = max(map(len, found))
    return "\n".join([f"clipbridge {__version__}", *(f"  {e:<{width}}  {v or 'not installed'}"
                                                      for e, v in found.items())])
