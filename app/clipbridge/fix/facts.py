"""What each engine really does at a clip-like node, as measured on onnxruntime 1.32.0, OpenVINO 2026.4.1
(CPU plugin) and onnx 1.21's reference evaluator. tests/fix/test_facts.py re-measures every entry on the
installed engines, so a new engine release that changes one fails there first (docs/diff.md, "Fix").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

ENGINES = ("onnxruntime", "openvino", "onnx-reference")
PROPAGATE = None  # a NaN input gives a NaN output


@dataclass(frozen=True)
class Node:
    """A clip-like node as the rules see it: kind, dtype and its constant bounds (None: omitted or not a constant)."""

    kind: str  # clip6, clip, relu, hardsigmoid, max, min
    dtype: np.dtype
    lo: float | None = None
    hi: float | None = None
    dynamic: bool = False  # a bound is computed at run time
    x_first: bool = True  # Max/Min: the data operand comes before the constant
    const: np.ndarray | None = None  # Max/Min: the constant operand
    alpha: float = 0.2  # HardSigmoid


def openvino_nan(n: Node) -> float | np.ndarray | None:
    """OpenVINO CPU: Clamp (a Clip with constant bounds, min <= max) sends NaN to its lower bound, Relu and Max(x, c)
    to 0/c, Min(x, c) to c, HardSigmoid to 1; a Clip whose bounds are dynamic or crossed becomes Minimum/Maximum
    and propagates, as does Max/Min with the constant first (openvino#35839: operand order)."""
    if n.kind in ("clip", "clip6"):
        if n.dynamic or (n.lo is not None and n.hi is not None and n.lo > n.hi):
            return PROPAGATE
        return n.lo if n.lo is not None else default_bound("openvino", n.dtype, "min")
    if n.kind == "relu":
        return 0.0
    if n.kind == "hardsigmoid":
        return 1.0 if n.alpha > 0 else PROPAGATE  # measured for alpha > 0 only: no rule for the rest
    if n.kind in ("max", "min"):
        return n.const if n.x_first else PROPAGATE
    return PROPAGATE


def nan_output(engine: str, n: Node) -> float | np.ndarray | None:
    """What `engine` gives for a NaN input at n: PROPAGATE (None) or the value it writes instead."""
    if engine == "openvino":
        return openvino_nan(n)
    return PROPAGATE  # onnxruntime and the reference evaluator propagate NaN through every clip-like op measured


def thresholded_relu_drops_nan(engine: str) -> bool:
    """ThresholdedRelu(alpha=0) as x > alpha ? x : 0: onnxruntime and onnx.reference send NaN (and -0, -inf) to +0,
    float32 and float16; OpenVINO propagates NaN there."""
    return engine in ("onnxruntime", "onnx-reference")


def fuses_min_max_into_clamp(engine: str) -> bool:
    """OpenVINO (ClampFusion) turns Min(hi, Max(lo, x)) with scalar constants, in either order or nesting, into one
    Clamp, which sends NaN to lo, although each op alone with the constant first propagates NaN: so no rewrite to
    Min/Max keeps NaN there. onnxruntime and onnx.reference propagate."""
    return engine == "openvino"


def nonnegative(n: Node) -> bool:
    """Every non-NaN output of n is >= 0 (or -0): Relu, a Clip with constant min 0 <= max, Max(x, 0)."""
    if n.kind == "relu":
        return True
    if n.kind in ("clip", "clip6"):
        return not n.dynamic and n.lo == 0 and (n.hi is None or n.hi >= 0)
    return n.kind == "max" and n.const is not None and bool(np.all(n.const == 0))


def default_bound(engine: str, dtype: np.dtype, side: str) -> float:
    """The value an engine uses for an omitted Clip-11+ bound: onnxruntime and OpenVINO write the spec's
    lowest()/max() (float16: +-65504), onnx.reference keeps +-inf (its Clip skips the bound)."""
    if engine == "onnx-reference":
        return -math.inf if side == "min" else math.inf
    info = np.finfo(dtype)
    return float(info.min if side == "min" else info.max)


def loads_crossed_clip6(engine: str) -> bool:
    """A Clip-6 with attributes min > max: onnxruntime (Clip_6Base: `min_ <= max_ was false`) and OpenVINO
    (Clamp: `Attribute 'min' must be less or equal than 'max'`) refuse the model; onnx.reference runs it."""
    return engine == "onnx-reference"


def crossed_value(engine: str, n: Node) -> float | None:
    """What a Clip with min > max gives on a clean input: every engine that runs one gives max (min(max(x, lo), hi))."""
    return n.hi


def openvino_setting(inference_precision: str) -> dict[str, str]:
    """The OpenVINO settings that keep a model's own float precision (CPU plugin: PERFORMANCE mode picks bf16 on
    avx512_bf16/AMX CPUs and f16 on ARM; ACCURACY mode or an explicit hint keeps f32)."""
    return {"INFERENCE_PRECISION_HINT": "f32" if inference_precision in ("bf16", "f16") else inference_precision}
