"""`clipbridge diff A.onnx@ENGINE B.onnx@ENGINE`: the words of a diff of two sides (clipbridge.diff.sides).

A side on the command line is MODEL@ENGINE. It is split at the last `@` that follows a path ending in .onnx or
.xml, so that an engine name may itself hold an `@` (`m.onnx@onnxruntime@f16` is m.onnx on `onnxruntime@f16`)
and a path may too (`runs@2/m.onnx@openvino`). A MODEL that names an existing file is a model, never a side.
Both sides are ONNX today: an OpenVINO IR (.xml) as a side is refused (exit 2), since the diff marks and replays
tensors by editing the ONNX graph. Input sets and --bundle read one model and are refused with sides too.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from clipbridge.core.errors import ClipBridgeError
from clipbridge.diff import run, sides

LOC = "MODEL@ENGINE"
MAX_LISTED = 64  # tensors named per side in the report's `sides` section (the counts are whole)
_SIDE = re.compile(r"^(?P<path>.*\.(?:onnx|xml))@(?P<engine>.+)$", re.IGNORECASE)  # greedy: the last such `@`


def _side_like(text: str | None) -> bool:
    return bool(text) and _SIDE.match(str(text)) is not None and not Path(str(text)).is_file()


def named(args: argparse.Namespace) -> bool:
    """Whether the command names sides (MODEL@ENGINE), not one model and --engine."""
    return args.side is not None or _side_like(args.model)


def split(text: str) -> tuple[Path, str]:
    """(the model's path, the engine) of one MODEL@ENGINE, checked."""
    found = _SIDE.match(text)
    if found is None or Path(text).is_file():
        raise ClipBridgeError(f"{text[:80]!r} is no side: give MODEL@ENGINE, e.g. model.onnx@onnxruntime "
                              "(a path ending in .onnx, then @ and the engine)", LOC)
    path, engine = Path(found["path"]), found["engine"]
    if path.suffix.lower() == ".xml":
        raise ClipBridgeError(f"{path.name}: an OpenVINO IR (.xml) as a side is not supported yet; give the ONNX "
                              "model it was converted from (both sides are ONNX today)", LOC)
    if engine not in run.ENGINE_NAMES:
        raise ClipBridgeError(f"unknown engine {engine[:40]!r} in {text[:80]!r}; choose from "
                              f"{', '.join(run.ENGINE_NAMES)}", LOC)
    return path, engine


def parse(args: argparse.Namespace) -> list[tuple[Path, str]]:
    """The two sides, in order (the first is the reference); what they cannot be given with is refused."""
    if args.side is None:
        raise ClipBridgeError(f"{str(args.model)[:80]!r} names one side: a diff of sides takes two, "
                              "A.onnx@ENGINE B.onnx@ENGINE (or give one model and --engine)", LOC)
    refused = [("--engine", args.engine), ("--fix", args.fix), ("--chain", args.chain), ("--static", args.static),
               ("--bundle", args.bundle), ("--classes", args.classes)]
    for option, value in refused:
        if value:
            raise ClipBridgeError(f"{option} is not taken with MODEL@ENGINE sides (each side names its engine; "
                                  "bundles, input sets and the fix read one model)", option)
    if isinstance(args.inputs, list) and args.inputs:
        raise ClipBridgeError("a diff of sides takes one .npz (input sets read one model)", "--inputs")
    pairs = [split(str(args.model)), split(str(args.side))]
    if pairs[0][1] == pairs[1][1]:  # runs are keyed by engine (clipbridge.diff.sides.check)
        raise ClipBridgeError(f"engine {pairs[0][1]!r} is named by two sides; a diff compares each engine once "
                              "(two models on one engine is not supported yet)", LOC)
    return pairs


def read(pairs: list[tuple[Path, str]], load: Callable[[str], bytes]) -> list[bytes]:
    """Each side's model (`load`: with its external data); an unreadable one is named by its side."""
    models = []
    for k, (path, engine) in enumerate(pairs):
        try:
            models.append(load(str(path)))
        except ClipBridgeError as exc:  # the reader says `model`: say which of the two
            exc.message, exc.loc = f"{path.name} (side {k + 1}, on {engine}): {exc.message}", LOC
            raise
    return models


def unmatched(pairs: list[tuple[Path, str]], models: list[bytes]) -> dict[str, list[str]]:
    """clipbridge.diff.sides.unmatched, its refusal naming the side's file."""
    try:
        return sides.unmatched(models[0], models[1])
    except ClipBridgeError as exc:
        k = {"sides[0]": 0, "sides[1]": 1}.get(str(exc.loc))
        if k is not None:
            exc.message = f"{pairs[k][0].name} (side {k + 1}, on {pairs[k][1]}): {exc.message}"
        exc.loc = LOC
        raise


def section(pairs: list[tuple[Path, str]], unmatched: dict[str, list[str]]) -> dict[str, Any]:
    """The report's `sides`: each side's model and engine, and the named tensors only one side has (compared on
    neither: a difference may pass through them, none is claimed at them)."""
    out: dict[str, Any] = {"models": [{"model": p.name, "engine": e} for p, e in pairs]}
    for key, names in unmatched.items():
        out[key] = names[:MAX_LISTED]
        out[f"{key}_count"] = len(names)
    return out
