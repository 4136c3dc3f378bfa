"""StableHLO `clamp` (openxla/stablehlo docs/spec.md): the spec resolved to a Meaning, one named rule per check.

"result[result_index] = minimum(maximum(operand[result_index], min_element), max_element)". min, operand and
max share one element type (C3); no bound has a default; no min <= max requirement (min > max gives max by the
formula); `maximum`/`minimum` are IEEE-754's: NaN propagates from the operand and from the bounds, and -0 < +0.
min and max are rank 0 or have the operand's shape (C1, C2): a list (nested for rank > 1) is a per-element bound.
i1 (boolean) is not modelled yet.
"""

from __future__ import annotations

from typing import Any

from clipbridge.core.drift import check_tensor_bound_size
from clipbridge.core.dtypes import BFLOAT16, FLOAT32, FLOAT64, DType
from clipbridge.core.errors import SpecError
from clipbridge.core.meaning import Bound, EngineNote, Meaning, NanBound, NanInput, Order, TensorBound
from clipbridge.core.numbers import Number
from clipbridge.core.suggest import one_of
from clipbridge.dialects.kit.base import source_resolver
from clipbridge.dialects.kit.common import cached_cast, typed_scalar_bound
from clipbridge.dialects.kit.spec_base import spec_json
from clipbridge.dialects.stablehlo.catalogue import SPEC_SRC
from clipbridge.dialects.stablehlo.spec import (ELEMENT_TYPES, KNOWN_UNMODELLED, NAME, NAME_OF, OP_VERSION, VERSIONS,
                                         StableHloSpec)

XLA_CPU = "jax 0.10 (XLA CPU)"
# Observed here (tests/dialects/test_stablehlo.py::test_jax_keeps_subnormals, a strict xfail): float16 is not
# affected (XLA computes it in float32, where every float16 subnormal is normal).
NOTE_FTZ = EngineNote(XLA_CPU, "Subnormal operands and bounds are read as zero (sign kept) in f32, f64 and bf16 "
                               "clamp: the CPU backend flushes denormals; the spec's maximum/minimum keep them.")
# boolean clamp (maximum is OR, minimum is AND): no boolean dtype in clipbridge yet
FTZ_TYPES = (FLOAT32, FLOAT64, BFLOAT16)


def version_stablehlo(text: str, loc: str = "version") -> str:
    """clamp is one op in every StableHLO 1.x version: '1', '1.x' and 'v1' name it."""
    key = text.strip().lower().lstrip("v")
    major = key.split(".")[0]
    if major not in VERSIONS:
        raise SpecError(one_of("Unknown StableHLO version", text, VERSIONS), loc)
    return major


def element_type_stablehlo(name: str, loc: str = "element_type") -> DType:
    """(C3) one element type for min, operand and max; the names StableHLO's MLIR syntax uses."""
    key = name.strip().lower()
    if key in KNOWN_UNMODELLED:
        raise SpecError("i1 (boolean) clamp is valid StableHLO (maximum is OR, minimum is AND), but clipbridge "
                        "has no boolean element type yet", loc)
    if key not in ELEMENT_TYPES:
        raise SpecError(one_of("Unknown StableHLO element_type", name, ELEMENT_TYPES), loc)
    return ELEMENT_TYPES[key]


@cached_cast
def typed_bound_stablehlo(value: Number, dt: DType, side: str) -> Bound:
    """(C3) baseline_element_type(min) = element type: a float literal rounds once to it, an integer must fit."""
    name = NAME_OF[dt.name]  # MLIR parses a float literal to the nearest value of the type (one rounding)
    return typed_scalar_bound(value, dt, side, side, f"as a tensor<{name}> constant", name,
                              "clamp's min and max have the operand's element type")


def bound_shape_stablehlo(value: list, operand: list | None, side: str) -> tuple[tuple[int, ...], list[Number]]:
    """(C1, C2) rank(min) = 0 or shape(min) = shape(operand): a rectangular list whose dims are the operand's."""
    dims: list[int] = []
    level: Any = value
    while isinstance(level, list):
        dims.append(len(level))
        level = level[0] if level else None
    flat: list[Number] = []
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:  # depth-first, children pushed in reverse: row-major order
        item, depth = stack.pop()
        if depth == len(dims):
            if isinstance(item, list):
                raise SpecError(f"{side} is not a rectangular list (deeper than its first elements). Got: a list "
                                f"at depth {depth}", side)
            flat.append(item)
            continue
        if not isinstance(item, list) or len(item) != dims[depth]:
            raise SpecError(f"{side} is not a rectangular list: every list at depth {depth} must have "
                            f"{dims[depth]} elements", side)
        stack.extend((sub, depth + 1) for sub in reversed(item))
    check_tensor_bound_size(len(flat), side)
    if operand is not None:
        fits = len(operand) == len(dims) and all(not isinstance(d, int) or d == n for d, n in zip(operand, dims))
        if not fits:
            raise SpecError(f"{side} must be rank 0 or have the operand's shape {list(operand)} (C1/C2). Got: shape "
                            f"{dims}", side)
    return tuple(dims), flat


def typed_tensor_stablehlo(value: list, dt: DType, operand: list | None, side: str) -> TensorBound:
    """(C1-C3) a per-element bound: the operand's shape, each element typed like the operand (as a scalar is)."""
    shape, flat = bound_shape_stablehlo(value, operand, side)
    values: list[Number] = []
    changed = False
    for i, v in enumerate(flat):
        try:
            b = typed_bound_stablehlo(v, dt, side)
        except SpecError as exc:
            raise SpecError(f"{exc.message} (element {i} of {side})", side) from None
        values.append(b.value)
        changed = changed or bool(b.steps)
    steps = (f"{side} elements as a tensor<{NAME_OF[dt.name]}> constant (each rounded once)",) if changed else ()
    return TensorBound(shape, tuple(values), tuple(flat) if changed else None, steps)


def _side(value: Any, dt: DType, operand: list | None, side: str) -> tuple[Bound | None, TensorBound | None]:
    if isinstance(value, list):
        return None, typed_tensor_stablehlo(value, dt, operand, side)
    return typed_bound_stablehlo(value, dt, side), None


def resolve(spec: StableHloSpec) -> Meaning:
    """The function clamp computes: minimum(maximum(x, min), max), IEEE NaN propagation, no defaults."""
    dt = element_type_stablehlo(spec.element_type)
    lo, lo_t = _side(spec.min, dt, spec.shape, "min")
    hi, hi_t = _side(spec.max, dt, spec.shape, "max")
    rules = (f"StableHLO clamp: minimum(maximum(operand, min), max) ({SPEC_SRC})",
             "min and max are required and typed like the operand (C3); min > max gives max",
             "NaN propagates from the operand and from a bound (IEEE-754 maximum/minimum)",
             "signed zeros ordered -0 < +0 (IEEE-754 maximum/minimum; not told apart by output comparison)")
    notes = (NOTE_FTZ,) if dt in FTZ_TYPES else ()
    if lo_t is not None or hi_t is not None:
        rules += ("min/max of the operand's shape: each element clamps its own position (C1/C2)",)
    return Meaning(NAME, OP_VERSION, dt, lo, hi, order=Order.MAX_WINS, nan_input=NanInput.PROPAGATE,
                   nan_bound=NanBound.PROPAGATE, rules=rules, engine_notes=notes, lower_tensor=lo_t,
                   upper_tensor=hi_t)


def normalize(spec: StableHloSpec) -> dict:
    out = spec_json(spec)
    out["element_type"] = spec.element_type.strip().lower()
    return out


resolve_source = source_resolver(NAME, resolve, normalize)
