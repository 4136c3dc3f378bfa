"""TensorRT `IActivationLayer` with `ActivationType::kCLIP` (NVIDIA/TensorRT include/NvInfer.h): spec, meaning, emit.

NvInfer.h: `kCLIP = 8, //!< Clip activation: max(alpha, min(beta, x))`. alpha and beta are the layer's `float`
attributes (setAlpha/setBeta), so min > max gives alpha (the lower bound wins, the opposite of ONNX Clip-13).
The header says nothing about NaN. NVIDIA/TensorRT#4773 reports TensorRT 10.16 replacing a NaN input with the
lower bound: a report, not a document. Two readings (Dialect.readings; the first is the default):
  observed (default): a NaN input gives alpha (NanInput.TO_LOWER). The header is silent rather than contrary, and
      the report is the only evidence of what TensorRT computes; a translation that says "NaN -> alpha" with a
      witness is what someone porting a model needs.
  header: only the documented formula; NaN input undocumented (executed as propagate), the report kept as an
      engine note.
The resolved Meaning is the observed reading's; `Meaning.alternates` holds ("header", its meaning), so
/v1/execute and /v1/compare take `"reading": "header"` and translations report drift "under the header reading".
The spec field `reading` (kept for specs written before the request-level one) pins which reading is that
meaning's own: `"reading": "header"` resolves to the header meaning, with the observed one in `alternates`; a
request's `reading` still chooses either.
No TensorRT engine runs here (it needs an NVIDIA GPU and the TensorRT wheel); nothing here was executed on it.
"""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints

from app.core import exact
from app.dialects.kit.base import Dialect, source_resolver
from app.dialects.kit.common import Emitted, LazyArtifacts, Mode
from app.dialects.kit.spec_base import Shape, WireNumber, _Strict, spec_json
from app.core.dtypes import FLOAT16, FLOAT32, INT8, DType
from app.core.errors import SpecError
from app.core.findings import Code, Finding, Notes, Severity
from app.core.meaning import Bound, EngineNote, Meaning, NanBound, NanInput, Order
from app.core.numbers import Number, format_number
from app.core.suggest import one_of

NAME = "tensorrt"
VERSIONS = ("8", "9", "10")
OP_VERSION = "IActivationLayer kCLIP"
HEADER_SRC = "NVIDIA/TensorRT include/NvInfer.h (ActivationType::kCLIP)"
ISSUE_SRC = "NVIDIA/TensorRT#4773 (TensorRT 10.16, a report)"
PARSER_SRC = "onnx/onnx-tensorrt onnxOpImporters.cpp (Clip importer)"
# TensorRT's DataType names and clipbridge's, for the types this layer is modelled on.
DTYPES: dict[str, DType] = {"float32": FLOAT32, "float16": FLOAT16, "int8": INT8}
ALIASES = {"kfloat": "float32", "khalf": "float16", "kint8": "int8"}
OTHER_SPELLING = {"fp32": "float32", "fp16": "float16", "f32": "float32", "f16": "float16", "half": "float16",
                  "float": "float32", "i8": "int8"}
TRT_NAME = {"float32": "kFLOAT", "float16": "kHALF", "int8": "kINT8"}
NAME_OF = {dt.name: name for name, dt in DTYPES.items()}
READINGS = {
    "observed": f"a NaN input gives alpha, the lower bound ({ISSUE_SRC}); the default: the header is silent on NaN "
                "and this report is the only evidence of what TensorRT computes",
    "header": f"only max(alpha, min(beta, x)) as documented ({HEADER_SRC}); a NaN input is undocumented",
}
FLT_MAX = FLOAT32.highest()
NOTE_NAN = EngineNote("TensorRT 10.16", f"A NaN input is replaced by alpha, the lower bound ({ISSUE_SRC}; "
                                        "onnxruntime keeps the NaN). Not documented in NvInfer.h.")


class TensorRtSpec(_Strict):
    """TensorRT kCLIP: `dtype` (float32, float16, int8), `shape`, float `alpha` (lower) and `beta` (upper)."""

    dialect: Literal["tensorrt"]
    version: Annotated[str, StringConstraints(max_length=16)] = "10"
    dtype: Annotated[str, StringConstraints(max_length=16)]
    shape: Shape | None = None
    alpha: WireNumber
    beta: WireNumber
    reading: Annotated[str, StringConstraints(max_length=16)] = Field(
        default="observed", description="Which reading is this clip's own meaning: observed (default) or header; "
                                        "a request's `reading` (/v1/execute, /v1/compare) chooses either")


class TensorRtTarget(_Strict):
    dialect: Literal["tensorrt"]
    version: Annotated[str, StringConstraints(max_length=16)] | None = None


# --- rules ------------------------------------------------------------------------------------------------------

def version_tensorrt(text: str, loc: str = "version") -> str:
    """kCLIP is unchanged across TensorRT 8, 9 and 10: '10', '10.16' and 'v10' name TensorRT 10."""
    major = text.strip().lower().lstrip("v").split(".")[0]
    if major not in VERSIONS:
        raise SpecError(one_of("Unknown TensorRT version", text, VERSIONS), loc)
    return major


def dtype_tensorrt(name: str, loc: str = "dtype") -> DType:
    """The input tensor's DataType: kFLOAT, kHALF or kINT8 (float32, float16, int8)."""
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    if key not in DTYPES:
        msg = one_of("kCLIP is modelled for these TensorRT types (onnx-tensorrt clips INT32/INT64 with "
                     "elementwise kMAX/kMIN and rejects UINT8)", name, DTYPES)
        if key in OTHER_SPELLING and "Did you mean" not in msg:
            msg += f". Did you mean {OTHER_SPELLING[key]!r}?"
        raise SpecError(msg, loc)
    return DTYPES[key]


def reading_tensorrt(text: str, loc: str = "reading") -> str:
    """The spec's own reading of a NaN input: 'observed' (default, #4773) or 'header' (NvInfer.h only); a request's
    `reading` (/v1/execute, /v1/compare) chooses either one at run time."""
    key = text.strip().lower()
    if key not in READINGS:
        raise SpecError(one_of("Unknown TensorRT reading", text, READINGS), loc)
    return key


def float_attribute_tensorrt(value: Number) -> float:
    """setAlpha(float)/setBeta(float): the number becomes a C++ float (one correctly rounded step)."""
    return exact.to_float32(value)


def bound_tensorrt(value: Number, dt: DType, side: str) -> Bound:
    """The effective bound on the tensor: the float attribute, then the clip's result written in the tensor type.

    max(alpha, min(beta, x)) is computed on float values and the result stored in the tensor's type; that store is
    monotone, so it equals clipping with the stored bound. float16: float -> half, nearest-even (a second rounding;
    overflow to inf). int8: nearest-even to an integer, saturated to [-128, 127] (TensorRT's float -> int8 rule,
    IQuantizeLayer: round to nearest, ties to even) [inferred: not stated for kCLIP]; scale 1 (stored integers)."""
    f = float_attribute_tensorrt(value)
    steps: list[str] = []
    loss = not exact.is_nan(value) and f != value
    if loss:
        steps.append(f"{side} {format_number(value)} as a float attribute: {format_number(f)}")
    if dt.is_float:
        out = dt.round(f) if dt is not FLOAT32 else f
        if dt is not FLOAT32 and not math.isnan(f) and out != f:
            steps.append(f"{side} float {format_number(f)} stored as {dt.name}: {format_number(out)}")
        return Bound(out, value, tuple(steps), precision_loss=bool(steps) and not math.isinf(out),
                     overflow=math.isinf(out) and not math.isinf(f))
    if math.isnan(f):
        raise SpecError(f"{side} is NaN on an int8 tensor: TensorRT does not document it and an int8 value cannot "
                        "hold it", side)
    if math.isinf(f):
        v = dt.lowest() if f < 0 else dt.highest()
        return Bound(v, value, tuple(steps) + (f"{side} {format_number(f)} saturated to {v}",), saturated=True)
    r = _round_half_even(f)
    sat = dt.saturate(r)
    if r != f:
        steps.append(f"{side} {format_number(f)} rounded to nearest-even: {r}")
    if sat != r:
        steps.append(f"{side} {r} saturated to int8: {sat}")
    # The float step matters only when it moves the integer: nearest-even of the exact number differs.
    direct = dt.saturate(round(Fraction(value))) if not exact.is_inf(value) else sat
    return Bound(sat, value, tuple(steps), rounded=r != f, saturated=sat != r, precision_loss=direct != sat)


def _round_half_even(f: float) -> int:
    return round(f)  # Python's round of a float is exact nearest, ties to even


def nan_input_tensorrt(reading: str) -> NanInput:
    """observed: NaN -> alpha (#4773); header: undocumented."""
    return NanInput.TO_LOWER if reading == "observed" else NanInput.UNDOCUMENTED


def meaning_tensorrt(version: str, dt: DType, lo: Bound, hi: Bound, reading: str) -> Meaning:
    """kCLIP under one reading: bounds and order as the header says; the NaN-input rule is the reading's."""
    rules = (f"TensorRT {version} kCLIP: max(alpha, min(beta, x)) ({HEADER_SRC}); alpha > beta gives alpha",
             "alpha and beta are float attributes: a bound rounds to float, then to the tensor type "
             "(float16: nearest-even; int8: nearest-even, saturated [inferred])",
             f"NaN input ({reading} reading): " + READINGS[reading],
             "NaN alpha/beta: undocumented")
    notes = (NOTE_NAN,) if reading == "header" and dt.is_float else ()
    return Meaning(NAME, OP_VERSION, dt, lo, hi, order=Order.MIN_WINS, nan_input=nan_input_tensorrt(reading),
                   nan_bound=NanBound.UNDOCUMENTED, rules=rules, engine_notes=notes,
                   readings=tuple(f"{k}: {v}" for k, v in READINGS.items()))


def resolve(spec: TensorRtSpec) -> Meaning:
    """max(alpha, min(beta, x)): alpha wins when alpha > beta. The meaning is the spec's reading's (observed unless
    the spec pins header); the other reading's meaning is kept in `alternates`."""
    version = version_tensorrt(spec.version)
    dt = dtype_tensorrt(spec.dtype)
    own = reading_tensorrt(spec.reading)
    lo = bound_tensorrt(spec.alpha, dt, "alpha")
    hi = bound_tensorrt(spec.beta, dt, "beta")
    others = tuple((r, meaning_tensorrt(version, dt, lo, hi, r)) for r in READINGS if r != own)
    return replace(meaning_tensorrt(version, dt, lo, hi, own), alternates=others)


def normalize(spec: TensorRtSpec) -> dict:
    out = spec_json(spec)
    out["version"] = version_tensorrt(spec.version)
    key = spec.dtype.strip().lower()
    out["dtype"] = ALIASES.get(key, key)
    out["reading"] = reading_tensorrt(spec.reading)
    return out


resolve_source = source_resolver(NAME, resolve, normalize)


# --- emit -------------------------------------------------------------------------------------------------------

def parser_findings(src: Meaning) -> list[Finding]:
    """What onnx-tensorrt's Clip importer does with this ONNX Clip (only for an ONNX source)."""
    if src.dialect != "onnx":
        return []
    t = src.dtype.onnx
    if t in ("INT32", "INT64"):
        return [Finding(Code.DTYPE_UNSUPPORTED, Severity.INFO, f"onnx-tensorrt imports an {t} Clip as elementwise "
                        "kMAX(input, min) then kMIN(., max) (max wins), not as kCLIP", f"ONNX Clip {t}",
                        f"elementwise max then min ({PARSER_SRC})")]
    if t == "UINT8":
        return [Finding(Code.DTYPE_UNSUPPORTED, Severity.ERROR, "onnx-tensorrt rejects a UINT8 Clip input",
                        "ONNX Clip UINT8", f"rejected ({PARSER_SRC})")]
    return [Finding(Code.BOUND_PRECISION, Severity.INFO, "onnx-tensorrt imports this Clip as kCLIP: min and max "
                    "must be initializers, read as float (getSingleValueAsFloat); a missing one is "
                    "-FLT_MAX/FLT_MAX", f"ONNX Clip {t}", f"kCLIP with float alpha/beta ({PARSER_SRC})")]


def _inexpressible(src: Meaning) -> Finding | None:
    if src.dtype.name not in NAME_OF:
        return Finding(Code.DTYPE_UNSUPPORTED, Severity.ERROR, f"kCLIP is modelled for float32, float16 and int8; "
                       f"not {src.dtype.name}", src.dtype.name, "float32, float16, int8")
    if src.scale_bias is not None:
        return Finding(Code.SCALE_BIAS, Severity.ERROR, "ScaleBias is not expressed (an IScaleLayer before the "
                       "activation would be needed)", "x*Scale+Bias before clipping", "not expressible")
    if src.has_tensor_bounds:
        return Finding(Code.TENSOR_BOUNDS, Severity.ERROR, "kCLIP's alpha/beta are scalar floats; per-element bounds "
                       "need elementwise kMAX then kMIN", "per-element bounds", "scalar attributes")
    if src.result_dtype not in (None, src.dtype):
        return Finding(Code.DTYPE_PROMOTION, Severity.ERROR, "kCLIP's output has the input's type; the source "
                       f"promotes to {src.out_dtype.name}", src.out_dtype.name, src.dtype.name)
    return None


def _literal(bound: Bound, dt: DType, side: str, notes: Notes) -> Number:
    """Literal mode: the source's number as written; a default becomes the parser's -FLT_MAX/FLT_MAX."""
    if bound.default or bound.given is None:
        v = -FLT_MAX if side == "alpha" else FLT_MAX
        notes.add(Code.DEFAULT_BOUND, Severity.INFO, f"kCLIP has no default {side}: wrote {format_number(v)} as "
                  "onnx-tensorrt does for a missing Clip bound")
        return v
    return bound.given


def _preserve(src: Meaning, notes: Notes) -> list[Number] | Finding:
    """Preserve mode: the source's effective bounds (values of float32/float16/int8 are floats exactly)."""
    assert src.lower is not None and src.upper is not None
    vals: list[Number] = [src.lower.value, src.upper.value]
    for i, side in enumerate(("alpha", "beta")):
        if not exact.is_nan(vals[i]):
            continue
        if src.nan_bound in (NanBound.IGNORE, NanBound.UNDOCUMENTED, NanBound.ZERO):
            vals[i] = 0.0 if src.nan_bound is NanBound.ZERO else (-math.inf if i == 0 else math.inf)
            notes.add(Code.NAN_BOUND, Severity.INFO, f"The source reads a NaN bound as {src.nan_bound.value}; "
                      f"TensorRT does not document NaN {side}: wrote {format_number(vals[i])}")
        else:
            return Finding(Code.NAN_BOUND, Severity.ERROR, "A NaN bound makes every output NaN in the source; "
                           "TensorRT does not document a NaN alpha/beta", f"NaN bound: {src.nan_bound.value}",
                           "undocumented")
    if vals[1] < vals[0] and src.order is Order.MAX_WINS:
        notes.add(Code.MIN_GREATER_THAN_MAX, Severity.INFO, f"min > max gives max in the source; kCLIP gives alpha: "
                  f"wrote alpha = beta = {format_number(vals[1])}")
        vals = [vals[1], vals[1]]
    elif vals[1] < vals[0] and src.order is Order.AMBIGUOUS:
        notes.add(Code.MIN_GREATER_THAN_MAX, Severity.WARNING, "The source's min > max is ambiguous; kCLIP gives "
                  "alpha, as the source's default reading does")
    return vals


def emit(src: Meaning, target: TensorRtTarget, mode: Mode, shape: list | None) -> Emitted:
    """A kCLIP layer (compact spec and the Python/C++ API calls) computing `src`, with the parser's findings."""
    version = version_tensorrt(target.version or VERSIONS[-1])
    found = parser_findings(src)
    why = _inexpressible(src)
    if why is not None or any(f.severity is Severity.ERROR for f in found):
        return Emitted(None, None, found + ([why] if why else []), unsupported=True)
    notes = Notes(list(found))
    assert src.lower is not None and src.upper is not None
    dt = src.dtype
    if mode is Mode.LITERAL:
        vals = [_literal(src.lower, dt, "alpha", notes), _literal(src.upper, dt, "beta", notes)]
    else:
        got = _preserve(src, notes)
        if isinstance(got, Finding):
            return Emitted(None, None, notes.items + [got], unsupported=True)
        vals = got
    spec = TensorRtSpec(dialect="tensorrt", version=version, dtype=NAME_OF[dt.name], shape=shape, alpha=vals[0],
                        beta=vals[1])
    meaning = resolve(spec)
    return Emitted(normalize(spec), meaning, notes.items, LazyArtifacts(lambda: {
        "tensorrt_python": python_api(meaning), "tensorrt_cpp": cpp_api(meaning)}))


def _py_float(v: float) -> str:
    if math.isnan(v):
        return 'float("nan")'
    if math.isinf(v):
        return 'float("inf")' if v > 0 else '-float("inf")'
    return repr(v)  # exact: the attribute is a float32 value, which this double decimal names


def _cpp_float(v: float) -> str:
    if math.isnan(v):
        return "std::numeric_limits<float>::quiet_NaN()"
    if math.isinf(v):
        return ("" if v > 0 else "-") + "std::numeric_limits<float>::infinity()"
    text = repr(v)
    return (text if "." in text or "e" in text else text + ".0") + "F"


def _attrs(m: Meaning) -> tuple[float, float]:
    """The float attributes that give the meaning's bounds (for int8 the integers themselves, exact in float)."""
    return float(m.lo), float(m.hi)  # type: ignore[arg-type]


def python_api(m: Meaning) -> str:
    """The TensorRT Python API calls that build this layer."""
    a, b = _attrs(m)
    int8 = ("# int8: the input needs a scale (Q/DQ or set_dynamic_range); alpha/beta act on dequantized values,\n"
            "# so with scale s the stored-integer bounds are round(alpha / s), round(beta / s)\n"
            if not m.dtype.is_float else "")
    return (f"{int8}layer = network.add_activation(x, trt.ActivationType.CLIP)  # x: {TRT_NAME[NAME_OF[m.dtype.name]]}"
            f"\nlayer.alpha = {_py_float(a)}\nlayer.beta = {_py_float(b)}\n")


def cpp_api(m: Meaning) -> str:
    """The TensorRT C++ API calls that build this layer."""
    a, b = _attrs(m)
    return (f"nvinfer1::IActivationLayer* layer = network->addActivation(*x, nvinfer1::ActivationType::kCLIP);\n"
            f"layer->setAlpha({_cpp_float(a)});\nlayer->setBeta({_cpp_float(b)});\n")


# --- interface --------------------------------------------------------------------------------------------------

def target(version: str | None) -> TensorRtTarget:
    return TensorRtTarget(dialect="tensorrt", version=version)


def capability() -> dict[str, Any]:
    return {"dialect": NAME, "default_target": {"dialect": NAME, "version": VERSIONS[-1]},
            "versions": [{"version": OP_VERSION, "selects": "TensorRT " + ", ".join(VERSIONS), "dtypes": list(DTYPES),
                          "ranks": "any",
                          "rules": ["max(alpha, min(beta, x)): alpha > beta gives alpha",
                                    "alpha/beta are float attributes: rounded to float, then to the tensor type",
                                    "int8: bounds nearest-even and saturated (inferred); scale 1",
                                    "NaN input: alpha (observed, #4773) or undocumented (header)",
                                    "NaN alpha/beta: undocumented",
                                    "no engine here: nothing executed on TensorRT",
                                    *(f"reading {k}: {v}" for k, v in READINGS.items())]}]}


RULE_TEXTS = {
    Code.MIN_GREATER_THAN_MAX.value: ("max(alpha, min(beta, x)): alpha > beta gives alpha (min wins)", HEADER_SRC),
    Code.NAN_INPUT.value: ("a NaN input gives alpha (reported for 10.16; the header is silent)", ISSUE_SRC),
    Code.NAN_BOUND.value: ("NaN alpha/beta: undocumented", HEADER_SRC),
    Code.BOUND_PRECISION.value: ("alpha/beta are float: a bound rounds to float, then to the tensor type",
                                 HEADER_SRC),
    Code.DEFAULT_BOUND.value: ("onnx-tensorrt fills a missing Clip bound with -FLT_MAX/FLT_MAX", PARSER_SRC),
    Code.DTYPE_UNSUPPORTED.value: ("onnx-tensorrt: INT32/INT64 Clip via elementwise max then min; UINT8 rejected",
                                   PARSER_SRC),
}

EXAMPLES = {
    "relu6-float32": {"dialect": "tensorrt", "version": "10", "dtype": "float32", "shape": [1, 4], "alpha": 0,
                      "beta": 6},
    "crossed-alpha-wins": {"dialect": "tensorrt", "dtype": "float32", "alpha": 3, "beta": 1},
    "float16-header-reading": {"dialect": "tensorrt", "dtype": "float16", "alpha": -1, "beta": 1,
                               "reading": "header"},
    "int8-fractional": {"dialect": "tensorrt", "dtype": "int8", "alpha": -2.5, "beta": 100.5},
}

DIALECT = Dialect(
    name=NAME, spec_model=TensorRtSpec, target_model=TensorRtTarget, resolve=resolve_source, emit=emit,
    target=target, check_version=version_tensorrt, capability=capability, version_example="tensorrt:10",
    artifacts={"tensorrt_python": "TensorRT Python API: network.add_activation(x, trt.ActivationType.CLIP), alpha, "
                                  "beta", "tensorrt_cpp": "TensorRT C++ API: addActivation(kCLIP), setAlpha, setBeta"},
    in_defaults=False, rule_texts=RULE_TEXTS, examples=EXAMPLES, readings=READINGS)
