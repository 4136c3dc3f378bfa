"""Core ML MIL `clip` (apple/coremltools, coremltools/converters/mil/mil/ops/defs/iOS15 and iOS17 elementwise_unary.py).

"Clip the values in the input x to [alpha, beta], element-wise." T is fp16 or fp32; alpha and beta are const
scalars of T. iOS15's value_inference is np.minimum(np.maximum(x, alpha), beta): alpha > beta gives beta and NumPy
propagates NaN. iOS17 adds "strict validation to ensure that alpha < beta": alpha >= beta is a ValueError when the
program is built. Opsets between resolve to the highest definition at or below them (iOS16 -> iOS15, iOS18 ->
iOS17). What a device does with NaN is not documented (coremltools' docstring is silent; not found in Apple's docs).

The artifact is the MIL program coremltools builds (mb.program / mb.clip), printed as MIL text. coremltools builds
it on Linux but cannot run it there (libcoremlpython is macOS only); const inputs fold through value_inference,
which the tests compare with evaluate().
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import StringConstraints

from app.core import exact
from app.dialects.kit.base import Dialect, source_resolver
from app.dialects.kit.common import Emitted, LazyArtifacts, Mode, default_made_explicit, rounded_float_bound
from app.dialects.kit.spec_base import Shape, WireNumber, _Strict, spec_json
from app.core.dtypes import FLOAT16, FLOAT32, DType
from app.core.errors import SpecError
from app.core.findings import Code, Finding, Notes, Severity
from app.core.meaning import Bound, EngineNote, Meaning, NanBound, NanInput, Order, State
from app.core.numbers import Number, format_number
from app.core.suggest import one_of

NAME = "coreml"
SRC15 = "apple/coremltools coremltools/converters/mil/mil/ops/defs/iOS15/elementwise_unary.py (clip)"
SRC17 = "apple/coremltools coremltools/converters/mil/mil/ops/defs/iOS17/elementwise_unary.py (clip)"
OPSETS = ("iOS13", "iOS14", "iOS15", "iOS16", "iOS17", "iOS18")
DEFINITIONS = ("iOS15", "iOS17")  # the opsets that (re)define clip
DTYPES: dict[str, DType] = {"fp16": FLOAT16, "fp32": FLOAT32}
NAME_OF = {dt.name: n for n, dt in DTYPES.items()}
# coremltools 9.0, iOS17 clip.type_inference, as observed when building (tests/dialects/test_coreml.py).
REJECT_TEXT = "The `alpha` value ({a}) should be smaller than `beta` value ({b}) in `clip` op."
NAN_UNDOCUMENTED = (f"NaN on device: not documented ({SRC15} docstring; Apple's MIL op reference); coremltools' "
                    "value_inference (NumPy) propagates it")

# Observed (tests/dialects/test_coreml.py::test_value_inference_nan_bound, a strict xfail): the only executable
# definition on Linux, coremltools' constant folding, propagates a NaN alpha/beta; the meaning leaves it undocumented.
NOTE_FOLD_NAN_BOUND = EngineNote("coremltools 9.0 value_inference (const folding)", (
    "A NaN alpha or beta makes every folded output NaN (np.maximum/np.minimum propagate); what a device does is not "
    "documented, and clipbridge executes an undocumented NaN bound as ignored."))


class CoreMLSpec(_Strict):
    """Core ML MIL clip: `opset` (iOS13..iOS18), `dtype` (fp16, fp32), const scalars `alpha` and `beta`, `shape`."""

    dialect: Literal["coreml"]
    opset: Annotated[str, StringConstraints(max_length=16)] = "iOS17"
    dtype: Annotated[str, StringConstraints(max_length=16)] = "fp32"
    alpha: WireNumber
    beta: WireNumber
    shape: Shape | None = None


class CoreMLTarget(_Strict):
    dialect: Literal["coreml"]
    version: Annotated[str, StringConstraints(max_length=16)] | None = None


def opset_coreml(text: str, loc: str = "opset") -> str:
    """An opset name (iOS13..iOS18, any case; macOS/tvOS/watchOS names are not modelled)."""
    key = text.strip().lower().replace("ios", "")
    for name in OPSETS:
        if name.lower().replace("ios", "") == key:
            return name
    raise SpecError(one_of("Unknown Core ML opset", text, OPSETS), loc)


def definition_coreml(opset: str) -> str:
    """The clip definition an opset uses: the highest at or below it (iOS16 -> iOS15, iOS18 -> iOS17)."""
    n = int(opset[3:])
    return "iOS17" if n >= 17 else "iOS15"


def dtype_coreml(name: str, loc: str = "dtype") -> DType:
    """type_domains = {"T": (types.fp16, types.fp32)}."""
    key = {"float16": "fp16", "float32": "fp32"}.get(name.strip().lower(), name.strip().lower())
    if key not in DTYPES:
        raise SpecError(one_of("Unknown Core ML clip dtype (T: fp16, fp32)", name, DTYPES), loc)
    return DTYPES[key]


def const_bound_coreml(value: Number, dt: DType, side: str) -> Bound:
    """alpha/beta: TensorInputType(const=True, type_domain="T"): the number becomes a const of T, one rounding."""
    return rounded_float_bound(value, dt, side, f"as a {NAME_OF[dt.name]} const")


def strict_order_coreml(lo: Bound, hi: Bound, dt: DType) -> str | None:
    """iOS17: `if self.alpha.val >= self.beta.val: raise ValueError(...)` on the consts of T (NaN compares false)."""
    if lo.is_nan or hi.is_nan or lo.value < hi.value:
        return None
    return REJECT_TEXT.format(a=dt.np_dtype.type(lo.value), b=dt.np_dtype.type(hi.value))  # NumPy's str of T


def resolve(spec: CoreMLSpec) -> Meaning:
    """clip(x, alpha, beta) = min(max(x, alpha), beta) (value_inference); iOS17 rejects alpha >= beta."""
    opset = opset_coreml(spec.opset)
    version = definition_coreml(opset)
    dt = dtype_coreml(spec.dtype)
    lo = const_bound_coreml(spec.alpha, dt, "alpha")
    hi = const_bound_coreml(spec.beta, dt, "beta")
    src = SRC17 if version == "iOS17" else SRC15
    rules = (f"Core ML clip ({opset}: the {version} definition): np.minimum(np.maximum(x, alpha), beta) ({src})",
             "alpha > beta gives beta" if version == "iOS15" else "alpha >= beta is a ValueError at build time",
             NAN_UNDOCUMENTED)
    state, reason = State.DEFINED, None
    order = Order.MAX_WINS
    if version == "iOS17":
        order = Order.REJECTED
        reason = strict_order_coreml(lo, hi, dt)
        if reason is not None:
            state = State.REJECTED
    notes = (NOTE_FOLD_NAN_BOUND,) if lo.is_nan or hi.is_nan else ()
    return Meaning(NAME, f"clip ({version})", dt, lo, hi, order=order, nan_input=NanInput.UNDOCUMENTED,
                   nan_bound=NanBound.UNDOCUMENTED, state=state, reason=reason, rules=rules, engine_notes=notes)


def normalize(spec: CoreMLSpec) -> dict:
    out = spec_json(spec)
    out["opset"] = opset_coreml(spec.opset)
    out["dtype"] = NAME_OF[dtype_coreml(spec.dtype).name]
    return out


resolve_source = source_resolver(NAME, resolve, normalize)


# --- the MIL program (coremltools) ------------------------------------------------------------------------------

def _import_coremltools() -> Any:
    """coremltools, imported with its logger at ERROR: on Linux its import warns about every macOS-only proxy it
    cannot load (and an untested torch), which is noise for a translation that only builds the program."""
    import logging
    log = logging.getLogger("coremltools")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        import coremltools
    finally:
        log.setLevel(level)
    return coremltools


def build_program(spec: CoreMLSpec, x: np.ndarray | None = None) -> Any:
    """mb.program with one mb.clip. With `x`, the clip's input is that const array (coremltools folds it: the
    clip's output .val is value_inference's); else a tensor input of `shape` (unknown sizes as symbols)."""
    ct = _import_coremltools()
    from coremltools.converters.mil import Builder as mb
    from coremltools.converters.mil.mil import get_new_symbol, types
    dt = dtype_coreml(spec.dtype)
    np_t = dt.np_dtype
    mil_t = types.fp16 if dt is FLOAT16 else types.fp32
    target = getattr(ct.target, opset_coreml(spec.opset))
    alpha, beta = np_t.type(dt.round(spec.alpha)), np_t.type(dt.round(spec.beta))
    if x is not None:
        @mb.program(input_specs=[mb.TensorSpec(shape=(1,), dtype=mil_t)], opset_version=target)
        def folded(inp: Any) -> Any:
            y = mb.clip(x=mb.const(val=np.asarray(x, dtype=np_t)), alpha=alpha, beta=beta, name="clip")
            return mb.add(x=inp, y=mb.reduce_sum(x=y, axes=[0]))
        return folded
    dims = spec.shape if spec.shape is not None else [None]
    shape = tuple(d if isinstance(d, int) else get_new_symbol() for d in dims)

    @mb.program(input_specs=[mb.TensorSpec(shape=shape, dtype=mil_t)], opset_version=target)
    def prog(inp: Any) -> Any:
        return mb.clip(x=inp, alpha=alpha, beta=beta, name="clip")
    return prog


def mil_text(spec: CoreMLSpec) -> str | None:
    """The MIL program's text as coremltools prints it; None when coremltools is not installed."""
    try:
        _import_coremltools()
    except ImportError:
        return None
    return str(build_program(spec)).strip() + "\n"


def value_inference_coreml(spec: CoreMLSpec, x: np.ndarray) -> np.ndarray:
    """coremltools' own evaluation of the clip on a const input (its value_inference, run while building)."""
    prog = build_program(spec, np.asarray(x).reshape(-1))
    op = next(o for o in prog.functions["main"].operations if o.op_type == "clip")
    return np.asarray(op.outputs[0].val).reshape(np.shape(x))


# --- emit -----------------------------------------------------------------------------------------------------

def _unsupported(code: Code, message: str, src: Meaning) -> Emitted:
    return Emitted(None, None, [Finding(code, Severity.ERROR, message, src.describe(), "not expressible")],
                   unsupported=True)


def _values(src: Meaning, mode: Mode, notes: Notes) -> list[Number]:
    """Literal: the source's numbers (each rounded once to T by resolve). Preserve: the effective bounds, a NaN
    bound the source ignores or zeroes rewritten, min-wins order as alpha = beta = min."""
    assert src.lower is not None and src.upper is not None
    if mode is Mode.LITERAL:
        out = []
        for b, side in ((src.lower, "alpha"), (src.upper, "beta")):
            out.append(b.value if default_made_explicit(b, side, "Core ML clip", notes) else b.given)
        return out
    values: list[Number] = [src.lower.value, src.upper.value]
    for i, side in enumerate(("alpha", "beta")):
        if exact.is_nan(values[i]) and src.nan_bound in (NanBound.IGNORE, NanBound.ZERO):
            values[i] = 0.0 if src.nan_bound is NanBound.ZERO else (-math.inf if i == 0 else math.inf)
            notes.add(Code.NAN_BOUND, Severity.INFO, f"The source reads a NaN {side} as {format_number(values[i])}; "
                      f"Core ML does not document NaN: wrote {format_number(values[i])}")
    if src.crossed and src.order in (Order.MIN_WINS, Order.AMBIGUOUS):
        values = [values[0], values[0]]
        notes.add(Code.MIN_GREATER_THAN_MAX, Severity.INFO, "The source gives min when min > max; Core ML clip "
                  "gives beta: emitted alpha = beta = min")
    return values


def emit(src: Meaning, target: CoreMLTarget, mode: Mode, shape: list | None) -> Emitted:
    """A Core ML MIL clip (compact spec and MIL text) computing `src`."""
    opset = opset_coreml(target.version or OPSETS[-1], "version")
    dt = src.dtype
    if dt.name not in NAME_OF:
        return _unsupported(Code.DTYPE_UNSUPPORTED, f"Core ML clip takes fp16 and fp32 (T), not {dt.name}; an "
                            "integer clip would be maximum then minimum", src)
    if src.scale_bias is not None:
        return _unsupported(Code.SCALE_BIAS, "ScaleBias is not expressed in the Core ML artifact", src)
    if src.has_tensor_bounds:
        return _unsupported(Code.TENSOR_BOUNDS, "Core ML clip's alpha and beta are const scalars", src)
    if src.result_dtype not in (None, dt):
        return _unsupported(Code.DTYPE_PROMOTION, "Core ML clip keeps the input's dtype", src)
    notes = Notes()
    values = _values(src, mode, notes)
    spec = CoreMLSpec(dialect=NAME, opset=opset, dtype=NAME_OF[dt.name], alpha=values[0], beta=values[1],
                      shape=shape)
    meaning = resolve(spec)
    if meaning.state is State.REJECTED:
        return Emitted(normalize(spec), meaning, notes.items + [Finding(
            Code.MIN_GREATER_THAN_MAX, Severity.ERROR, f"Core ML {opset} refuses to build this clip: "
            f"{meaning.reason} (iOS15/iOS16 clip gives beta)", src.describe(), "rejected")], unsupported=True)
    if shape == []:
        notes.add(Code.RANK_UNSUPPORTED, Severity.INFO, "A Core ML program input has rank >= 1: the MIL artifact's "
                  "input is [1] (the clip is elementwise, so the values are the same)")
    return Emitted(normalize(spec), meaning, notes.items, LazyArtifacts(lambda: _artifacts(spec, shape)))


def _artifacts(spec: CoreMLSpec, shape: list | None) -> dict[str, str]:
    text = mil_text(spec if shape != [] else spec.model_copy(update={"shape": [1]}))
    return {"coreml_mil": text} if text else {}


# --- interface --------------------------------------------------------------------------------------------------

def target(version: str | None) -> CoreMLTarget:
    return CoreMLTarget(dialect=NAME, version=version)


def check_version(text: str) -> str:
    return opset_coreml(text, "version")


def capability() -> dict[str, Any]:
    return {"dialect": NAME, "default_target": {"dialect": NAME, "version": OPSETS[-1]},
            "versions": [{"version": "clip (iOS15)", "selects": "opsets iOS13 to iOS16", "dtypes": list(DTYPES),
                          "ranks": "any", "rules": ["np.minimum(np.maximum(x, alpha), beta): alpha > beta gives beta",
                                                    "alpha, beta: const scalars of T", NAN_UNDOCUMENTED]},
                         {"version": "clip (iOS17)", "selects": "opsets iOS17, iOS18", "dtypes": list(DTYPES),
                          "ranks": "any", "rules": ["alpha >= beta: ValueError when the program is built",
                                                    "alpha, beta: const scalars of T", NAN_UNDOCUMENTED]}]}


RULE_TEXTS = {
    Code.MIN_GREATER_THAN_MAX.value: ("iOS15: alpha > beta gives beta; iOS17: alpha >= beta is a ValueError",
                                      f"{SRC15}; {SRC17}"),
    Code.NAN_INPUT.value: ("not documented; value_inference (NumPy) propagates", SRC15),
    Code.NAN_BOUND.value: ("not documented; value_inference (NumPy) propagates", SRC15),
    Code.DTYPE_UNSUPPORTED.value: ("T: fp16, fp32", SRC15),
    Code.FLOAT16_BOUND_OVERFLOW.value: ("alpha/beta are consts of T: beyond fp16's range they become inf", SRC15),
    Code.TENSOR_BOUNDS.value: ("alpha and beta are const scalars", SRC15),
}
EXAMPLES = {
    "relu6-fp32-ios17": {"dialect": NAME, "opset": "iOS17", "dtype": "fp32", "alpha": 0, "beta": 6, "shape": [1, 4]},
    "crossed-ios15-gives-beta": {"dialect": NAME, "opset": "iOS15", "dtype": "fp32", "alpha": 5, "beta": 2},
    "equal-ios17-rejected": {"dialect": NAME, "opset": "iOS17", "dtype": "fp16", "alpha": 1, "beta": 1},
}

DIALECT = Dialect(
    name=NAME, spec_model=CoreMLSpec, target_model=CoreMLTarget, resolve=resolve_source, emit=emit,
    target=target, check_version=check_version, capability=capability, version_example="coreml:iOS17",
    artifacts={"coreml_mil": "MIL program text (coremltools mb.program with mb.clip)"}, in_defaults=False,
    rule_texts=RULE_TEXTS, examples=EXAMPLES)
