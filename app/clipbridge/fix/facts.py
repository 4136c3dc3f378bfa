"""What each engine really does at a clip-like node, in the terms the fix's rules read: each function reads a row
of the behaviour table (clipbridge.behaviour), where the fact, its source and the engine versions live once.
tests/fix/test_facts.py re-measures every row used here on the installed engines (docs/diff.md, "Fix").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from clipbridge import behaviour

ENGINES = behaviour.ENGINES
PROPAGATE = None  # a NaN input gives a NaN output


@dataclass(frozen=True)
class Node:
    """A clip-like node as the rules see it: kind, dtype and its constant bounds (None: omitted or not a constant)."""

    kind: str  # clip6, clip, relu, hardsigmoid, max, min, softmax, logsoftmax
    dtype: np.dtype
    lo: float | None = None
    hi: float | None = None
    dynamic: bool = False  # a bound is computed at run time
    x_first: bool = True  # Max/Min: the data operand comes before the constant
    const: np.ndarray | None = None  # Max/Min: the constant operand
    alpha: float = 0.2  # HardSigmoid
    axis: int = -1  # Softmax/LogSoftmax-13: the axis of a row


CLIP_KINDS = ("clip6", "clip", "relu", "hardsigmoid", "max", "min")
OPENVINO_NAN_ROW = {"clip": "openvino-clamp-nan-to-lower", "clip6": "openvino-clamp-nan-to-lower",
                    "relu": "openvino-relu-nan-to-zero", "hardsigmoid": "openvino-hardsigmoid-nan-to-one",
                    "max": "openvino-max-nan-to-constant", "min": "openvino-min-nan-to-constant"}


def nan_row(engine: str, n: Node) -> str | None:
    """The behaviour row that says what `engine` gives for a NaN input at n (None: no row speaks, NaN stays)."""
    if n.kind not in CLIP_KINDS:
        return None  # a Softmax or a MaxPool: rows of their own (rules.softmax_nan_guard, maxpool_nan_guard)
    if engine != "openvino":
        return "nan-propagates-onnx"
    if n.kind in ("clip", "clip6") and (n.dynamic or (n.lo is not None and n.hi is not None and n.lo > n.hi)):
        return "openvino-clamp-dynamic-nan-propagates"
    if n.kind == "hardsigmoid" and not n.alpha > 0:
        return None  # the row is measured for alpha > 0 only
    if n.kind in ("max", "min") and not n.x_first:
        return "openvino-minmax-constant-first-propagates"
    return OPENVINO_NAN_ROW.get(n.kind)


def nan_output(engine: str, n: Node) -> float | np.ndarray | None:
    """What `engine` gives for a NaN input at n: PROPAGATE (None) or the value it writes instead (rows
    nan-propagates-onnx and openvino-*-nan-*)."""
    row = nan_row(engine, n)
    r = behaviour.reading(row, engine) if row else "propagate"
    if r == "lower":
        return n.const if n.kind == "max" else (n.lo if n.lo is not None else default_bound(engine, n.dtype, "min"))
    if r == "upper":
        return n.const
    return {"zero": 0.0, "one": 1.0}.get(r, PROPAGATE)


def openvino_nan(n: Node) -> float | np.ndarray | None:
    return nan_output("openvino", n)


def thresholded_relu_drops_nan(engine: str) -> bool:
    """Row thresholded-relu-drops-nan: whether ThresholdedRelu(alpha=0) gives 0 for NaN on `engine`."""
    return behaviour.reading("thresholded-relu-drops-nan", engine) == "zero"


def fuses_min_max_into_clamp(engine: str) -> bool:
    """Row openvino-clamp-fusion: whether `engine` fuses Min/Max with scalar constants into one Clamp, so no
    rewrite to Min/Max keeps NaN there."""
    return behaviour.reading("openvino-clamp-fusion", engine) == "fuses"


def nonnegative(n: Node) -> bool:
    """Every non-NaN output of n is >= 0 (or -0): Relu, a Clip with constant min 0 <= max, Max(x, 0)."""
    if n.kind == "relu":
        return True
    if n.kind in ("clip", "clip6"):
        return not n.dynamic and n.lo == 0 and (n.hi is None or n.hi >= 0)
    return n.kind == "max" and n.const is not None and bool(np.all(n.const == 0))


def default_bound(engine: str, dtype: np.dtype, side: str) -> float:
    """The value an engine uses for an omitted Clip-11+ bound (row omitted-bound-default)."""
    if behaviour.reading("omitted-bound-default", engine) == "open":
        return -math.inf if side == "min" else math.inf
    info = np.finfo(dtype)
    return float(info.min if side == "min" else info.max)


def loads_crossed_clip6(engine: str) -> bool:
    """Row clip6-crossed-refused: whether `engine` runs a Clip-6 with attributes min > max."""
    return behaviour.reading("clip6-crossed-refused", engine) == "runs"


def crossed_value(engine: str, n: Node) -> float | None:
    """What a Clip with min > max gives on a clean input (row clip-min-greater-than-max)."""
    return n.hi if behaviour.reading("clip-min-greater-than-max", engine) == "max" else n.lo


def openvino_setting(inference_precision: str) -> dict[str, str]:
    """The OpenVINO settings that keep a model's own float precision (CPU plugin: PERFORMANCE mode picks bf16 on
    avx512_bf16/AMX CPUs and f16 on ARM; ACCURACY mode or an explicit hint keeps f32)."""
    return {"INFERENCE_PRECISION_HINT": "f32" if inference_precision in ("bf16", "f16") else inference_precision}
