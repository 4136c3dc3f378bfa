"""PyTorch `torch.clamp` / `clamp_min` / `clamp_max` / `F.hardtanh` / `F.relu6` as torch 2.13.0 computes them.

Read from pytorch/pytorch aten/src/ATen/native/TensorCompare.cpp and Activation.cpp, torch/nn/functional.py, and
checked rule by rule on torch 2.13.0+cpu (tests/dialects/test_pytorch.py). min(max(x, min), max): min > max gives
max; a NaN input propagates; a scalar NaN bound makes every output NaN (also clamp_min/clamp_max, which fill with
the NaN); a NaN element of a tensor bound makes that output element NaN. An integer tensor with a float scalar
bound promotes to the default dtype (float32). Hardtanh truncates its bounds on integer tensors, never promotes.
The bounds' conversions are in bounds.py, the spec model in spec.py.

Where torch 2.13.0 differs from the reference reading (clipbridge's notes on PyTorch clamp), torch wins:
- no prepare_clamp_bound in this release: an out-of-range integer bound raises (c10 checked_convert) except that
  negatives down to -max wrap into unsigned types (clamp(uint8, min=-1) gives 255 everywhere);
- F.hardtanh itself raises ValueError for min_val > max_val (the module additionally asserts max_val > min_val);
- half/bfloat16 scalar bounds are built from a float (two roundings), and a finite bound beyond the type's range
  raises instead of overflowing to inf;
- uint16/uint32/uint64 have no CPU clamp kernel; a scalar and a tensor bound together are refused by the parser.
"""

from __future__ import annotations

from clipbridge.core import exact
from clipbridge.dialects.kit.base import source_resolver
from clipbridge.dialects.kit.spec_base import spec_json
from clipbridge.dialects.pytorch.bounds import (_Refused, convert_bound_pytorch, default_bound_pytorch,
                                         hardtanh_bound_pytorch, tensor_bound_pytorch)
from clipbridge.dialects.pytorch.spec import (ALIASES, DTYPES, NAME, OPS, SRC_C10, SRC_HARDTANH, SRC_META,
                                       UNSUPPORTED_DTYPES, VERSIONS, PyTorchSpec)
from clipbridge.core.dtypes import FLOAT32, DType
from clipbridge.core.errors import SpecError
from clipbridge.core.meaning import EngineNote, Meaning, NanBound, NanInput, Order, State
from clipbridge.core.numbers import Number
from clipbridge.core.suggest import one_of

DEFAULT_DTYPE = FLOAT32  # torch.get_default_dtype(): what an integer tensor promotes to with a float scalar
NOTE_EXPORT_NAN = EngineNote("torch.onnx.export 2.13 + onnxruntime", "Both exporters write Clip(x, NaN) for a "
                             "scalar NaN bound; onnxruntime's Clip ignores a NaN bound, so the exported model does "
                             "not fill the output with NaN as torch.clamp does")
NOTE_TS_EXPORT = EngineNote("torch.onnx.export 2.13 (dynamo=False)", "The TorchScript exporter casts float bounds "
                            "to the integer input's dtype (Clip on int32 with min 1.5 becomes Clip(x, 1)): no "
                            "promotion, the fraction truncated; torch.clamp itself returns float32")


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
