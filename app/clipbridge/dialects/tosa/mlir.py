"""The TOSA MLIR artifact: func.func @main with one tosa.clamp, its attributes parsing to exactly the bounds."""

from __future__ import annotations

import math

from clipbridge.core import exact
from clipbridge.core.meaning import Meaning
from clipbridge.core.numbers import Number
from clipbridge.dialects.tosa.meaning import nan_mode_of
from clipbridge.dialects.tosa.spec import DTYPES, NAME_OF, TosaSpec

MLIR_TYPE = {"int8": "i8", "int16": "i16", "fp16": "f16", "bf16": "bf16", "fp32": "f32"}


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
