"""Core ML MIL `clip` resolved to a Meaning (apple/coremltools, coremltools/converters/mil/mil/ops/defs/iOS15 and
iOS17 elementwise_unary.py).

"Clip the values in the input x to [alpha, beta], element-wise." T is fp16 or fp32; alpha and beta are const
scalars of T. iOS15's value_inference is np.minimum(np.maximum(x, alpha), beta): alpha > beta gives beta and NumPy
propagates NaN. iOS17 adds "strict validation to ensure that alpha < beta": alpha >= beta is a ValueError when the
program is built. Opsets between resolve to the highest definition at or below them (iOS16 -> iOS15, iOS18 ->
iOS17). What a device does with NaN is not documented (coremltools' docstring is silent; not found in Apple's docs).

The artifact (mil.py) is the MIL program coremltools builds (mb.program / mb.clip), printed as MIL text.
"""

from __future__ import annotations

from clipbridge.core.dtypes import DType
from clipbridge.core.errors import SpecError
from clipbridge.core.meaning import Bound, EngineNote, Meaning, NanBound, NanInput, Order, State
from clipbridge.core.numbers import Number
from clipbridge.core.suggest import one_of
from clipbridge.dialects.coreml.catalogue import NAN_UNDOCUMENTED, SRC15, SRC17
from clipbridge.dialects.coreml.spec import DTYPES, NAME, NAME_OF, OPSETS, CoreMLSpec
from clipbridge.dialects.kit.base import source_resolver
from clipbridge.dialects.kit.common import cached_cast, rounded_float_bound
from clipbridge.dialects.kit.spec_base import spec_json

# coremltools 9.0, iOS17 clip.type_inference, as observed when building (tests/dialects/test_coreml.py).
REJECT_TEXT = "The `alpha` value ({a}) should be smaller than `beta` value ({b}) in `clip` op."

# Observed (tests/dialects/test_coreml.py::test_value_inference_nan_bound, a strict xfail): the only executable
# definition on Linux, coremltools' constant folding, propagates a NaN alpha/beta; the meaning leaves it undocumented.
NOTE_FOLD_NAN_BOUND = EngineNote("coremltools 9.0 value_inference (const folding)", (
    "A NaN alpha or beta makes every folded output NaN (np.maximum/np.minimum propagate); what a device does is not "
    "documented, and clipbridge executes an undocumented NaN bound as ignored."))


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


@cached_cast
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


def check_version(text: str) -> str:
    return opset_coreml(text, "version")
