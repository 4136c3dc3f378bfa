"""Meaning -> a Core ML MIL clip: the compact spec, its findings and (lazily) the MIL program text."""

from __future__ import annotations

import math

from clipbridge.core import exact
from clipbridge.core.findings import Code, Finding, Notes, Severity
from clipbridge.core.meaning import Meaning, NanBound, Order, State
from clipbridge.core.numbers import Number, format_number
from clipbridge.dialects.coreml.meaning import normalize, opset_coreml, resolve
from clipbridge.dialects.coreml.mil import mil_text
from clipbridge.dialects.coreml.spec import NAME, NAME_OF, OPSETS, CoreMLSpec, CoreMLTarget
from clipbridge.dialects.kit.common import Emitted, LazyArtifacts, Mode, default_made_explicit
from clipbridge.dialects.kit.crossed import collapse_crossed


def _unsupported(code: Code, message: str, src: Meaning) -> Emitted:
    return Emitted(None, None, [Finding(code, Severity.ERROR, message, src.describe(), "not expressible")],
                   unsupported=True)


def _values(src: Meaning, mode: Mode, notes: Notes) -> list[Number]:
    """Literal: the source's numbers (each rounded once to T by resolve). Preserve: the effective bounds, a NaN
    bound the source ignores or zeroes rewritten, min-wins order as alpha = beta = min."""
    assert src.lower is not None and src.upper is not None
    if mode is Mode.LITERAL:
        out = []
        for b, side in ((src.lower, "alpha"), (src.upper, "beta")):
            out.append(b.value if default_made_explicit(b, side, "Core ML clip", notes) else b.given)
        return out
    values: list[Number] = [src.lower.value, src.upper.value]
    for i, side in enumerate(("alpha", "beta")):
        if exact.is_nan(values[i]) and src.nan_bound in (NanBound.IGNORE, NanBound.ZERO):
            values[i] = 0.0 if src.nan_bound is NanBound.ZERO else (-math.inf if i == 0 else math.inf)
            notes.add(Code.NAN_BOUND, Severity.INFO, f"The source reads a NaN {side} as {format_number(values[i])}; "
                      f"Core ML does not document NaN: wrote {format_number(values[i])}")
    # iOS15/16 clip gives beta; iOS17+ refuses alpha >= beta, so a max-wins source is left for resolve to refuse.
    return collapse_crossed(src, values, notes, Order.MAX_WINS, "The source gives min when min > max; Core ML clip "
                            "gives beta: emitted alpha = beta = min")


def emit(src: Meaning, target: CoreMLTarget, mode: Mode, shape: list | None) -> Emitted:
    """A Core ML MIL clip (compact spec and MIL text) computing `src`."""
    opset = opset_coreml(target.version or OPSETS[-1], "version")
    dt = src.dtype
    if dt.name not in NAME_OF:
        return _unsupported(Code.DTYPE_UNSUPPORTED, f"Core ML clip takes fp16 and fp32 (T), not {dt.name}; an "
                            "integer clip would be maximum then minimum", src)
    if src.scale_bias is not None:
        return _unsupported(Code.SCALE_BIAS, "ScaleBias is not expressed in the Core ML artifact", src)
    if src.has_tensor_bounds:
        return _unsupported(Code.TENSOR_BOUNDS, "Core ML clip's alpha and beta are const scalars", src)
    if src.result_dtype not in (None, dt):
        return _unsupported(Code.DTYPE_PROMOTION, "Core ML clip keeps the input's dtype", src)
    notes = Notes()
    values = _values(src, mode, notes)
    spec = CoreMLSpec(dialect=NAME, opset=opset, dtype=NAME_OF[dt.name], alpha=values[0], beta=values[1],
                      shape=shape)
    meaning = resolve(spec)
    if meaning.state is State.REJECTED:
        return Emitted(normalize(spec), meaning, notes.items + [Finding(
            Code.MIN_GREATER_THAN_MAX, Severity.ERROR, f"Core ML {opset} refuses to build this clip: "
            f"{meaning.reason} (iOS15/iOS16 clip gives beta)", src.describe(), "rejected")], unsupported=True)
    if shape == []:
        notes.add(Code.RANK_UNSUPPORTED, Severity.INFO, "A Core ML program input has rank >= 1: the MIL artifact's "
                  "input is [1] (the clip is elementwise, so the values are the same)")
    return Emitted(normalize(spec), meaning, notes.items, LazyArtifacts(lambda: _artifacts(spec, shape)))


def _artifacts(spec: CoreMLSpec, shape: list | None) -> dict[str, str]:
    text = mil_text(spec if shape != [] else spec.model_copy(update={"shape": [1]}))
    return {"coreml_mil": text} if text else {}
