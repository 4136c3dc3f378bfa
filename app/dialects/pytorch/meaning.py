"""PyTorch `torch.clamp` / `clamp_min` / `clamp_max` / `F.hardtanh` / `F.relu6` as torch 2.13.0 computes them.

Read from pytorch/pytorch aten/src/ATen/native/TensorCompare.cpp and Activation.cpp, torch/nn/functional.py, and
checked rule by rule on torch 2.13.0+cpu (tests/dialects/test_pytorch.py). min(max(x, min), max): min > max gives
max; a NaN input propagates; a scalar NaN bound makes every output NaN (also clamp_min/clamp_max, which fill with
the NaN); a NaN element of a tensor bound makes that output element NaN. An integer tensor with a float scalar
bound promotes to the default dtype (float32). Hardtanh truncates its bounds on integer tensors, never promotes.
The spec model, the ONNX export predictions and the engine live in app/dialects/pytorch_export.py.

Where torch 2.13.0 differs from the reference reading (clipbridge's notes on PyTorch clamp), torch wins:
- no prepare_clamp_bound in this release: an out-of-range integer bound raises (c10 checked_convert) except that
  negatives down to -max wrap into unsigned types (clamp(uint8, min=-1) gives 255 everywhere);
- F.hardtanh itself raises ValueError for min_val > max_val (the module additionally asserts max_val > min_val);
- half/bfloat16 scalar bounds are built from a float (two roundings), and a finite bound beyond the type's range
  raises instead of overflowing to inf;
- uint16/uint32/uint64 have no CPU clamp kernel; a scalar and a tensor bound together are refused by the parser.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from app.core import exact
from app.dialects.kit.base import Dialect, source_resolver
from app.dialects.kit.common import Emitted, LazyArtifacts, Mode
from app.dialects.pytorch_export import (ALIASES, DTYPES, EXPORT_ARTIFACTS, OPS, UNSUPPORTED_DTYPES, PyTorchSpec,
                                         PyTorchTarget, artifacts_pytorch, export_notes, run_torch, shape_of)
from app.dialects.kit.spec_base import spec_json
from app.core.dtypes import FLOAT32, DType
from app.core.errors import SpecError
from app.core.findings import Code, Finding, Notes, Severity
from app.core.meaning import Bound, EngineNote, Meaning, NanBound, NanInput, Order, State, TensorBound
from app.core.numbers import Number, format_number
from app.core.suggest import one_of

NAME = "pytorch"
VERSIONS = ("2.13",)  # the releases modelled; a newer one resolves to the highest at or below it
DEFAULT_DTYPE = FLOAT32  # torch.get_default_dtype(): what an integer tensor promotes to with a float scalar
SRC_META = "pytorch/pytorch aten/src/ATen/native/TensorCompare.cpp (clamp meta/impl), torch 2.13.0"
SRC_HARDTANH = "pytorch/pytorch aten/src/ATen/native/Activation.cpp hardtanh_out; torch/nn/functional.py hardtanh"
SRC_C10 = "c10/util/TypeCast.h checked_convert (Scalar::to<T>), observed on torch 2.13.0"
C_NAMES = {"int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t",
           "float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16"}
NOTE_EXPORT_NAN = EngineNote("torch.onnx.export 2.13 + onnxruntime", "Both exporters write Clip(x, NaN) for a "
                             "scalar NaN bound; onnxruntime's Clip ignores a NaN bound, so the exported model does "
                             "not fill the output with NaN as torch.clamp does")
NOTE_TS_EXPORT = EngineNote("torch.onnx.export 2.13 (dynamo=False)", "The TorchScript exporter casts float bounds "
                            "to the integer input's dtype (Clip on int32 with min 1.5 becomes Clip(x, 1)): no "
                            "promotion, the fraction truncated; torch.clamp itself returns float32")


class _Refused(Exception):
    """torch raises at call time: the spec is well formed, torch refuses it (a REJECTED meaning)."""


def version_pytorch(text: str, loc: str = "version") -> str:
    """The highest modelled release at or below `text` ('2.13', '2.13.0', 'v2.14' -> '2.13')."""
    key = text.strip().lower().lstrip("v").split("+")[0]
    try:
        parts = tuple(int(p) for p in key.split(".")[:2])
    except ValueError:
        raise SpecError(one_of("Unknown PyTorch version", text, VERSIONS), loc) from None
    found = [v for v in VERSIONS if tuple(int(p) for p in v.split(".")) <= parts + (0,) * (2 - len(parts))]
    if not found:
        raise SpecError(f"PyTorch {text} is older than the releases clipbridge models ({', '.join(VERSIONS)}). "
                        f"Got: {text}", loc)
    return found[-1]


def dtype_pytorch(name: str, loc: str = "dtype") -> DType:
    """torch's dtype names (torch.float32 or its aliases float, half, double, ...); uint16+ clamp is CPU-less."""
    key = name.strip().lower().removeprefix("torch.")
    key = ALIASES.get(key, key)
    if key in UNSUPPORTED_DTYPES:
        raise SpecError(f'torch 2.13 CPU has no clamp for {key}: NotImplementedError "clamp_scalar_cpu" not '
                        f"implemented for 'UInt{key[4:]}'. Got: {name}", loc)
    if key not in DTYPES:
        raise SpecError(one_of("Unknown PyTorch dtype", name, DTYPES), loc)
    return DTYPES[key]


def is_float_scalar_pytorch(value: Number) -> bool:
    """A Python float (or a number only a float holds) is a floating Scalar; an int is an integral one."""
    return not isinstance(value, int)


def result_type_pytorch(dt: DType, scalars: list[Number]) -> DType | None:
    """clamp meta: an integral tensor with a floating scalar bound promotes to the default dtype (float32)."""
    if dt.is_float or not any(is_float_scalar_pytorch(v) for v in scalars):
        return None
    return DEFAULT_DTYPE


def scalar_pytorch(value: Number) -> Number:
    """A Python scalar: an int must fit int64/uint64 (pybind's Scalar); a non-integer is the nearest double."""
    if isinstance(value, int):
        if value >= 2**64:
            raise _Refused("int too big to convert")  # OverflowError from the argument parser
        if value < -2**63:
            raise _Refused("can't convert negative int to unsigned")
        return value
    return exact.to_double(value)


def _overflow(dt: DType) -> _Refused:
    return _Refused(f"value cannot be converted to type {C_NAMES[dt.name]} without overflow")


def convert_bound_pytorch(given: Number, dt: DType, side: str) -> Bound:
    """Scalar::to<T> (checked_convert): an out-of-range value raises, except that negatives down to -max wrap
    into an unsigned type (two's complement); a finite float beyond T's range raises; half and bfloat16 go
    through float (two roundings)."""
    v = scalar_pytorch(given)
    steps: list[str] = []
    if not dt.is_float:
        assert isinstance(v, int)  # a float scalar on an integer tensor promoted it
        hi = int(dt.highest())
        signed = dt.lowest() < 0
        if v > hi or (signed and v < dt.lowest()) or (not signed and v < -hi):
            raise _overflow(dt)
        if v < 0 and not signed:
            wrapped = v + 2**dt.bits
            steps.append(f"{side} {v} as {dt.name}: wraps to {wrapped} (checked_convert lets negatives down to "
                         f"-{hi} wrap into unsigned types; {SRC_C10})")
            return Bound(wrapped, given, tuple(steps), rounded=True)
        return Bound(v, given)
    if not exact.is_nan(v) and not exact.is_inf(v) and abs(v) > dt.highest():
        raise _overflow(dt)
    out = double_rounding_pytorch(v, dt)
    if not exact.is_nan(out) and out != given:
        steps.append(f"{side} {format_number(given)} as {dt.name}: {format_number(out)}"
                     + (" (via float32: two roundings)" if dt.bits == 16 else ""))
    return Bound(out, given, tuple(steps), precision_loss=bool(steps))


def double_rounding_pytorch(value: Number, dt: DType) -> float:
    """c10::Half / c10::BFloat16 are built from a float: a double (or int64) bound rounds to float32 first."""
    if exact.is_nan(value):
        return math.nan
    if dt.bits == 16:
        return dt.round(exact.to_float32(value))
    return dt.round(value)


def hardtanh_bound_pytorch(given: Number, dt: DType, side: str) -> Bound:
    """hardtanh_out on an integral tensor: min.toLong()/max.toLong() (truncation; NaN, inf, beyond int64 raise),
    uint8 with a negative limit raises, then clamp's Scalar::to<T>; floating tensors take the double as is."""
    if dt.is_float:
        return convert_bound_pytorch(given, dt, side)
    v = scalar_pytorch(given)
    if exact.is_nan(v) or exact.is_inf(v) or not -2**63 <= v < 2**63:
        raise _Refused("value cannot be converted to type int64_t without overflow")
    t = exact.trunc_exact(v)
    if dt.name == "uint8" and t < 0:
        raise _Refused("cannot do hardtanh on an unsigned type with negative limits")
    b = convert_bound_pytorch(t, dt, side)
    if t != v:
        return Bound(b.value, given, (f"{side} {format_number(given)}: toLong() truncates to {t} ({SRC_HARDTANH})",)
                     + b.steps, rounded=True)
    return Bound(b.value, given, b.steps, rounded=b.rounded)


def default_bound_pytorch(dt: DType, side: str) -> Bound:
    """An absent side (None) is no bound: +-inf on floats, the type's extreme (the same function) on integers."""
    if dt.is_float:
        value: Number = -math.inf if side == "min" else math.inf
    else:
        value = dt.lowest() if side == "min" else dt.highest()
    return Bound(value, None, (f"{side}=None: no {'lower' if side == 'min' else 'upper'} bound",), default=True)


def tensor_bound_pytorch(nested: list, dt: DType, side: str, shape: list | None) -> TensorBound:
    """torch.tensor(values, dtype=<input dtype>) broadcast against the input (it may not grow the output);
    floats round as Scalar bounds do; integer tensors take in-range integers only (torch.tensor would truncate)."""
    bshape, flat = shape_of(nested, side)
    if shape is None or not all(isinstance(d, int) for d in shape):
        raise SpecError(f"A tensor {side} needs a concrete `shape` to broadcast against. Got: shape={shape}", "shape")
    try:
        out_shape = np.broadcast_shapes(tuple(shape), bshape)
    except ValueError:
        raise SpecError(f"{side} of shape {list(bshape)} does not broadcast to shape {shape}. Got: {list(bshape)}",
                        side) from None
    if list(out_shape) != list(shape):
        raise SpecError(f"{side} of shape {list(bshape)} would grow the output to {list(out_shape)}; clipbridge "
                        f"models clips that keep the input's shape. Got: {list(bshape)}", side)
    values: list[Number] = []
    for v in flat:
        if dt.is_float:
            values.append(double_rounding_pytorch(scalar_pytorch(v) if not exact.is_nan(v) else v, dt))
        elif not exact.is_integral(v) or not dt.contains(v):
            raise SpecError(f"Every element of a {dt.name} tensor {side} must be an integer in [{dt.lowest()}, "
                            f"{dt.highest()}] (torch.tensor(..., dtype=torch.{dt.name}) would truncate or wrap). "
                            f"Got: {format_number(v)}", side)
        else:
            values.append(int(v))
    changed = any(not (exact.is_nan(a) and exact.is_nan(b)) and a != b for a, b in zip(values, flat))
    return TensorBound(bshape, tuple(values), tuple(flat) if changed else None,
                       (f"{side}: torch.tensor of shape {list(bshape)}, dtype {dt.name}",))


def op_pytorch(spec: PyTorchSpec) -> str:
    """The op's argument rules: clamp_min/clamp_max take one bound, relu6 none (it is hardtanh(0, 6))."""
    op = spec.op.strip().lower()
    if op not in OPS:
        raise SpecError(one_of("Unknown PyTorch op", spec.op, OPS), "op")
    if op == "clamp_min" and (spec.min is None or spec.max is not None):
        raise SpecError("torch.clamp_min(x, min) takes exactly `min`. Got: min="
                        f"{spec.min!r}, max={spec.max!r}", "max" if spec.max is not None else "min")
    if op == "clamp_max" and (spec.max is None or spec.min is not None):
        raise SpecError("torch.clamp_max(x, max) takes exactly `max`. Got: min="
                        f"{spec.min!r}, max={spec.max!r}", "min" if spec.min is not None else "max")
    if op == "relu6" and (spec.min is not None or spec.max is not None):
        raise SpecError("F.relu6 has no bounds (it is hardtanh(0, 6)). Got: min="
                        f"{spec.min!r}, max={spec.max!r}", "min" if spec.min is not None else "max")
    if op in ("hardtanh", "relu6") and any(isinstance(b, list) for b in (spec.min, spec.max)):
        raise SpecError(f"{op}'s min_val/max_val are Python numbers, not tensors", "min")
    return op


RULES = (f"torch.clamp: min(max(x, min), max) ({SRC_META}); min > max gives max",
         "at least one of min/max (clamp); an absent side is no bound",
         "integral tensor + float scalar bound: result float32 (default dtype); float tensors never promote",
         "scalar NaN bound: every output NaN (clamp, clamp_min, clamp_max); tensor bound NaN: per element",
         "NaN input propagates",
         f"Scalar::to<T>: out-of-range raises, negatives wrap into unsigned; half/bfloat16 via float ({SRC_C10})")
RULES_HARDTANH = (f"F.hardtanh: min_val > max_val raises; integral tensors truncate (toLong), uint8 with negative "
                  f"limits raises; no promotion ({SRC_HARDTANH})", "relu6 = hardtanh(0, 6)")


def resolve(spec: PyTorchSpec) -> Meaning:
    """The function the call computes on torch 2.13 CPU (a REJECTED meaning where torch raises)."""
    version = version_pytorch(spec.version or VERSIONS[-1])
    dt = dtype_pytorch(spec.dtype)
    op = op_pytorch(spec)
    try:
        return _resolve(spec, op, dt, version)
    except _Refused as exc:
        return Meaning(NAME, version, dt, None, None, state=State.REJECTED, reason=str(exc), rules=RULES)


def _resolve(spec: PyTorchSpec, op: str, dt: DType, version: str) -> Meaning:
    mn, mx = spec.min, spec.max
    if op in ("hardtanh", "relu6"):
        lo_given, hi_given = (0, 6) if op == "relu6" else (-1.0 if mn is None else mn, 1.0 if mx is None else mx)
        if exact.to_double(lo_given) > exact.to_double(hi_given):
            raise _Refused("min_val cannot be greater than max_val")  # F.hardtanh's ValueError, before the kernel
        lo = hardtanh_bound_pytorch(lo_given, dt, "min")
        hi = hardtanh_bound_pytorch(hi_given, dt, "max")
        return Meaning(NAME, version, dt, lo, hi, Order.MAX_WINS, NanInput.PROPAGATE, NanBound.PROPAGATE,
                       rules=RULES_HARDTANH + RULES[4:])
    if mn is None and mx is None:
        raise _Refused("torch.clamp: At least one of 'min' or 'max' must not be None")
    tensors = [isinstance(b, list) for b in (mn, mx)]
    if any(tensors) and (mn is not None and mx is not None) and not all(tensors):
        kinds = ", ".join(f"{k}={'Tensor' if isinstance(b, list) else type(b).__name__}"
                          for k, b in (("min", mn), ("max", mx)))
        raise _Refused(f"clamp() received an invalid combination of arguments - got (Tensor, {kinds})")
    if any(tensors):
        lt = tensor_bound_pytorch(mn, dt, "min", spec.shape) if isinstance(mn, list) else None
        ut = tensor_bound_pytorch(mx, dt, "max", spec.shape) if isinstance(mx, list) else None
        return Meaning(NAME, version, dt, None if lt else default_bound_pytorch(dt, "min"),
                       None if ut else default_bound_pytorch(dt, "max"), rules=RULES, lower_tensor=lt,
                       upper_tensor=ut)
    scalars = [b for b in (mn, mx) if b is not None]
    rd = result_type_pytorch(dt, scalars)
    ct = rd or dt  # bounds convert to the result type
    lo = convert_bound_pytorch(mn, ct, "min") if mn is not None else default_bound_pytorch(ct, "min")
    hi = convert_bound_pytorch(mx, ct, "max") if mx is not None else default_bound_pytorch(ct, "max")
    notes = ((NOTE_TS_EXPORT,) if rd is not None else ()) + ((NOTE_EXPORT_NAN,) if lo.is_nan or hi.is_nan else ())
    return Meaning(NAME, version, dt, lo, hi, Order.MAX_WINS, NanInput.PROPAGATE, NanBound.PROPAGATE,
                   rules=RULES, result_dtype=rd, engine_notes=notes)


def normalize(spec: PyTorchSpec) -> dict:
    out = spec_json(spec)
    key = spec.dtype.strip().lower().removeprefix("torch.")
    out["dtype"] = ALIASES.get(key, key)
    out["op"] = spec.op.strip().lower()
    return out


resolve_source = source_resolver(NAME, resolve, normalize)


# --- emit -----------------------------------------------------------------------------------------------------

def _open(side: str, dt: DType, value: Number) -> bool:
    """True when a bound leaves its side open (the same function as None)."""
    if dt.is_float:
        return value == (-math.inf if side == "min" else math.inf)
    return value == (dt.lowest() if side == "min" else dt.highest())


def _as_scalar(value: Number, promote: bool) -> Number:
    """A bound as the Python scalar torch reads back to it (a float where the source promotes)."""
    if promote or isinstance(value, float):
        return float(value)
    return int(value)


def _preserve(src: Meaning, dt: DType, notes: Notes) -> list[Any]:
    """Preserve mode: the source's effective bounds, NaN and order rules expressed with torch's."""
    promote = src.result_dtype is not None and src.result_dtype != dt
    ct = src.out_dtype
    out: list[Any] = []
    for side, b, t in (("min", src.lower, src.lower_tensor), ("max", src.upper, src.upper_tensor)):
        if t is not None:
            out.append(np.asarray(t.values, dtype=object).reshape(t.shape).tolist())
            continue
        assert b is not None
        v = b.value
        if b.is_nan and src.nan_bound is not NanBound.PROPAGATE:
            v = {NanBound.ZERO: 0.0}.get(src.nan_bound, -math.inf if side == "min" else math.inf)
            notes.add(Code.NAN_BOUND, Severity.INFO if src.nan_bound is not NanBound.UNDOCUMENTED else
                      Severity.WARNING, f"The source reads a NaN {side} as {src.nan_bound.value}; torch would make "
                      f"every output NaN: wrote {format_number(v)}")
        out.append(None if not exact.is_nan(v) and _open(side, ct, v) else _as_scalar(v, promote))
    if src.crossed and src.order is not Order.MAX_WINS:
        out[1] = out[0]
        sev = Severity.WARNING if src.order is Order.AMBIGUOUS else Severity.INFO
        notes.add(Code.MIN_GREATER_THAN_MAX, sev, "The source gives min when min > max; torch.clamp gives max: "
                  "wrote max = min")
    if out[0] is None and out[1] is None:
        out[0] = _as_scalar(-math.inf if ct.is_float else ct.lowest(), promote)  # clamp needs one bound
    if src.has_tensor_bounds:  # torch takes two scalars or two tensors: a scalar beside a tensor becomes [v]
        out = [[v] if v is not None and not isinstance(v, list) else v for v in out]
    return out


def _literal(src: Meaning, notes: Notes) -> list[Any]:
    """Literal mode: the source's numbers as written (None where a default applied), torch's rules on them."""
    out: list[Any] = []
    for b, t in ((src.lower, src.lower_tensor), (src.upper, src.upper_tensor)):
        if t is not None:
            out.append(np.asarray(t.given or t.values, dtype=object).reshape(t.shape).tolist())
        elif b is None or b.default or b.given is None:
            out.append(None)
        else:
            out.append(b.given)
    return out


def emit(src: Meaning, target: PyTorchTarget, mode: Mode, shape: list | None) -> Emitted:
    """A torch.clamp call (spec, Python line, predicted ONNX exports) computing `src`."""
    version = version_pytorch(target.version or VERSIONS[-1])
    dt = src.dtype
    if dt.name not in DTYPES:
        return Emitted(None, None, [Finding(Code.DTYPE_UNSUPPORTED, Severity.ERROR, f"torch {version} CPU has no "
                                            f"clamp for {dt.name} (NotImplementedError)")], unsupported=True)
    if src.scale_bias is not None:
        return Emitted(None, None, [Finding(Code.SCALE_BIAS, Severity.ERROR, "ScaleBias is not expressed by "
                                            "torch.clamp (x * scale + bias would be a separate op)",
                                            "x*Scale+Bias before clipping", "not expressible")], unsupported=True)
    notes = Notes()
    mn, mx = _literal(src, notes) if mode is Mode.LITERAL else _preserve(src, dt, notes)
    spec = PyTorchSpec(dialect=NAME, op="clamp", dtype=dt.name, shape=shape, min=mn, max=mx, version=version)
    try:
        meaning = resolve(spec)
    except SpecError as exc:
        return Emitted(spec_json(spec), None, notes.items + [Finding(
            Code.TENSOR_BOUNDS if src.has_tensor_bounds else Code.BOUND_SATURATION, Severity.ERROR,
            f"torch.clamp cannot take these bounds: {exc.message}")], unsupported=True)
    if meaning.state is State.REJECTED:
        return Emitted(spec_json(spec), meaning, notes.items + [Finding(
            _refusal_code(meaning.reason or ""), Severity.ERROR,
            f"torch {version} raises: {meaning.reason}", src.describe(), "rejected")], unsupported=True)
    items = notes.items + export_notes(meaning)
    return Emitted(normalize(spec), meaning, items, LazyArtifacts(lambda: artifacts_pytorch(spec, meaning)))


def _refusal_code(reason: str) -> Code:
    if "At least one" in reason:
        return Code.DEFAULT_BOUND
    return Code.BOUND_SATURATION


# --- interface --------------------------------------------------------------------------------------------------

def target(version: str | None) -> PyTorchTarget:
    return PyTorchTarget(dialect=NAME, version=version)


def capability() -> dict[str, Any]:
    return {"dialect": NAME, "default_target": {"dialect": NAME, "version": VERSIONS[-1]},
            "versions": [{"version": v, "selects": f"torch {v}.x and later until the next modelled release",
                          "dtypes": list(DTYPES), "ranks": "any",
                          "rules": [f"ops: {', '.join(OPS)}", *RULES]}
                         for v in VERSIONS]}


RULE_TEXTS = {
    Code.MIN_GREATER_THAN_MAX.value: ("torch.clamp: min > max sets every element to max; F.hardtanh raises "
                                      "ValueError, nn.Hardtanh asserts max_val > min_val", "torch/_torch_docs.py "
                                      "clamp; torch/nn/functional.py hardtanh"),
    Code.NAN_BOUND.value: ("A scalar NaN bound fills the whole output with NaN, one-sided too; a tensor bound's "
                           "NaN element gives NaN there", SRC_META),
    Code.NAN_INPUT.value: ("NaN input propagates (std::min/std::max keep it)", "TensorCompareKernel.cpp"),
    Code.DTYPE_PROMOTION.value: ("An integral tensor with a float scalar bound returns float32; hardtanh never "
                                 "promotes", SRC_META),
    Code.TENSOR_BOUNDS.value: ("min/max may be tensors broadcast against the input (both scalars or both "
                               "tensors)", "torch/_torch_docs.py clamp"),
    Code.BOUND_ROUNDING.value: ("Hardtanh truncates float limits on integral tensors (toLong)", SRC_HARDTANH),
    Code.BOUND_SATURATION.value: ("An out-of-range integer bound raises (negatives down to -max wrap into "
                                  "unsigned types)", SRC_C10),
    Code.BOUND_PRECISION.value: ("half/bfloat16 bounds round through float32 (two roundings)", SRC_C10),
    Code.DEFAULT_BOUND.value: ("At least one of min/max is required; None is no bound (+-inf)", SRC_META),
    Code.DTYPE_UNSUPPORTED.value: ("uint16/uint32/uint64 have no CPU clamp kernel; bool and complex are refused",
                                   "torch 2.13.0 (NotImplementedError)"),
}
EXAMPLES = {
    "relu6 float32": {"dialect": NAME, "op": "relu6", "dtype": "float32"},
    "clamp int32 promoted by min=1.5": {"dialect": NAME, "op": "clamp", "dtype": "int32", "min": 1.5},
    "clamp float32 NaN min (all NaN)": {"dialect": NAME, "op": "clamp", "dtype": "float32", "min": "nan"},
    "clamp uint8 min=-1 wraps to 255": {"dialect": NAME, "op": "clamp", "dtype": "uint8", "min": -1},
    "hardtanh int32 truncates": {"dialect": NAME, "op": "hardtanh", "dtype": "int32", "min": -1.9, "max": 1.9},
    "clamp per-element min": {"dialect": NAME, "op": "clamp", "dtype": "float32", "shape": [3],
                              "min": [0.0, "nan", 2.0], "max": [1.0, 1.0, 1.0]},
}

DIALECT = Dialect(
    name=NAME, spec_model=PyTorchSpec, target_model=PyTorchTarget, resolve=resolve_source, emit=emit,
    target=target, check_version=version_pytorch, capability=capability, version_example="pytorch:2.13",
    engines={"torch": run_torch}, artifacts=EXPORT_ARTIFACTS, in_defaults=False, rule_texts=RULE_TEXTS,
    examples=EXAMPLES)
