"""Quantized (QDQ) graphs: the int8/uint8 grid around each clip-like node, and the two causes it brings.

An engine may run `DequantizeLinear -> Clip -> QuantizeLinear` as one integer kernel: the Clip's bounds are
then folded into the integer range (OpenVINO CPU: 6.0 with scale 0.1 becomes 59, since 6 / 0.1 is
59.999998 in float32, so 12.7 clips to 5.9 where onnxruntime gives 6.0; measured by tests/diff/test_quantized.py).
Such a node differs in the model while it agrees when run alone, on inputs that agree: the difference is
introduced there, by the quantization, not inherited.

- `quantize-saturation`: a clip folded into the integer range (each engine gives the bound, or the nearest
  value of the grid inside it), or a non-finite input into QuantizeLinear (saturated, or 0: onnx.reference).
- `quantize-rounding`: QuantizeLinear of an element exactly between two steps (x / scale + zero_point ends
  in .5): ONNX QuantizeLinear-13 rounds half to even, an engine that rounds half away from zero differs by 1.

`grids` runs in a child (it parses the model); the rules run in the parent on captured numbers.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper

from clipbridge import behaviour
from clipbridge.diff import engines
from clipbridge.diff.child import model_errors
from clipbridge.scan.patterns import ClipLike, constants

QDQ_OPS = ("QuantizeLinear", "DequantizeLinear")


def has_qdq(ops: list[str]) -> bool:
    return any(op in QDQ_OPS for op in ops)


def _grid(node: onnx.NodeProto, consts: dict[str, np.ndarray]) -> dict[str, Any] | None:
    """(scale, zero point, integer range) of a per-tensor Quantize/DequantizeLinear with constant parameters."""
    ins = list(node.input) + ["", ""]
    s = consts.get(ins[1])
    if s is None or s.size != 1:
        return None
    zp = consts.get(ins[2])
    dt = np.dtype(zp.dtype) if zp is not None else np.dtype(np.uint8)
    info = np.iinfo(dt)
    return {"scale": float(s.reshape(())), "zero_point": int(zp.reshape(())) if zp is not None else 0,
            "qmin": int(info.min), "qmax": int(info.max), "qtype": dt.name}


@model_errors
def grids(model_bytes: bytes) -> dict[str, dict[str, Any]]:
    """Node name -> the quantization grid it sits on: a clip-like node fed by a DequantizeLinear (that grid),
    and each QuantizeLinear (its own). Main graph only."""
    m = onnx.load_from_string(model_bytes)
    consts = constants(m.graph)
    consts.update({t.name: numpy_helper.to_array(t) for t in m.graph.initializer if int(np.prod(t.dims)) == 1})
    producer = {o: n for n in m.graph.node for o in n.output}
    out: dict[str, dict[str, Any]] = {}
    for n in m.graph.node:
        name = n.name or (n.output[0] if n.output else "")
        src = producer.get(n.input[0]) if n.input else None
        if n.op_type == "QuantizeLinear":
            g = _grid(n, consts)
        elif src is not None and src.op_type == "DequantizeLinear":
            g = _grid(src, consts)
        else:
            g = None
        if g is not None:
            out[name] = g
    return out


def _on_grid(v: float, g: dict[str, Any]) -> bool:
    k = v / g["scale"] + g["zero_point"]
    return math.isfinite(k) and abs(k - round(k)) < 1e-3 and g["qmin"] <= round(k) <= g["qmax"]


@behaviour.states("quantize-saturation")
def quantize_saturation(c: ClipLike, v: float, outs: dict[str, float], dtype: np.dtype) -> str | None:
    """A clip on a quantization grid whose input lies beyond a bound: each engine gives the bound (the clip in
    float) or a grid value within one step inside it (the clip folded into the integer range); or a non-finite
    element into QuantizeLinear (QuantizeLinear-13 saturates; a NaN has no integer value)."""
    g = c.params.get("grid")
    if g is None:
        return None
    if c.op == "QuantizeLinear":  # non-finite, or beyond float32 once divided by the scale (3.4e38 / 0.1)
        with np.errstate(over="ignore"):
            k = float(np.float32(v) / np.float32(g["scale"])) if math.isfinite(v) else v
        return behaviour.row("quantize-saturation").cause if not math.isfinite(k) else None
    # At or beyond the bound: the folded integer bound lies inside it, so the bound itself moves too.
    for b, beyond in ((c.hi, v >= (c.hi if c.hi is not None else math.inf)),
                      (c.lo, v <= (c.lo if c.lo is not None else -math.inf))):
        if b is None or not beyond:
            continue
        if all(o == b or (_on_grid(o, g) and abs(o - b) <= g["scale"] * 1.0001
                          and (o <= b if b == c.hi else o >= b)) for o in outs.values()):
            return behaviour.row("quantize-saturation").cause
    return None


@behaviour.states("quantize-rounding")
def quantize_rounding(c: ClipLike, v: float, outs: dict[str, float], dtype: np.dtype) -> str | None:
    """QuantizeLinear-13: 'rounding to nearest ties to even'. An element exactly between two steps, where the
    engines' integers differ by one (one rounds half away from zero)."""
    g = c.params.get("grid")
    if g is None or not math.isfinite(v):
        return None
    with np.errstate(over="ignore"):
        k = float(np.float32(v) / np.float32(g["scale"]))
    if not math.isfinite(k):  # beyond float32 once divided by the scale (3.4e38 / 0.1): no tie to round
        return None
    if abs(k - math.floor(k) - 0.5) > 1e-6:
        return None
    got = [o for o in outs.values() if math.isfinite(o)]
    step = 1.0 if c.op == "QuantizeLinear" else g["scale"]
    return behaviour.row("quantize-rounding").cause if got and max(got) - min(got) <= step * 1.0001 else None


RULES = (quantize_saturation, quantize_rounding)


def attach(clips: dict[str, ClipLike], found: dict[str, dict[str, Any]]) -> None:
    """Give each clip-like node on a grid its grid (the quantized rules read c.params['grid'])."""
    for name, g in found.items():
        if name in clips:
            clips[name].params["grid"] = g


MAX_FALLBACK = 16  # clip-like nodes captured one at a time after a bisection (each costs a run per engine)


def capture_clip_likes(execute: Any, model: Any, runs: Any, opts: Any) -> list[str]:
    """After the one-at-a-time fallback (bisection), capture each clip-like node's data input and outputs in a
    run of its own per engine, so that every differing clip-like node is listed, each with its own inputs from
    the same run as its output (its introduced/inherited reading needs both). Returns the nodes captured; past
    MAX_FALLBACK nodes the rest are left out and the walk reports none of them. `model`: each side's
    (clipbridge.diff.sides.Models)."""
    done = []
    for node in runs.plan.nodes:
        clip = runs.plan.clips.get(node.name)
        if clip is None or len(done) >= MAX_FALLBACK:
            continue
        tensors = [t for t in [clip.x, *node.outputs] if t and t not in runs.plan.constants
                   and t not in runs.plan.feeds]
        if all(t in runs.values[e] for e in opts.engines for t in tensors):
            continue
        for engine in opts.engines:
            r = execute(f"diff:{engine}", engines.run, engine, model.of(engine), runs.plan.feeds, tensors,
                        opts.precision)
            runs.values[engine].update({t: r["values"][t] for t in tensors if t in r["values"]})
        done.append(node.name)
    runs.masks.clear()
    return done
