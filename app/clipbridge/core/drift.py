"""Compare a source meaning with a target meaning: findings, witnesses from critical points, and a status.

`exact` is a promise: no input of the dtype gives a different output. Both meanings are clip functions
(monotone, piecewise constant or identity with breakpoints at their bounds), so evaluating them at every
bound, its neighbours by one ulp/unit, the dtype's extremes, zeros, infinities, NaN and subnormals visits
every piece of both; the exhaustive tests re-check each `exact` on all 8- and 16-bit values. The points and
witnesses are app/clipbridge/core/witnesses.py's; per-element (tensor) bounds are compared in app/clipbridge/core/tensor_drift.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from clipbridge.core import critical, exact
from clipbridge.core.findings import Code, Finding, Severity, Witness
from clipbridge.core.evaluate import evaluate
from clipbridge.core.meaning import (FILLED_NAN_INPUTS, Bound, EngineNote, Meaning, NanBound, NanInput, Order, State,
                               evolve, same_outputs)
from clipbridge.core.numbers import Number, format_number, same_value
from clipbridge.core.tensor_drift import MAX_PAIR_COMPARES, MAX_TENSOR_BOUND, check_tensor_bound_size, compare_tensor
from clipbridge.core.witnesses import closest, critical_points, witnesses

__all__ = ["EXACT", "DRIFT", "UNSUPPORTED", "MAX_PAIR_COMPARES", "MAX_TENSOR_BOUND", "check_tensor_bound_size",
           "compare", "compare_tensor", "critical_points", "demoted", "engine_finding", "promotion_findings",
           "same_on_numbers", "source_findings", "status_of"]

EXACT, DRIFT, UNSUPPORTED = "exact", "drift", "unsupported"


def same_on_numbers(a: Meaning, b: Meaning) -> bool:
    """Two scalar clips that give the same output (up to the sign of a zero) for every non-NaN input: the same
    dtypes and effective bounds, min <= max, no NaN bound and no ScaleBias (x*0 makes NaN from inf), so
    neither the min > max order nor a NaN rule is ever reached except by a NaN input (meaning.evaluate)."""
    if a.scale_bias is not None or b.scale_bias is not None:
        return False
    # DTypes are module constants: `is` settles almost every comparison before the dataclass __eq__ runs.
    if (a.dtype is not b.dtype and a.dtype != b.dtype) or (a.out_dtype is not b.out_dtype
                                                           and a.out_dtype != b.out_dtype):
        return False
    la, ua, lb, ub = a.lower, a.upper, b.lower, b.upper
    if la is None or ua is None or lb is None or ub is None or a.crossed:
        return False
    if a.state is State.REJECTED or b.state is State.REJECTED:
        return False  # compare() lets evaluate() raise for it
    if la.is_nan or ua.is_nan or lb.is_nan or ub.is_nan:
        return False
    return same_value(la.value, lb.value) and same_value(ua.value, ub.value)


def _bound_code(a: Bound | None, b: Bound | None) -> Code:
    """Which rule made two effective bounds differ, read off their provenance."""
    flags = [x for x in (a, b) if x is not None]
    if any(x.default for x in flags):
        return Code.DEFAULT_BOUND
    if any(x.overflow for x in flags):
        return Code.FLOAT16_BOUND_OVERFLOW
    if any(x.saturated for x in flags):
        return Code.BOUND_SATURATION
    if any(x.precision_loss for x in flags):
        return Code.BOUND_PRECISION
    if any(x.rounded for x in flags):
        return Code.BOUND_ROUNDING
    if a is not None and b is not None and b.given is not None and not b.rounded and not b.is_nan \
            and not a.is_nan and b.given != a.value:
        return Code.BOUND_PRECISION  # the target's carrier could not hold the source's value
    if any(isinstance(x.value, float) and math.isinf(x.value) for x in flags):
        return Code.INFINITE_BOUND
    return Code.BOUND_ROUNDING


def _behaviour(b: Bound | None, side: str) -> str:
    if b is None:
        return f"{side}: none"
    how = "; ".join(b.steps) if b.steps else ("default" if b.default else "as given")
    return f"{side} = {format_number(b.value)} ({how})"


def compare(src: Meaning, tgt: Meaning) -> list[Finding]:
    """Every way `tgt` computes something other than `src`, each with a witness where one exists."""
    out: list[Finding] = []
    if src.dynamic or tgt.dynamic:
        return [Finding(Code.DYNAMIC_BOUNDS, Severity.ERROR, "Bounds are computed at run time; clipbridge cannot "
                        "tell what they will be", src.describe(), tgt.describe())]
    if src.has_tensor_bounds or tgt.has_tensor_bounds:
        return compare_tensor(src, tgt, compare, [engine_finding(n) for n in tgt.engine_notes])
    if same_on_numbers(src, tgt):
        return _same_on_numbers_findings(src, tgt)
    dt = src.dtype
    pts = critical_points(dt, (src, tgt))
    # One evaluation per meaning: the NaN input's outputs (for the NaN-input findings) come with the others'.
    ys, yt = evaluate(src, pts), evaluate(tgt, pts)
    nan_at = np.isnan(pts.astype(np.float64)) if dt.is_float else np.zeros(pts.shape, dtype=bool)
    keep = ~nan_at
    diffs = witnesses(src, tgt, pts[keep], ys[keep], yt[keep])
    def nan_out() -> tuple[np.ndarray, np.ndarray]:
        return ys[nan_at][:1], yt[nan_at][:1]
    out += promotion_findings(src, tgt, diffs)
    # A changed output dtype accounts for the differences no bound explains (int32 -> float32 rounding).
    used: set[int] = {id(w) for w in diffs} if src.out_dtype != tgt.out_dtype else set()

    def take(ws: list[Witness]) -> Witness | None:
        for w in ws:
            used.add(id(w))
        return ws[0] if ws else None

    if src.crossed or tgt.crossed:
        if diffs:
            out.append(Finding(Code.MIN_GREATER_THAN_MAX, Severity.ERROR, "min > max is computed differently",
                               _order_text(src), _order_text(tgt), take(list(diffs))))
    else:
        for side in ("min", "max"):
            f = _bound_finding(side, src, tgt, diffs, used)
            if f is not None:
                out.append(f)
    if src.scale_bias is not None or tgt.scale_bias is not None:
        rest = [w for w in diffs if id(w) not in used]
        same_sb = src.scale_bias == tgt.scale_bias
        if not same_sb or src.dialect != tgt.dialect:
            sev = Severity.ERROR if rest else Severity.WARNING
            msg = ("ScaleBias is computed differently" if not same_sb else
                   "DirectML does not document the precision or rounding of ScaleBias; clipbridge reads it as "
                   "float32 multiply then add (two roundings). A device that fuses them can differ by one ulp")
            out.append(Finding(Code.SCALE_BIAS, sev, msg, _sb_text(src), _sb_text(tgt), take(rest)))
    rest = [w for w in diffs if id(w) not in used]
    nan_found = _nan_findings(src, tgt, rest, nan_out) if dt.is_float else []
    if any(f.code is Code.NAN_BOUND for f in nan_found):
        rest = []  # a NaN bound explains every other difference
    if rest:
        out.append(Finding(Code.BOUND_ROUNDING, Severity.ERROR, "The outputs differ", src.describe(),
                           tgt.describe(), rest[0]))
    out += nan_found
    out += [engine_finding(n) for n in tgt.engine_notes]
    return out


def _same_on_numbers_findings(src: Meaning, tgt: Meaning) -> list[Finding]:
    """compare() of two clips that agree on every non-NaN input (same_on_numbers): no bound, order, ScaleBias or
    promotion finding can arise, so only the NaN-input rules are looked at, on the NaN input alone."""
    def nan_out() -> tuple[np.ndarray, np.ndarray]:
        pts = critical.nan_points(src.dtype)
        return _nan_output(src, pts), _nan_output(tgt, pts)

    # One NaN-input rule on one clip gives one output for NaN too: nothing to look at.
    same_rule = src.nan_input == tgt.nan_input or not src.dtype.is_float
    found = [] if same_rule else _nan_findings(src, tgt, [], nan_out)
    return found + [engine_finding(n) for n in tgt.engine_notes]


def _nan_output(m: Meaning, pts: np.ndarray) -> np.ndarray:
    """evaluate(m, pts) at the NaN input of a clip same_on_numbers accepted (bounds present, not NaN, not crossed):
    a rule that does not fill the NaN (propagate, undocumented) passes it through min and max, so the output is a
    NaN of the output dtype, without evaluating; a filling rule is evaluated."""
    if m.nan_input in FILLED_NAN_INPUTS or not m.out_dtype.is_float:
        return evaluate(m, pts)
    return critical.nan_points(m.out_dtype)


def engine_finding(note: EngineNote) -> Finding:
    """An engine note as a finding: info when the engine computes something else (it never changes the status),
    a warning when the engine refuses the artifact, so such a translation is never `exact` without a warning."""
    return Finding(Code.ENGINE_BEHAVIOUR, Severity.WARNING if note.refuses else Severity.INFO, note.text, "",
                   note.engine)


def promotion_findings(src: Meaning, tgt: Meaning, diffs: list[Witness]) -> list[Finding]:
    """Code.DTYPE_PROMOTION when the output dtypes differ (PyTorch: an integer tensor with a float scalar bound
    returns float32), with a witness whose outputs are each in their own dtype."""
    if src.out_dtype == tgt.out_dtype:
        return []
    fractional = [w for w in diffs if not exact.is_nan(w.source_output) and not exact.is_integral(w.source_output)]
    return [Finding(Code.DTYPE_PROMOTION, Severity.ERROR if diffs else Severity.WARNING,
                    f"The output dtype changes: {src.out_dtype.name} -> {tgt.out_dtype.name}",
                    f"{src.dialect}: {src.describe()}", f"{tgt.dialect}: {tgt.describe()}",
                    (fractional or diffs or [None])[0])]


def demoted(m: Meaning) -> Meaning:
    """A promoting meaning as the closest clip of its input dtype, for targets that cannot promote: min ceiled,
    max floored, saturated (a NaN or infinite bound becomes the type's extreme); the given numbers are kept
    so literal emitters apply their own rules to them."""
    if m.result_dtype is None or m.result_dtype == m.dtype or m.lower is None or m.upper is None:
        return m
    dt = m.dtype

    def bound(b: Bound, side: str) -> Bound:
        v = b.value
        if exact.is_nan(v):
            w = dt.lowest() if side == "min" else dt.highest()
        elif exact.is_inf(v):
            w = dt.lowest() if v < 0 else dt.highest()
        else:
            w = dt.saturate(exact.ceil_exact(v) if side == "min" else exact.floor_exact(v))
        step = f"{side} {format_number(v)} on {dt.name} without promotion: {format_number(w)}"
        return evolve(b, value=w, steps=b.steps + (step,), rounded=w != v, saturated=exact.is_inf(v))

    return evolve(m, lower=bound(m.lower, "min"), upper=bound(m.upper, "max"), result_dtype=None)


def _bound_finding(side: str, src: Meaning, tgt: Meaning, diffs: list[Witness], used: set[int]) -> Finding | None:
    """A changed effective bound: its code from the bounds' provenance, its witness from the diffs below it
    (min) or above it (max), all of which it accounts for."""
    a, b = (src.lower, tgt.lower) if side == "min" else (src.upper, tgt.upper)
    sv, tv = (a.value if a else None), (b.value if b else None)
    if same_value(sv, tv):
        return None
    # Exact comparisons (ints, doubles): float() would merge int64 neighbours beyond 2^53.
    if side == "min":
        edge = max(_f(sv), _f(tv))
        ws = [w for w in diffs if w.input <= edge] or diffs
    else:
        edge = min(_f(sv), _f(tv))
        ws = [w for w in diffs if w.input >= edge] or diffs
    used.update(id(x) for x in ws)
    word = "lower" if side == "min" else "upper"
    return Finding(_bound_code(a, b), Severity.ERROR, f"The effective {word} bound changes: {format_number(sv)} "
                   f"-> {format_number(tv)}", _behaviour(a, side), _behaviour(b, side), closest(ws, edge))


def _nan_findings(src: Meaning, tgt: Meaning, rest: list[Witness],
                  nan_out: Callable[[], tuple[np.ndarray, np.ndarray]]) -> list[Finding]:
    """NaN-input and NaN-bound findings; `nan_out()`: both meanings' outputs for a NaN input (computed only
    when a rule needs them)."""
    out = []
    defined = NanInput.UNDOCUMENTED not in (src.nan_input, tgt.nan_input)
    if src.nan_input != tgt.nan_input and defined:
        # Both rules are stated: the outputs for a NaN input are a witness.
        ys, yt = nan_out()
        if not same_outputs(ys, yt)[0]:
            out.append(Finding(Code.NAN_INPUT, Severity.ERROR, "NaN input gives different outputs",
                               f"NaN input: {src.nan_input.value}", f"NaN input: {tgt.nan_input.value}",
                               Witness(math.nan, src.dtype.to_python(ys[0]), src.dtype.to_python(yt[0]))))
    elif src.nan_input != tgt.nan_input:
        out.append(Finding(Code.NAN_INPUT, Severity.WARNING,
                           f"NaN inputs: {src.dialect} says {src.nan_input.value}, {tgt.dialect} says "
                           f"{tgt.nan_input.value}", f"NaN input: {src.nan_input.value}",
                           f"NaN input: {tgt.nan_input.value}", None))
    elif src.nan_input is NanInput.PROPAGATE:
        ys, yt = nan_out()
        if not same_outputs(ys, yt)[0]:
            out.append(Finding(Code.NAN_INPUT, Severity.ERROR, "NaN input gives different outputs",
                               "", "", Witness(math.nan, src.dtype.to_python(ys[0]), src.dtype.to_python(yt[0]))))
    has_nan = any(b is not None and b.is_nan for b in (src.lower, src.upper, tgt.lower, tgt.upper))
    if has_nan and (src.nan_bound != tgt.nan_bound or NanBound.UNDOCUMENTED in (src.nan_bound, tgt.nan_bound)):
        out.append(Finding(Code.NAN_BOUND, Severity.ERROR if rest else Severity.WARNING,
                           "A NaN bound is handled differently", f"NaN bound: {src.nan_bound.value}",
                           f"NaN bound: {tgt.nan_bound.value} (executed as: ignored)"
                           if tgt.nan_bound is NanBound.UNDOCUMENTED else f"NaN bound: {tgt.nan_bound.value}",
                           rest[0] if rest else None))
    return out


def _order_text(m: Meaning) -> str:
    if not m.crossed:
        return f"min <= max: [{format_number(m.lo)}, {format_number(m.hi)}]"
    return f"min > max: {m.order.value} (every output {format_number(m.hi if m.order is Order.MAX_WINS else m.lo)})"


def _sb_text(m: Meaning) -> str:
    if m.scale_bias is None:
        return "no scale-bias"
    sb = m.scale_bias
    return (f"x*{format_number(sb.scale)}+{format_number(sb.bias)} in {sb.precision.name}"
            f"{' (fused)' if sb.fused else ''}")


def _f(v: Number | None) -> Number:
    return math.nan if v is None else v


def status_of(findings: list[Finding], unsupported: bool) -> str:
    """unsupported if the target cannot build it; drift if any non-engine finding is a warning or error."""
    if unsupported:
        return UNSUPPORTED
    for f in findings:
        if f.code is not Code.ENGINE_BEHAVIOUR and f.severity is not Severity.INFO:
            return DRIFT
    return EXACT


def source_findings(src: Meaning) -> list[Finding]:
    """What the source itself leaves open, whatever the target (an ambiguous state)."""
    if src.state is State.AMBIGUOUS and not src.crossed:
        return [Finding(Code.SCALE_BIAS, Severity.WARNING, src.reason or "ambiguous", src.describe(), "", None)]
    return []
