"""The StableHLO artifact: MLIR text with one stablehlo.clamp whose constants parse to exactly the meaning's bounds."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from clipbridge.core import exact
from clipbridge.core.dtypes import DType
from clipbridge.core.meaning import Meaning, TensorBound
from clipbridge.core.numbers import Number
from clipbridge.dialects.stablehlo.spec import NAME_OF, StableHloSpec


def _constant(value: Number, dt: DType) -> str:
    """An MLIR dense literal that parses to exactly `value` (hex bits for NaN/inf, else an exact decimal)."""
    if not dt.is_float:
        return str(int(value))
    if math.isnan(value) or math.isinf(value):
        return f"0x{exact.bits_of(value, dt.np_dtype):0{dt.bits // 4}X}"
    # Exactly a value of the type already: the shortest decimal reads back to it. MLIR's float literal needs a
    # '.', so 1e+300 is written 1.0e+300.
    text = repr(float(value))
    mantissa, e, exp = text.partition("e")
    return (mantissa if "." in mantissa else mantissa + ".0") + e + exp


def _dense(t: TensorBound, dt: DType) -> str:
    """A dense literal of a per-element bound: nested brackets in row-major order."""
    arr = np.array([_constant(v, dt) for v in t.values], dtype=object).reshape(t.shape)

    def nest(a: Any) -> str:
        return "[" + ", ".join(nest(x) for x in a) + "]" if isinstance(a, np.ndarray) else str(a)
    return nest(arr) if t.shape else str(arr[()])


def mlir_text(spec: StableHloSpec, m: Meaning) -> str:
    """func.func @main: two constants (rank 0, or the operand's shape) and stablehlo.clamp (unknown sizes: ?)."""
    et = NAME_OF[m.dtype.name]
    tb = m.lower_tensor or m.upper_tensor
    dims = list(tb.shape) if tb is not None else (spec.shape if spec.shape is not None else [None])
    tensor = "tensor<" + "".join(f"{d if isinstance(d, int) else '?'}x" for d in dims) + f"{et}>"
    scalar = f"tensor<{et}>"
    lo = _dense(m.lower_tensor, m.dtype) if m.lower_tensor else _constant(m.lo, m.dtype)
    hi = _dense(m.upper_tensor, m.dtype) if m.upper_tensor else _constant(m.hi, m.dtype)
    lo_t, hi_t = (tensor if m.lower_tensor else scalar), (tensor if m.upper_tensor else scalar)
    return (f"func.func @main(%operand: {tensor}) -> {tensor} {{\n"
            f"  %min = stablehlo.constant dense<{lo}> : {lo_t}\n"
            f"  %max = stablehlo.constant dense<{hi}> : {hi_t}\n"
            f"  %0 = stablehlo.clamp %min, %operand, %max : ({lo_t}, {tensor}, {hi_t}) -> {tensor}\n"
            f"  return %0 : {tensor}\n}}\n")
