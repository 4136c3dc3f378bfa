"""TOSA 1.0 `CLAMP` (arm/tosa-specification): spec, meaning, emit (MLIR text and a flatbuffer), reference model.

CLAMP.tosac: `ERROR_IF(max_val < min_val); ERROR_IF(is_a_NaN(min_val) || is_a_NaN(max_val));` then per element
`apply_clip_s(value, min_val, max_val, nan_mode)` = apply_min_s(apply_max_s(value, min_val), max_val). min_val and
max_val are required attributes of type in_out_t (typed like the input; no defaults); nan_mode is PROPAGATE
(default) or IGNORE, "ignored by non floating-point types". typesupport: i8_t, i16_t, fp16_t, bf16_t, fp32_t.
Implementation latitude the spec grants (modelled as rules, never as drift): "The sign of a zero is ignored", a
zero result "must be either +0.0 or -0.0 but either sign is permitted", and "bf16_t, fp16_t, and fp32_t subnormal
values may be flushed to zero before computation".
"""

from __future__ import annotations

import base64
import math
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import StringConstraints

from app.core import exact
from app.dialects import tosa_engine
from app.dialects.kit.base import Dialect, source_resolver
from app.dialects.kit.common import Emitted, LazyArtifacts, Mode, TypeWords, default_made_explicit, literal_integer_cast
from app.dialects.kit.spec_base import Shape, WireNumber, _Strict, spec_json
from app.core.dtypes import BFLOAT16, FLOAT16, FLOAT32, FLOAT64, INT8, INT16, INT32, INT64, DType
from app.core.errors import RejectedSpec, SpecError
from app.core.findings import Code, Finding, Notes, Severity
from app.core.meaning import Bound, Meaning, NanBound, NanInput, Order, State
from app.core.numbers import Number, format_number
from app.core.suggest import one_of

NAME = "tosa"
VERSIONS = ("1.0",)
OP_VERSION = "CLAMP (TOSA 1.0)"
SPEC_SRC = "arm/tosa-specification pseudocode/operators/CLAMP.tosac"
DOC_SRC = "arm/tosa-specification chapters/activation_funcs.adoc"
# CLAMP's typesupport in tosa.xml (all version_added="1.0"), by the profile or extension that brings each.
DTYPES: dict[str, DType] = {"int8": INT8, "int16": INT16, "fp16": FLOAT16, "bf16": BFLOAT16, "fp32": FLOAT32}
PROFILES = {"int8": "PRO-INT", "int16": "EXT-INT16", "fp16": "PRO-FP", "bf16": "EXT-BF16", "fp32": "PRO-FP"}
NAME_OF = {dt.name: name for name, dt in DTYPES.items()}
MLIR_TYPE = {"int8": "i8", "int16": "i16", "fp16": "f16", "bf16": "bf16", "fp32": "f32"}
# Types a TOSA graph or the reference model knows that CLAMP's typesupport lacks: a rejected CLAMP, not a typo.
# fp64 exists only inside the reference model's precise mode (-p computes fp32 graphs in double), never as a tensor.
OUTSIDE_TYPESUPPORT: dict[str, DType] = {"int32": INT32, "int64": INT64, "fp64": FLOAT64}
UNMODELLED = ("bool", "int4", "int48", "fp8e4m3", "fp8e5m2")  # TOSA types clipbridge has no dtype for
NAN_MODES = ("PROPAGATE", "IGNORE")
TOSA_SPELLING = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float64": "fp64"}  # clipbridge's names
TYPESUPPORT = "CLAMP typesupport (tosa.xml, TOSA 1.0): i8_t, i16_t, fp16_t, bf16_t, fp32_t"
ERROR_ORDER = "ERROR_IF(max_val < min_val)"
ERROR_NAN = "ERROR_IF(is_a_NaN(min_val) || is_a_NaN(max_val))"
LATITUDE = ("signed zero: 'The sign of a zero is ignored'; a zero result may be +0.0 or -0.0 (either sign "
            "permitted)", "subnormals: bf16/fp16/fp32 subnormal values may be flushed to zero before computation "
            "(x=1e-40 in fp32 may give 1e-40 or 0)")
ENGINE = "tosa-reference"
INT32_MAX = 2**31 - 1


class TosaSpec(_Strict):
    """TOSA CLAMP: `dtype` (int8, int16, fp16, bf16, fp32), `shape`, `min_val`/`max_val`, `nan_mode`."""

    dialect: Literal["tosa"]
    version: Annotated[str, StringConstraints(max_length=16)] = "1.0"
    dtype: Annotated[str, StringConstraints(max_length=16)]
    shape: Shape | None = None
    min_val: WireNumber
    max_val: WireNumber
    nan_mode: Annotated[str, StringConstraints(max_length=16)] = "PROPAGATE"


class TosaTarget(_Strict):
    dialect: Literal["tosa"]
    version: Annotated[str, StringConstraints(max_length=16)] | None = None


# --- rules ------------------------------------------------------------------------------------------------------

def version_tosa(text: str, loc: str = "version") -> str:
    """CLAMP with min_val/max_val/nan_mode is TOSA 1.0's ('1', '1.0', '1.0.0', 'v1.0' name it)."""
    key = text.strip().lower().lstrip("v")
    if key in ("1", "1.0", "1.0.0"):
        return "1.0"
    if key.startswith("0."):
        raise SpecError(f"TOSA {text.strip()} CLAMP had min_int/max_int (i64) and min_fp/max_fp (f32) attributes; "
                        "only TOSA 1.0's min_val/max_val (typed like the input) are modelled", loc)
    raise SpecError(one_of("Unknown TOSA version", text, VERSIONS), loc)


def dtype_tosa(name: str, loc: str = "dtype") -> tuple[str, DType, bool]:
    """The input's in_out_t by its TOSA name; the flag says whether CLAMP's typesupport has it (tosa.xml)."""
    key = name.strip().lower()
    if key in DTYPES:
        return key, DTYPES[key], True
    if key in OUTSIDE_TYPESUPPORT:
        return key, OUTSIDE_TYPESUPPORT[key], False
    if key in TOSA_SPELLING:
        raise SpecError(f"{one_of('Unknown TOSA dtype for CLAMP', name, DTYPES)}. Did you mean "
                        f"{TOSA_SPELLING[key]!r}?", loc)
    if key in UNMODELLED:
        raise SpecError(f"{key} is a TOSA type outside {TYPESUPPORT}, and clipbridge has no {key} dtype", loc)
    raise SpecError(one_of("Unknown TOSA dtype for CLAMP", name, DTYPES), loc)


def nan_mode_tosa(text: str, loc: str = "nan_mode") -> str:
    """nan_mode: 'PROPAGATE or IGNORE. Set to PROPAGATE by default.' (tosa.xml)."""
    key = text.strip().upper()
    if key not in NAN_MODES:
        raise SpecError(one_of("Unknown TOSA nan_mode", text, NAN_MODES), loc)
    return key


def nan_input_tosa(mode: str, dt: DType) -> NanInput:
    """compare_nan: PROPAGATE returns NaN; IGNORE returns the non-NaN operand, so a NaN input becomes min_val
    (apply_max_s(NaN, min_val) = min_val, then min(min_val, max_val) = min_val). Integers: nan_mode ignored."""
    if dt.is_float and mode == "IGNORE":
        return NanInput.TO_LOWER
    return NanInput.PROPAGATE


def typed_bound_tosa(value: Number, dt: DType, name: str, field: str) -> Bound:
    """min_val/max_val are attributes of type in_out_t: the number must be a value of the input's type. The spec
    gives no rounding rule for attributes, so a number the type cannot hold is an error, not a rounding."""
    if dt.is_float:
        if exact.is_nan(value) or exact.is_inf(value) or dt.contains(value):
            return Bound(value if isinstance(value, float) else dt.round(value), value)
        r = dt.round(value)
        below, above = (r, dt.next_up(r)) if r < value else (dt.next_down(r), r)
        near = [f"{word} {format_number(v)}" for word, v in (("below", below), ("above", above))
                if not math.isinf(v)]
        raise SpecError(f"{field} is an in_out_t attribute: it must be a {name} value, and TOSA gives no rounding "
                        f"rule for attributes. Got: {format_number(value)}. Nearest {name} values: "
                        + ", ".join(near), field)
    if not exact.is_integral(value):
        raise SpecError(f"{field} is an in_out_t attribute: it must be a {name} value (an integer). "
                        f"Got: {format_number(value)}", field)
    if not dt.contains(value):
        raise SpecError(f"{field} is an in_out_t attribute: it must be a {name} value in [{dt.lowest()}, "
                        f"{dt.highest()}]. Got: {format_number(value)}", field)
    return Bound(int(value), value)


def shape_tosa(shape: list | None, loc: str = "shape") -> None:
    """tosa.fbs `TosaTensor.shape: [int32]`: a TOSA graph cannot carry a dimension beyond 2^31-1."""
    for d in shape or ():
        if isinstance(d, int) and d > INT32_MAX:
            raise SpecError(f"a TOSA tensor's dimensions are int32 (tosa.fbs TosaTensor.shape). Got: {d}", loc)


def error_if_tosa(lo: Bound, hi: Bound, dt: DType) -> tuple[str | None, bool]:
    """CLAMP.tosac's two ERROR_IFs, in the spec's order: (the failing condition or None, whether it is the NaN one).

    For floats `max_val < min_val` is IEEE: -0.0 < +0.0 is false ('The sign of a zero is ignored')."""
    if dt.is_float and (lo.is_nan or hi.is_nan):
        return ERROR_NAN, True  # the first ERROR_IF is false for NaN operands; the second one fires
    if hi.value < lo.value:
        return ERROR_ORDER, False
    return None, False


def resolve(spec: TosaSpec) -> Meaning:
    """The function CLAMP computes, or a rejection quoting the ERROR_IF / typesupport rule it breaks."""
    version_tosa(spec.version)
    shape_tosa(spec.shape)
    name, dt, supported = dtype_tosa(spec.dtype)
    mode = nan_mode_tosa(spec.nan_mode)
    lo = typed_bound_tosa(spec.min_val, dt, name, "min_val")
    hi = typed_bound_tosa(spec.max_val, dt, name, "max_val")
    rules = (f"TOSA 1.0 CLAMP: apply_min_s(apply_max_s(x, min_val), max_val) ({SPEC_SRC})",
             f"{ERROR_ORDER}; {ERROR_NAN}: min > max and NaN bounds are invalid graphs",
             "min_val/max_val required, of type in_out_t (no defaults, no rounding)",
             f"nan_mode {mode}: " + ("a NaN input gives min_val (compare_nan returns the non-NaN operand)"
                                     if mode == "IGNORE" else "a NaN input gives NaN")
             + ("" if dt.is_float else " (ignored by integer types)"),
             *(f"latitude, {t}" for t in LATITUDE))
    state, reason = State.DEFINED, None
    if not supported:
        state, reason = State.REJECTED, f"{TYPESUPPORT}; {name} is not among them"
    else:
        failed, _ = error_if_tosa(lo, hi, dt)
        if failed is not None:
            state, reason = State.REJECTED, f"{failed} ({SPEC_SRC})"
    return Meaning(NAME, OP_VERSION, dt, lo, hi, order=Order.REJECTED, nan_input=nan_input_tosa(mode, dt),
                   nan_bound=NanBound.REJECTED, state=state, reason=reason, rules=rules)


def normalize(spec: TosaSpec) -> dict:
    out = spec_json(spec)
    out["version"] = version_tosa(spec.version)
    out["dtype"] = spec.dtype.strip().lower()
    out["nan_mode"] = nan_mode_tosa(spec.nan_mode)
    return out


resolve_source = source_resolver(NAME, resolve, normalize)


def nan_mode_of(m: Meaning) -> str:
    """The nan_mode that computes a meaning's NaN-input rule (IGNORE for to-lower)."""
    return "IGNORE" if m.nan_input is NanInput.TO_LOWER else "PROPAGATE"


# --- emit -------------------------------------------------------------------------------------------------------

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
    if vals[1] < vals[0]:
        pick = vals[0] if src.order in (Order.MIN_WINS, Order.AMBIGUOUS) else vals[1]
        sev = Severity.WARNING if src.order is Order.AMBIGUOUS else Severity.INFO
        notes.add(Code.MIN_GREATER_THAN_MAX, sev, f"min > max gives {format_number(pick)} in the source "
                  f"({src.order.value}); TOSA rejects it ({ERROR_ORDER}): wrote min_val = max_val = "
                  f"{format_number(pick)}")
        vals = [pick, pick]
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


def mlir_attr(value: Number, name: str) -> str:
    """An MLIR attribute that parses to exactly `value` of TOSA type `name` (hex bits for NaN/inf)."""
    dt = DTYPES[name]
    t = MLIR_TYPE[name]
    if not dt.is_float:
        return f"{int(value)} : {t}"
    v = float(value)
    if math.isnan(v) or math.isinf(v):
        return f"0x{exact.bits_of(v, dt.np_dtype):0{dt.bits // 4}X} : {t}"
    # A value of the type already: its shortest double decimal reads back to it. MLIR needs a '.' in a float.
    mantissa, e, exp = repr(v).partition("e")
    return (mantissa if "." in mantissa else mantissa + ".0") + e + exp + f" : {t}"


def mlir_text(spec: TosaSpec, m: Meaning) -> str:
    """func.func @main with one tosa.clamp, TOSA 1.0 attributes (the enum nan_mode the shipped tosa-opt parses)."""
    name = NAME_OF[m.dtype.name]
    dims = spec.shape if spec.shape is not None else [None]
    tensor = "tensor<" + "".join(f"{d if isinstance(d, int) else '?'}x" for d in dims) + f"{MLIR_TYPE[name]}>"
    return (f"func.func @main(%input: {tensor}) -> {tensor} {{\n"
            f"  %0 = tosa.clamp %input {{min_val = {mlir_attr(m.lo, name)}, max_val = {mlir_attr(m.hi, name)}, "
            f"nan_mode = {nan_mode_of(m) if m.dtype.is_float else 'PROPAGATE'}}} : ({tensor}) -> {tensor}\n"
            f"  return %0 : {tensor}\n}}\n")


def flatbuffer_b64(spec: TosaSpec, m: Meaning) -> str | None:
    """The one-CLAMP graph as base64 flatbuffer bytes, written by tosa-tools' serializer (None without it)."""
    try:
        import tosa_serializer  # noqa: F401
    except ImportError:
        return None
    shape = spec.shape if spec.shape is not None else [None]
    graph = tosa_engine.flatbuffer(NAME_OF[m.dtype.name], shape, m.lo, m.hi,
                                   nan_mode_of(m) if m.dtype.is_float else "PROPAGATE")
    return base64.b64encode(graph).decode()


# --- interface --------------------------------------------------------------------------------------------------

def target(version: str | None) -> TosaTarget:
    return TosaTarget(dialect="tosa", version=version)


def capability() -> dict[str, Any]:
    return {"dialect": NAME, "default_target": {"dialect": NAME, "version": VERSIONS[-1]},
            "versions": [{"version": OP_VERSION, "selects": "TOSA 1.0", "dtypes": list(DTYPES),
                          "ranks": "0 to MAX_RANK",
                          "rules": [f"{ERROR_ORDER}: min > max is an invalid graph",
                                    f"{ERROR_NAN}: NaN bounds are an invalid graph",
                                    "min_val/max_val required, of type in_out_t (no defaults, no rounding)",
                                    "nan_mode PROPAGATE (default): NaN in, NaN out; IGNORE: NaN in, min_val out",
                                    *LATITUDE,
                                    "no int32/int64/uint8/fp64 CLAMP (typesupport)",
                                    "profiles: " + ", ".join(f"{k} {v}" for k, v in PROFILES.items())]}]}


RULE_TEXTS = {
    Code.MIN_GREATER_THAN_MAX.value: (f"{ERROR_ORDER}: an invalid graph (the reference model refuses it)", SPEC_SRC),
    Code.NAN_BOUND.value: (f"{ERROR_NAN}: an invalid graph", SPEC_SRC),
    Code.NAN_INPUT.value: ("nan_mode PROPAGATE: a NaN input gives NaN; IGNORE: it gives min_val "
                           "(compare_nan returns the non-NaN operand)", DOC_SRC),
    Code.DEFAULT_BOUND.value: ("no defaults: min_val and max_val are required attributes", "tosa.xml CLAMP"),
    Code.BOUND_PRECISION.value: ("min_val/max_val have the input's type in_out_t; no rounding rule is given",
                                 "tosa.xml CLAMP"),
    Code.DTYPE_UNSUPPORTED.value: (TYPESUPPORT, "tosa.xml CLAMP"),
}

EXAMPLES = {
    "relu6-fp32": {"dialect": "tosa", "version": "1.0", "dtype": "fp32", "shape": [1, 4], "min_val": 0,
                   "max_val": 6, "nan_mode": "PROPAGATE"},
    "nan-ignore": {"dialect": "tosa", "dtype": "fp16", "min_val": 0, "max_val": 6, "nan_mode": "IGNORE"},
    "int8-quantized-relu": {"dialect": "tosa", "dtype": "int8", "min_val": -128, "max_val": 127},
    "crossed-rejected": {"dialect": "tosa", "dtype": "fp32", "min_val": 3, "max_val": 1},
}


def _run_reference(sem: Any, x: Any) -> Any:
    """Backend 'tosa-reference': the meaning's CLAMP on the reference model."""
    m = sem.meaning
    dtype = NAME_OF.get(m.dtype.name)
    if dtype is None:
        raise RejectedSpec(f"TOSA CLAMP has no {m.dtype.name} tensor", "spec")
    mode = nan_mode_of(m)
    graph = tosa_engine.flatbuffer(dtype, list(np.shape(x)), m.lo, m.hi, mode)
    return tosa_engine.run_flatbuffer(graph, np.asarray(x, dtype=m.dtype.np_dtype), dtype)


DIALECT = Dialect(
    name=NAME, spec_model=TosaSpec, target_model=TosaTarget, resolve=resolve_source, emit=emit, target=target,
    check_version=version_tosa, capability=capability, version_example="tosa:1.0", engines={ENGINE: _run_reference},
    artifacts={"tosa_mlir": "MLIR text: func.func @main with tosa.clamp (TOSA 1.0 attributes)",
               "tosa_flatbuffer": "base64 TOSA 1.0 flatbuffer (.tosa) with one CLAMP, when tosa-tools is installed"},
    in_defaults=False, rule_texts=RULE_TEXTS, examples=EXAMPLES)
