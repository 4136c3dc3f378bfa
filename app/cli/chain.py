"""`clipbridge diff MODEL --chain STAGES [--static]`: follow a model across converters (docs/chain.md).

Exit codes: 0 every running hop is equal (or `--static`: the lowering table was read), 1 a hop differs or a
converter failed, 2 an error (an unreadable model, a bad chain or option). A stage whose converter is not
installed is a hop with status `not-installed` naming its install command (also printed on stderr)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from app.chain import formats, report
from app.core.errors import ClipBridgeError
from app.diff import run


def cmd_chain(args: argparse.Namespace) -> int:
    fmt = "table" if args.format == "table" else args.format
    if fmt not in formats.FORMATS:
        raise ClipBridgeError(f"--format {fmt} is not a chain format; choose from {', '.join(formats.FORMATS)}",
                              "--format")
    model = Path(args.model).read_bytes()
    npz = Path(args.inputs).read_bytes() if args.inputs else None
    # The CLI converts and runs in its own process, as diff does: the model is the caller's own file.
    body = report.chain(run.direct, model, npz, args.chain, args.seed, static=args.static, loc="--chain")
    text = formats.render(body, fmt, Path(args.model).name)
    if args.output:
        Path(args.output).write_text(text)
    else:
        sys.stdout.write(text)
    for h in body["hops"]:
        if h["status"] == "not-installed":
            print(f"note: {h['to']}: {h['error']}", file=sys.stderr)
    if args.static:
        return 0
    failed = any(h["status"] == "failed" for h in body["hops"])
    return 0 if body["verdict"] == "equal" and not failed else 1
