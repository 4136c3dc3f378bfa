"""`python -m tests.fake_dialect ARGS...`: the clipbridge command line with the fake dialect registered."""

from __future__ import annotations

import sys

import tests.fake_dialect.registered  # noqa: F401  (first: the registry line before the CLI is imported)
from clipbridge.cli.main import main

sys.exit(main(sys.argv[1:]))
