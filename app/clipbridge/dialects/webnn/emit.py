"""WebNN clamp's emit: a Meaning -> a WebNN spec computing it under the spec reading, with findings and the
JavaScript builder calls (app/clipbridge/dialects/webnn/js.py) as a lazy artifact.

No WebNN engine runs on Linux (WebNN lives in browsers): `engines` is empty and execution is the numpy kernel
on the meaning of the chosen reading.
"""

from __future__ import annotations

import math

from clipbridge.core import exact
from clipbridge.dialects.kit.common import Emitted, LazyArtifacts, Mode
from clipbridge.dialects.kit.crossed import collapse_crossed
from clipbridge.dialects.webnn.js import js_text
from clipbridge.dialects.webnn.meaning import TYPE_ERROR, normalize, resolve, version_webnn
from clipbridge.dialects.webnn.spec import (DATA_TYPES, NAME, NAME_OF, REQUIRED_RANKS, VERSIONS, BigInt, WebNNSpec,
                                     WebNNTarget)
from clipbridge.core.dtypes import DType
from clipbridge.core.findings import Code, Finding, Notes, Severity
from clipbridge.core.meaning import Bound, EngineNote, Meaning, NanBound, State, evolve
from clipbridge.core.numbers import Number, format_number

JS_SAFE = 2**53
ORT_SOURCE = "onnx"  # the dialect whose Clip onnxruntime's WebNN execution provider turns into clamp
NOTE_ORT_FLOAT = EngineNote("onnxruntime WebNN EP", "onnxruntime's WebNN execution provider reads Clip's min/max "
                            "into float (clip_op_builder.cc GetClipMinMax) before builder.clamp: integer bounds "
                            "beyond 2^24 lose precision on that path.")


def _unsupported(code: Code, message: str, source: str = "", target: str = "not expressible") -> Emitted:
    return Emitted(None, None, [Finding(code, Severity.ERROR, message, source, target)], unsupported=True)


def _number_for(value: Number, dt: DType) -> Number:
    """How an exact bound value is written: a BigInt where a JS Number cannot hold the integer exactly."""
    if not dt.is_float and isinstance(value, int) and abs(value) > JS_SAFE:
        return BigInt(value)
    return value


def _literal(bound: Bound | None, dt: DType, side: str, notes: Notes) -> Number | None:
    """Literal mode: the source's number as written (a BigInt for an integer beyond 2^53 of int64/uint64);
    a source default becomes an omitted option, which WebNN reads as no clamp."""
    if bound is None:
        return None
    if bound.default or bound.given is None:
        notes.add(Code.DEFAULT_BOUND, Severity.INFO, f"The source's {side} is its default "
                  f"({format_number(bound.value)}); WebNN leaves {side} out: no clamp on that side")
        return None
    given = bound.given
    if not dt.is_float and exact.is_integral(given) and not isinstance(given, float):
        return _number_for(int(given), dt)
    return given


def _open_side(v: Number, dt: DType, side: str) -> bool:
    """A value that clamps nothing on its side: +-inf for float types, the type's extreme for integer types."""
    if exact.is_nan(v):
        return False
    if dt.is_float:
        return v == (-math.inf if side == "minValue" else math.inf)
    return v == (dt.lowest() if side == "minValue" else dt.highest())


def _preserve(src: Meaning, notes: Notes) -> list[Number | None] | Emitted:
    """Preserve mode: the source's effective bounds (values of the type) so that the spec reading computes the
    same; min > max becomes min = max (WebNN throws on min > max); an ignored NaN bound is left out."""
    assert src.lower is not None and src.upper is not None
    dt = src.dtype
    want: list[Number | None] = [src.lower.value, src.upper.value]
    for i, side in enumerate(("minValue", "maxValue")):
        if not exact.is_nan(want[i]):
            continue
        if src.nan_bound is NanBound.PROPAGATE:
            return _unsupported(Code.NAN_BOUND, "The source's NaN bound makes every output NaN; no WebNN clamp "
                                "computes that (a NaN option is unspecified in the spec, ignored by Chromium)",
                                f"NaN bound: {src.nan_bound.value}")
        if src.nan_bound is NanBound.ZERO:
            want[i] = 0.0 if dt.is_float else 0
            notes.add(Code.NAN_BOUND, Severity.INFO, f"The source reads its NaN {side} as 0: wrote 0")
        else:  # IGNORE, or UNDOCUMENTED (executed as ignored)
            want[i] = None
            how = "ignores" if src.nan_bound is NanBound.IGNORE else "does not document (executed as ignored)"
            notes.add(Code.NAN_BOUND, Severity.INFO if src.nan_bound is NanBound.IGNORE else Severity.WARNING,
                      f"The source {how} its NaN {side}: left it out (no clamp on that side)")
    lo, hi = collapse_crossed(src, want, notes, None, lambda v: (
        f"min > max emitted as minValue = maxValue = {format_number(v)} (WebNN throws a TypeError on minValue > "
        "maxValue)"))
    out: list[Number | None] = []
    for v, side in ((lo, "minValue"), (hi, "maxValue")):
        out.append(None if v is None or _open_side(v, dt, side) else _number_for(v, dt))
    return out


def emit(src: Meaning, target: WebNNTarget, mode: Mode, shape: list | None) -> Emitted:
    """A WebNN clamp (spec and JavaScript builder call) computing `src` under the spec reading."""
    version_webnn(target.version or VERSIONS[-1])
    dt = src.dtype
    if dt.name not in NAME_OF:
        return _unsupported(Code.DTYPE_UNSUPPORTED, f"{dt.name} is not a WebNN MLOperandDataType (WebNN has "
                            f"{', '.join(DATA_TYPES)})", dt.name)
    if src.scale_bias is not None:
        return _unsupported(Code.SCALE_BIAS, "ScaleBias is not expressed by WebNN clamp (a mul and add before it "
                            "would be needed)", "x*Scale+Bias before clipping")
    if src.has_tensor_bounds:
        return _unsupported(Code.TENSOR_BOUNDS, "WebNN clamp takes scalar minValue/maxValue only (per-element "
                            "bounds need builder.max then builder.min)", "per-element bounds")
    if src.result_dtype not in (None, dt):
        return _unsupported(Code.DTYPE_PROMOTION, f"WebNN clamp's output has the input's dataType; the source's "
                            f"is {src.out_dtype.name}", f"result {src.out_dtype.name}")
    notes = Notes()
    if mode is Mode.LITERAL:
        values: list[Number | None] = [_literal(src.lower, dt, "minValue", notes),
                                       _literal(src.upper, dt, "maxValue", notes)]
    else:
        got = _preserve(src, notes)
        if isinstance(got, Emitted):
            return got
        values = got
    spec = WebNNSpec(dialect=NAME, dataType=NAME_OF[dt.name], shape=shape, minValue=values[0], maxValue=values[1])
    meaning = resolve(spec)
    if meaning.state is State.REJECTED:
        ort = (" onnxruntime's WebNN execution provider copies Clip's min/max into clamp's options the same way, "
               "so this model fails to build there") if src.dialect == ORT_SOURCE else ""
        return Emitted(normalize(spec), meaning, notes.items + [Finding(
            Code.MIN_GREATER_THAN_MAX, Severity.ERROR, f"WebNN refuses to build this clamp: {TYPE_ERROR}.{ort}",
            src.describe(), "TypeError")], unsupported=True)
    _shape_notes(shape, notes)
    if src.dialect == ORT_SOURCE and _loses_in_float(src):
        meaning = _with_note(meaning, NOTE_ORT_FLOAT)
    return Emitted(normalize(spec), meaning, notes.items, LazyArtifacts(lambda: {"webnn_js": js_text(spec)}))


def _loses_in_float(src: Meaning) -> bool:
    """An integer bound that a C float cannot hold (beyond 2^24)."""
    if src.dtype.is_float:
        return False
    return any(b is not None and not b.default and exact.to_float32(b.value) != b.value
               for b in (src.lower, src.upper))


def _with_note(m: Meaning, note: EngineNote) -> Meaning:
    alts = tuple((name, evolve(a, engine_notes=a.engine_notes + (note,))) for name, a in m.alternates)
    return evolve(m, engine_notes=m.engine_notes + (note,), alternates=alts)


def _shape_notes(shape: list | None, notes: Notes) -> None:
    """WebNN operand shapes are static; ranks 0 to 5 are the ones every implementation must take."""
    if shape is None:
        notes.add(Code.SHAPE_UNKNOWN, Severity.INFO, "The source gives no shape; builder.input needs one: the "
                  "artifact leaves `shape` to fill in")
        return
    if any(not isinstance(d, int) for d in shape):
        notes.add(Code.SHAPE_UNKNOWN, Severity.WARNING, "WebNN operand shapes are static: the artifact declares "
                  "each unknown size as a constant to set")
    if len(shape) > REQUIRED_RANKS[1]:
        notes.add(Code.RANK_UNSUPPORTED, Severity.WARNING, f"Rank {len(shape)}: WebNN requires ranks 0 to 5 of "
                  "every implementation; higher ranks work only where opSupportLimits().clamp.input.rankRange "
                  "allows")


def target(version: str | None) -> WebNNTarget:
    return WebNNTarget(dialect=NAME, version=version)  # checked when emitting, located at the target
