"""Meaning -> a TOSA 1.0 CLAMP: the compact spec, its findings and (lazily) the MLIR text and flatbuffer."""

from __future__ import annotations

import math

from clipbridge.core import exact
from clipbridge.core.dtypes import DType
from clipbridge.core.errors import SpecError
from clipbridge.core.findings import Code, Finding, Notes, Severity
from clipbridge.core.meaning import Bound, Meaning, NanBound, NanInput, State
from clipbridge.core.numbers import Number, format_number
from clipbridge.dialects.kit.common import Emitted, LazyArtifacts, Mode, TypeWords, default_made_explicit, literal_integer_cast
from clipbridge.dialects.kit.crossed import collapse_crossed
from clipbridge.dialects.tosa.catalogue import ERROR_NAN, ERROR_ORDER, TYPESUPPORT
from clipbridge.dialects.tosa.meaning import nan_mode_of, normalize, resolve, shape_tosa, version_tosa
from clipbridge.dialects.tosa.mlir import mlir_text
from clipbridge.dialects.tosa.patch import flatbuffer_b64
from clipbridge.dialects.tosa.spec import NAME_OF, VERSIONS, TosaSpec, TosaTarget


def _literal(bound: Bound, dt: DType, field: str, notes: Notes) -> Number:
    """Literal mode: the source's number as written, made a value of in_out_t (TOSA has no defaults)."""
    name = NAME_OF[dt.name]
    if default_made_explicit(bound, field, "TOSA CLAMP", notes):
        return bound.value
    given = bound.given
    if not dt.is_float:
        return literal_integer_cast(given, dt, field, notes, TypeWords(f"an {name} attribute", name, f"an {name}",
                                                                       name))
    if exact.is_nan(given) or exact.is_inf(given) or dt.contains(given):
        return given
    out = dt.round(given)
    notes.add(Code.BOUND_PRECISION, Severity.INFO, f"{field} {format_number(given)} is not a {name} value (an "
              f"in_out_t attribute): literal mode wrote the nearest, {format_number(out)}")
    return out


def _preserve(src: Meaning, notes: Notes) -> tuple[list[Number], str] | Finding:
    """Preserve mode: the source's effective bounds and NaN rule in CLAMP's terms, or why CLAMP cannot."""
    assert src.lower is not None and src.upper is not None
    vals: list[Number] = [src.lower.value, src.upper.value]
    for i, side in enumerate(("min_val", "max_val")):
        if not exact.is_nan(vals[i]):
            continue
        if src.nan_bound in (NanBound.IGNORE, NanBound.UNDOCUMENTED, NanBound.ZERO):
            vals[i] = 0.0 if src.nan_bound is NanBound.ZERO else (-math.inf if i == 0 else math.inf)
            sev = Severity.WARNING if src.nan_bound is NanBound.UNDOCUMENTED else Severity.INFO
            notes.add(Code.NAN_BOUND, sev, f"The source reads a NaN {side} as {src.nan_bound.value}; TOSA rejects "
                      f"NaN ({ERROR_NAN}): wrote {format_number(vals[i])}")
        else:
            return Finding(Code.NAN_BOUND, Severity.ERROR, f"A NaN bound makes every output NaN in the source; "
                           f"CLAMP cannot compute that: {ERROR_NAN}", f"NaN bound: {src.nan_bound.value}",
                           "rejected")
    vals = collapse_crossed(src, vals, notes, None, lambda v: (
        f"min > max gives {format_number(v)} in the source ({src.order.value}); TOSA rejects it ({ERROR_ORDER}): "
        f"wrote min_val = max_val = {format_number(v)}"))
    mode = "PROPAGATE"
    if src.nan_input is NanInput.TO_LOWER:
        mode = "IGNORE"
    elif src.nan_input is NanInput.TO_ZERO and vals[0] >= 0:
        mode = "IGNORE"  # NaN -> 0 -> clipped to min_val when min_val >= 0: the same as IGNORE
    return vals, mode


def emit(src: Meaning, target: TosaTarget, mode: Mode, shape: list | None) -> Emitted:
    """A TOSA CLAMP (compact spec, MLIR text and, with tosa-tools, the flatbuffer) computing `src`."""
    version_tosa(target.version or VERSIONS[-1])
    dt = src.dtype
    why = _inexpressible(src) or _shape_finding(shape)
    if why is not None:
        return Emitted(None, None, [why], unsupported=True)
    notes = Notes()
    assert src.lower is not None and src.upper is not None
    if mode is Mode.LITERAL:
        vals = [_literal(src.lower, dt, "min_val", notes), _literal(src.upper, dt, "max_val", notes)]
        nan_mode = nan_mode_of(src) if dt.is_float else "PROPAGATE"
    else:
        got = _preserve(src, notes)
        if isinstance(got, Finding):
            return Emitted(None, None, notes.items + [got], unsupported=True)
        vals, nan_mode = got
    spec = TosaSpec(dialect="tosa", version="1.0", dtype=NAME_OF[dt.name], shape=shape, min_val=vals[0],
                    max_val=vals[1], nan_mode=nan_mode)
    meaning = resolve(spec)
    if meaning.state is State.REJECTED:
        nan = any(exact.is_nan(v) for v in vals)
        return Emitted(normalize(spec), meaning, notes.items + [Finding(
            Code.NAN_BOUND if nan else Code.MIN_GREATER_THAN_MAX, Severity.ERROR,
            f"TOSA refuses this CLAMP: {meaning.reason}", src.describe(), "rejected (invalid graph)")],
            unsupported=True)
    return Emitted(normalize(spec), meaning, notes.items, LazyArtifacts(lambda: _artifacts(spec, meaning)))


def _artifacts(spec: TosaSpec, meaning: Meaning) -> dict[str, str]:
    """The MLIR text, and the flatbuffer where one can be written."""
    artifacts = {"tosa_mlir": mlir_text(spec, meaning)}
    fb = flatbuffer_b64(spec, meaning)
    if fb is not None:
        artifacts["tosa_flatbuffer"] = fb
    return artifacts


def _inexpressible(src: Meaning) -> Finding | None:
    """What no CLAMP expresses: a dtype outside typesupport, ScaleBias, per-element bounds, promotion."""
    if src.dtype.name not in NAME_OF:
        return Finding(Code.DTYPE_UNSUPPORTED, Severity.ERROR, f"{TYPESUPPORT}: no {src.dtype.name} CLAMP",
                       src.dtype.name, "int8, int16, fp16, bf16, fp32")
    if src.scale_bias is not None:
        return Finding(Code.SCALE_BIAS, Severity.ERROR, "ScaleBias is not expressed in the TOSA artifact (a MUL and "
                       "ADD before CLAMP would be needed)", "x*Scale+Bias before clipping", "not expressible")
    if src.has_tensor_bounds:
        return Finding(Code.TENSOR_BOUNDS, Severity.ERROR, "CLAMP's min_val/max_val are scalar attributes; "
                       "per-element bounds need MAXIMUM then MINIMUM", "per-element bounds", "scalar attributes")
    if src.result_dtype not in (None, src.dtype):
        return Finding(Code.DTYPE_PROMOTION, Severity.ERROR, "CLAMP's output has the input's type (in_out_t); the "
                       f"source promotes to {src.out_dtype.name}", src.out_dtype.name, src.dtype.name)
    return None


def _shape_finding(shape: list | None) -> Finding | None:
    try:
        shape_tosa(shape)
    except SpecError as exc:
        return Finding(Code.RANK_UNSUPPORTED, Severity.ERROR, exc.message, str(shape), "int32 dimensions")
    return None
