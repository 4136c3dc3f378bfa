"""StableHLO `clamp` (openxla/stablehlo docs/spec.md): spec, meaning, emit (MLIR text), and jax as its engine.

"result[result_index] = minimum(maximum(operand[result_index], min_element), max_element)". min, operand and
max share one element type (C3); no bound has a default; no min <= max requirement (min > max gives max by the
formula); `maximum`/`minimum` are IEEE-754's: NaN propagates from the operand and from the bounds, and -0 < +0.
min and max are rank 0 or have the operand's shape (C1, C2): a list (nested for rank > 1) is a per-element bound.
i1 (boolean) is not modelled yet.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BeforeValidator, PlainSerializer, StringConstraints, WithJsonSchema
from pydantic_core import PydanticCustomError

from app.engines import config as engine_config, extras as engines
from app.core import exact
from app.dialects.kit.base import Dialect, source_resolver
from app.dialects.kit.common import (Emitted, LazyArtifacts, Mode, TypeWords, default_made_explicit, literal_integer_cast,
                                 typed_scalar_bound)
from app.dialects.kit.spec_base import Shape, _parse_wire, _Strict, spec_json
from app.core.dtypes import (BFLOAT16, FLOAT16, FLOAT32, FLOAT64, INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32,
                        UINT64, DType)
from app.core.errors import SpecError
from app.core.findings import Code, Finding, Notes, Severity
from app.core.drift import MAX_TENSOR_BOUND, check_tensor_bound_size
from app.core.meaning import Bound, EngineNote, Meaning, NanBound, NanInput, Order, TensorBound
from app.core.numbers import MAX_NUMBER_STRING, Number, format_number, wire_number
from app.core.suggest import one_of

NAME = "stablehlo"
OP_VERSION = "clamp"  # clamp is unchanged across StableHLO's versioned opset (1.x)
VERSIONS = ("1",)
SPEC_SRC = "openxla/stablehlo docs/spec.md#clamp"
# StableHLO's element type names (signed integers are written iN in MLIR text, unsigned uiN).
ELEMENT_TYPES: dict[str, DType] = {"f32": FLOAT32, "f16": FLOAT16, "bf16": BFLOAT16, "f64": FLOAT64,
                                   "i8": INT8, "i16": INT16, "i32": INT32, "i64": INT64,
                                   "ui8": UINT8, "ui16": UINT16, "ui32": UINT32, "ui64": UINT64}
NAME_OF = {dt.name: name for name, dt in ELEMENT_TYPES.items()}
KNOWN_UNMODELLED = ("i1",)
XLA_CPU = "jax 0.10 (XLA CPU)"
# Observed here (tests/dialects/test_stablehlo.py::test_jax_keeps_subnormals, a strict xfail): float16 is not
# affected (XLA computes it in float32, where every float16 subnormal is normal).
NOTE_FTZ = EngineNote(XLA_CPU, "Subnormal operands and bounds are read as zero (sign kept) in f32, f64 and bf16 "
                               "clamp: the CPU backend flushes denormals; the spec's maximum/minimum keep them.")
FTZ_TYPES = (FLOAT32, FLOAT64, BFLOAT16)  # boolean clamp (maximum is OR, minimum is AND): no boolean dtype in clipbridge yet


def _parse_bound(value: Any) -> Any:
    """A wire number, or a (nested) list of them: at most MAX_TENSOR_BOUND numbers and 64 levels, read iteratively."""
    if not isinstance(value, list):
        return _parse_wire(value)
    count = 0
    out: list = []
    stack: list[tuple[list, list, int]] = [(value, out, 1)]
    while stack:
        src, dst, depth = stack.pop()
        if depth > 64:
            raise PydanticCustomError("bound", "A tensor bound nests at most 64 lists (StableHLO ranks)")
        for item in src:
            if isinstance(item, list):
                sub: list = []
                dst.append(sub)
                stack.append((item, sub, depth + 1))
            else:
                count += 1
                if count > MAX_TENSOR_BOUND:
                    raise PydanticCustomError("bound", "A tensor bound may have at most {n} elements",
                                              {"n": MAX_TENSOR_BOUND})
                dst.append(_parse_wire(item))
    return out


def _wire_bound(value: Any) -> Any:
    return [_wire_bound(v) for v in value] if isinstance(value, list) else wire_number(value)


_NUMBER_SCHEMA = {"anyOf": [{"type": "number"}, {"type": "string", "maxLength": MAX_NUMBER_STRING}]}
BoundValue = Annotated[
    Any, BeforeValidator(_parse_bound), PlainSerializer(_wire_bound),
    WithJsonSchema({"anyOf": [*_NUMBER_SCHEMA["anyOf"], {"type": "array", "maxItems": MAX_TENSOR_BOUND}],
                    "description": "A number (rank 0), or a list of numbers of the operand's shape, nested for "
                                   "rank > 1 (per-element bound). Numbers as JSON numbers or strings: 'nan', "
                                   "'inf', '-inf', a decimal integer, a float literal."}),
]


class StableHloSpec(_Strict):
    """StableHLO clamp: `element_type` (f32, f16, bf16, f64, i8..i64, ui8..ui64), `shape`, `min`/`max` (a number,
    or a list of the operand's shape)."""

    dialect: Literal["stablehlo"]
    element_type: Annotated[str, StringConstraints(max_length=16)]
    shape: Shape | None = None
    min: BoundValue
    max: BoundValue


class StableHloTarget(_Strict):
    dialect: Literal["stablehlo"]
    version: Annotated[str, StringConstraints(max_length=16)] | None = None


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


# --- emit -----------------------------------------------------------------------------------------------------

def _literal(bound: Bound, dt: DType, side: str, notes: Notes) -> Number:
    """Literal mode: the source's number as written; a missing bound (no default in StableHLO) made explicit."""
    name = NAME_OF[dt.name]
    if default_made_explicit(bound, side, "StableHLO clamp", notes):
        return bound.value
    given = bound.given
    if dt.is_float:
        return given  # resolve() rounds it once to the element type
    return literal_integer_cast(given, dt, side, notes, TypeWords(f"a {name} constant", name, f"a {name}", name))


def _preserve(src: Meaning, notes: Notes) -> list[Number]:
    """Preserve mode: the source's effective bounds (already values of the type), its NaN and order rules kept."""
    assert src.lower is not None and src.upper is not None
    values: list[Number] = [src.lower.value, src.upper.value]
    if src.nan_bound is NanBound.IGNORE:
        # StableHLO propagates a NaN bound; an ignored one is an open side: +-inf computes that.
        for i, side in enumerate(("min", "max")):
            if exact.is_nan(values[i]):
                values[i] = -math.inf if i == 0 else math.inf
                notes.add(Code.NAN_BOUND, Severity.INFO, f"The source ignores a NaN {side}; StableHLO would "
                          f"propagate it: wrote {format_number(values[i])}")
    if src.crossed and src.order is not Order.MAX_WINS:
        values = [values[0], values[0]]
        if src.order is Order.AMBIGUOUS:
            notes.add(Code.MIN_GREATER_THAN_MAX, Severity.WARNING, "The source's min > max is ambiguous; emitted "
                      "min = max under the default reading (current doc: Min)")
        else:
            notes.add(Code.MIN_GREATER_THAN_MAX, Severity.INFO, "The source gives min when min > max; StableHLO "
                      "gives max: emitted min = max = min")
    return values


def emit(src: Meaning, target: StableHloTarget, mode: Mode, shape: list | None) -> Emitted:
    """A StableHLO clamp (compact spec and MLIR text) computing `src`."""
    version_stablehlo(target.version or VERSIONS[-1])
    dt = src.dtype
    if src.scale_bias is not None:
        return Emitted(None, None, [Finding(
            Code.SCALE_BIAS, Severity.ERROR, "ScaleBias is not expressed in the StableHLO artifact (a multiply and "
            "add before clamp would be needed)", "x*Scale+Bias before clipping", "not expressible")],
            unsupported=True)
    notes = Notes()
    if src.has_tensor_bounds:
        return _emit_tensor(src, shape, notes)
    if mode is Mode.LITERAL:
        assert src.lower is not None and src.upper is not None
        values = [_literal(src.lower, dt, "min", notes), _literal(src.upper, dt, "max", notes)]
    else:
        values = _preserve(src, notes)
    spec = StableHloSpec(dialect="stablehlo", element_type=NAME_OF[dt.name], shape=shape, min=values[0],
                         max=values[1])
    meaning = resolve(spec)
    return Emitted(normalize(spec), meaning, notes.items, LazyArtifacts(lambda: {"stablehlo_mlir": mlir_text(spec, meaning)}))


def _open_value(dt: DType, side: str) -> Number:
    return dt.unbounded(side == "min")


def _side_array(src: Meaning, side: str) -> np.ndarray:
    """One side of `src` as an object array of exact values (a scalar side is rank 0; an open side unbounded)."""
    t, b = (src.lower_tensor, src.lower) if side == "min" else (src.upper_tensor, src.upper)
    if t is not None:
        return np.array(t.values, dtype=object).reshape(t.shape)
    return np.array(_open_value(src.dtype, side) if b is None else b.value, dtype=object)


def _emit_tensor(src: Meaning, shape: list | None, notes: Notes) -> Emitted:
    """Per-element bounds as dense constants of the operand's shape (C1/C2), the source's NaN and order rules kept."""
    dt = src.out_dtype
    lo, hi = _side_array(src, "min"), _side_array(src, "max")
    static = shape is not None and all(isinstance(d, int) for d in shape)
    try:
        want = tuple(shape) if static else np.broadcast_shapes(lo.shape, hi.shape)  # type: ignore[arg-type]
        # A rank-0 side stays rank 0 (C1/C2 allow it); a tensor side takes the operand's shape.
        lo, hi = (np.broadcast_to(a, want).copy() if a.ndim else a.copy() for a in (lo, hi))
    except ValueError:
        return Emitted(None, None, [Finding(
            Code.TENSOR_BOUNDS, Severity.ERROR, f"The source's per-element bounds do not broadcast to the operand's "
            f"shape {shape}; StableHLO needs min/max of exactly that shape (C1/C2)")], unsupported=True)
    check_tensor_bound_size(max(lo.size, hi.size), "min")
    if src.nan_bound is NanBound.IGNORE:
        for arr, side in ((lo, "min"), (hi, "max")):
            for i, v in enumerate(arr.flat):
                if exact.is_nan(v):
                    arr.flat[i] = _open_value(dt, side)
                    notes.add(Code.NAN_BOUND, Severity.INFO, f"The source ignores NaN {side} elements; StableHLO "
                              "would propagate them: wrote them unbounded")
    if src.order is not Order.MAX_WINS:
        for i, (a, b) in enumerate(zip(lo.flat, hi.flat)):
            if not exact.is_nan(a) and not exact.is_nan(b) and a > b:
                hi.flat[i] = a
                notes.add(Code.MIN_GREATER_THAN_MAX, Severity.INFO, "The source gives min where min > max; "
                          "StableHLO gives max: wrote max = min at those elements")
    if any(t is not None and a.shape != t.shape for a, t in ((lo, src.lower_tensor), (hi, src.upper_tensor))):
        notes.add(Code.TENSOR_BOUNDS, Severity.INFO, f"StableHLO min/max are rank 0 or the operand's shape: "
                  f"wrote the tensor bounds as {list(want)} constants")
    notes.items = list({(f.code, f.message): f for f in notes.items}.values())
    spec = StableHloSpec(dialect="stablehlo", element_type=NAME_OF[dt.name], shape=list(want) if not static
                         else shape, min=lo.tolist() if lo.ndim else lo[()], max=hi.tolist() if hi.ndim else hi[()])
    meaning = resolve(spec)
    return Emitted(normalize(spec), meaning, notes.items, LazyArtifacts(lambda: {"stablehlo_mlir": mlir_text(spec, meaning)}))


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


# --- interface --------------------------------------------------------------------------------------------------

def target(version: str | None) -> StableHloTarget:
    return StableHloTarget(dialect="stablehlo", version=version)  # checked when emitting, located at the target


def capability() -> dict[str, Any]:
    return {"dialect": NAME, "default_target": {"dialect": NAME, "version": VERSIONS[-1]},
            "versions": [{"version": OP_VERSION, "selects": "StableHLO 1.x", "dtypes": list(ELEMENT_TYPES),
                          "ranks": "any",
                          "rules": ["minimum(maximum(operand, min), max): min > max gives max",
                                    "min and max required, typed like the operand",
                                    "min/max rank 0 or the operand's shape (per-element bounds)",
                                    "NaN propagates from the operand and the bounds (IEEE-754)",
                                    "signed zeros ordered -0 < +0",
                                    "i1 (boolean): not modelled yet"]}]}


def run_jax(sem: Any, x: np.ndarray) -> np.ndarray:
    """jax.lax.clamp (XLA CPU) on the meaning's bounds: StableHLO's own engine."""
    try:
        import jax  # noqa: F401
    except ImportError:
        raise engines.missing("jax") from None
    m = sem.meaning
    if m.has_tensor_bounds:
        # clamp takes min/max of rank 0 or x's shape: the probes and the bounds are broadcast to one shape first.
        lo = m.lower_tensor.array(m.dtype) if m.lower_tensor else m.dtype.array([m.lo])[0]
        hi = m.upper_tensor.array(m.dtype) if m.upper_tensor else m.dtype.array([m.hi])[0]
        full = np.broadcast_shapes(np.shape(lo), np.shape(x), np.shape(hi))
        lo, hi = (np.broadcast_to(b, full) if np.ndim(b) else b for b in (lo, hi))
        y = _jax_clamp(m.dtype)(lo, np.broadcast_to(x, full), hi)
    else:
        y = _jax_clamp(m.dtype)(m.dtype.array([m.lo])[0], x, m.dtype.array([m.hi])[0])
    # XLA CPU flushes subnormals and has no flag to stop it: reported with the run (NOTE_FTZ says what it changes).
    engine_config.record_run(engine_config.jax_settings(getattr(sem, "precision", "model")))
    return y


@lru_cache(maxsize=16)
def _jax_clamp(dt: DType) -> Any:
    """A jitted clamp for one element type on the CPU (64-bit types need jax's x64 mode)."""
    import jax
    if dt.bits == 64:
        jax.config.update("jax_enable_x64", True)  # else jax silently computes f64/i64/u64 in 32 bits
    cpu = jax.devices("cpu")[0]
    fn = jax.jit(jax.lax.clamp)

    def clamp(lo: Any, x: Any, hi: Any) -> np.ndarray:
        args = [jax.device_put(np.asarray(a, dtype=dt.np_dtype), cpu) for a in (lo, x, hi)]
        return np.asarray(fn(*args))
    return clamp


def run_mlir(text: str, x: np.ndarray) -> np.ndarray:
    """The emitted MLIR text itself compiled by XLA's CPU backend and run on `x` (its shape must be static).

    Uses jax's internal backend API (jax._src): a check that the artifact runs, not a public backend."""
    import jax
    from jax._src import xla_bridge
    from jax._src.lib import xla_client as xc
    if x.dtype.itemsize == 8:
        jax.config.update("jax_enable_x64", True)
    backend = xla_bridge.get_backend("cpu")
    devices = backend.local_devices()[:1]
    exe = backend.compile_and_load(text, xc.DeviceList(tuple(devices)), xc.CompileOptions())
    return np.asarray(exe.execute([jax.device_put(x, devices[0])])[0])


DIALECT = Dialect(
    name=NAME, spec_model=StableHloSpec, target_model=StableHloTarget, resolve=resolve_source, emit=emit,
    target=target, check_version=version_stablehlo, capability=capability, version_example="stablehlo:1",
    engines={"jax": run_jax}, artifacts={"stablehlo_mlir": "StableHLO MLIR text: func.func @main with clamp"},
    rule_texts={
        Code.BOUND_ROUNDING.value: ("min/max are typed like the operand (C3): an integer type takes integer "
                                    "literals only, no rounding", SPEC_SRC),
        Code.BOUND_SATURATION.value: ("a bound must be a value of the element type: out of range is an error",
                                      SPEC_SRC),
        Code.BOUND_PRECISION.value: ("a float literal rounds once to the element type (nearest even)", SPEC_SRC),
        Code.DEFAULT_BOUND.value: ("min and max are required operands: no defaults", SPEC_SRC),
        Code.MIN_GREATER_THAN_MAX.value: ("minimum(maximum(x, min), max): min > max gives max", SPEC_SRC),
        Code.NAN_INPUT.value: ("NaN propagates (IEEE-754 maximum/minimum)", SPEC_SRC),
        Code.NAN_BOUND.value: ("a NaN bound propagates: every output is NaN", SPEC_SRC),
        Code.INFINITE_BOUND.value: ("+-inf are values of float types; not of integer types", SPEC_SRC),
        Code.FLOAT16_BOUND_OVERFLOW.value: ("an f16 literal beyond 65504 rounds to inf", SPEC_SRC),
        Code.DTYPE_UNSUPPORTED.value: ("f16, bf16, f32, f64, i8..i64, ui8..ui64 modelled; i1 not yet", SPEC_SRC),
        Code.VERSION_UNSUPPORTED.value: ("clamp is one op in every StableHLO 1.x version", SPEC_SRC),
        Code.RANK_UNSUPPORTED.value: ("any rank", SPEC_SRC),
        Code.SCALE_BIAS.value: ("no ScaleBias: a multiply and add before clamp would be needed", SPEC_SRC),
        Code.STRIDES.value: ("tensors are dense", SPEC_SRC),
        Code.DYNAMIC_BOUNDS.value: ("min and max are operands: they may be computed", SPEC_SRC),
        Code.TENSOR_BOUNDS.value: ("min and max are rank 0 or have the operand's shape (C1, C2): per-element "
                                   "bounds", SPEC_SRC),
        Code.DTYPE_PROMOTION.value: ("the result has the operand's type (C3)", SPEC_SRC),
        Code.SHAPE_UNKNOWN.value: ("shapes may be dynamic (tensor<?xf32>)", SPEC_SRC),
        Code.ENGINE_BEHAVIOUR.value: ("jax 0.10 XLA CPU flushes f32/f64/bf16 subnormals, observed",
                                      "tests/dialects/test_stablehlo.py"),
    },
    examples={
        "relu6-f32": {"dialect": NAME, "element_type": "f32", "shape": [1, 4], "min": 0, "max": 6},
        "i8-crossed": {"dialect": NAME, "element_type": "i8", "min": 5, "max": 2},
        "nan-bound": {"dialect": NAME, "element_type": "f16", "min": "nan", "max": 6},
    },
    in_defaults=False)  # named targets only until the default-target golden tests take a fourth column
