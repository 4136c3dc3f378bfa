"""TensorRT kCLIP's emit: a Meaning -> a kCLIP layer computing it, with what onnx-tensorrt's Clip importer does to
an ONNX source, and the network API calls (app/clipbridge/dialects/tensorrt/network_api.py) as lazy artifacts. No TensorRT
engine runs here (it needs an NVIDIA GPU and the TensorRT wheel): nothing emitted was executed on it."""

from __future__ import annotations

import math

from clipbridge.core import exact
from clipbridge.dialects.kit.common import Emitted, LazyArtifacts, Mode
from clipbridge.dialects.kit.crossed import collapse_crossed
from clipbridge.dialects.tensorrt.meaning import normalize, resolve, version_tensorrt
from clipbridge.dialects.tensorrt.network_api import cpp_api, python_api
from clipbridge.dialects.tensorrt.spec import NAME_OF, PARSER_SRC, VERSIONS, TensorRtSpec, TensorRtTarget
from clipbridge.core.dtypes import FLOAT32, DType
from clipbridge.core.findings import Code, Finding, Notes, Severity
from clipbridge.core.meaning import Bound, Meaning, NanBound, Order
from clipbridge.core.numbers import Number, format_number

FLT_MAX = FLOAT32.highest()


def onnx_type_name(dt: DType) -> str:
    """The TensorProto.DataType name onnx-tensorrt reads (onnx.proto: FLOAT, DOUBLE, else the upper-case name)."""
    return {"float32": "FLOAT", "float64": "DOUBLE"}.get(dt.name, dt.name.upper())


def parser_findings(src: Meaning) -> list[Finding]:
    """What onnx-tensorrt's Clip importer does with this ONNX Clip (only for an ONNX source)."""
    if src.dialect != "onnx":
        return []
    t = onnx_type_name(src.dtype)
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
    return collapse_crossed(src, vals, notes, Order.MIN_WINS, lambda v: (
        f"min > max gives max in the source; kCLIP gives alpha: wrote alpha = beta = {format_number(v)}"))


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


def target(version: str | None) -> TensorRtTarget:
    return TensorRtTarget(dialect="tensorrt", version=version)
