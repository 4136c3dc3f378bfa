"""`clipbridge diff MODEL --engine A --engine B --fix OUT.onnx`: write OUT.onnx for B to compute what the model
computes on A, print the fix and its proof in --format; exit 0 when the proof is equal, 1 when not, 2 on error."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from clipbridge.diff import run
from clipbridge.core.errors import ClipBridgeError
from clipbridge.fix import formats
from clipbridge.fix.service import fix
from clipbridge.scan.external import embedded_from_file


def cmd_fix(args: argparse.Namespace, engines: tuple[str, ...]) -> int:
    if len(engines) != 2:
        raise ClipBridgeError("--fix needs exactly two engines: --engine A (the reference) --engine B (the target)",
                              "engine")
    model = embedded_from_file(args.model)  # external data next to the model is read, as onnx.load does
    npz = Path(args.inputs).read_bytes() if args.inputs else None
    # The CLI runs the engines in its own process: the model is the caller's own file.
    fixed = fix(model, npz, engines[0], engines[1], args.precision, execute=run.direct)
    Path(args.fix).write_bytes(fixed.model)
    body = {**fixed.body, "model": {**fixed.body["model"], "path": str(args.fix)}}
    text = formats.render(body, args.format, Path(args.model).name)
    if args.output:
        Path(args.output).write_text(text)
    else:
        sys.stdout.write(text)
    return 0 if body["proof"]["verdict"] == "equal" else 1  # exactly when the proof is equal (issue 44)
