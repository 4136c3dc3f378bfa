"""torch -> .tflite with litert-torch, run by the LiteRT converter environment's interpreter (converter_env.py),
never by clipbridge's own: `ENV/bin/python -I litert_convert.py IN.pt2 OUT.tflite SHAPES_JSON`.

A standalone script: it imports only the standard library, torch and litert_torch (the environment has no
clipbridge, pydantic or fastapi of clipbridge's versions), loads the ExportedProgram, converts `ep.module()` with
zero sample inputs of the given shapes and writes the flatbuffer. Before anything is imported it caps its own
address space at $CLIPBRIDGE_CONVERTER_MEMORY_MB (set by the caller: a limit set here needs no `preexec_fn`, which
is unsafe in a caller with threads). A failure is one line on stderr, the exception's type and first line (the
caller quotes it reduced), and exit status 3."""

from __future__ import annotations

import json
import os
import resource
import sys

FAILED = 3


def convert(src: str, dst: str, shapes: list[dict]) -> None:
    """litert_torch.convert(ep.module(), sample): the float flatbuffer, no quantization (docs/chain.md)."""
    import torch  # first: the bigger import, where a memory cap shows
    import litert_torch

    ep = torch.export.load(src)
    sample = tuple(torch.zeros(s["shape"], dtype=getattr(torch, s["dtype"])) for s in shapes)
    model = litert_torch.convert(ep.module(), sample)
    model.export(dst)  # litert-torch 0.10's LiteRTModel: export(path) writes the flatbuffer


def limit_memory(mb: str | None) -> None:
    """RLIMIT_AS at `mb` MiB (never above the hard limit this process inherited)."""
    if not mb:
        return
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    soft = int(mb) * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))


def main(argv: list[str]) -> int:
    limit_memory(os.environ.get("CLIPBRIDGE_CONVERTER_MEMORY_MB"))
    if len(argv) != 3:
        print("usage: litert_convert.py IN.pt2 OUT.tflite SHAPES_JSON", file=sys.stderr)
        return 2
    try:
        convert(argv[0], argv[1], json.loads(argv[2]))
    except Exception as exc:  # the converter's failure: one reduced line, never the traceback
        text = " ".join(str(exc).split())[:240]
        print(f"{type(exc).__name__}: {text}" if text else type(exc).__name__, file=sys.stderr)
        return FAILED
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
