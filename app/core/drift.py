"""Compare a source meaning with a target meaning: findings, witnesses from critical points, and a status.

`exact` is a promise: no input of the dtype gives a different output. Both meanings are clip functions
(monotone, piecewise constant or identity with breakpoints at their bounds), so evaluating them at every
bound, its neighbours by one ulp/unit, the dtype's extremes, zeros, infinities, NaN and subnormals visits
every piece of both; the exhaustive tests re-check each `exact` on all 8- and 16-bit values.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import replace

import numpy as np

from app.core.dtypes import DType
from app.core.findings import Code, Finding, Severity, Witness
from app.core.errors import SpecError
from app.core.evaluate import evaluate
from app.core.meaning import Bound, EngineNote, Meaning, NanBound, NanInput, Order, State, same_outputs
from app.core import critical, exact
from app.core.numbers import Number, format_number, same_value

EXACT, DRIFT, UNSUPPORTED = "exact", "drift", "unsupported"


def critical_points(dt: DType, meanings: Iterable[Meaning]) -> np.ndarray:
    """The inputs where two clip functions of `dt` can first differ (see the module docstring), in a fixed
    order: the dtype's points, then each meaning's bounds and ScaleBias pre-images with their neighbours."""
    parts = [critical.fixed_points(dt)]
    for m in meanings:
        for b in (m.lower, m.upper):
            if b is None or b.is_nan or (not dt.is_float and exact.is_inf(b.value)):
                continue  # an infinite bound of a promoting meaning has no integer neighbours
            parts.append(critical.bound_points(dt, b.value))
            if m.scale_bias is not None and m.scale_bias.scale != 0 and math.isfinite(float(b.value)):
                pre = (float(b.value) - m.scale_bias.bias) / m.scale_bias.scale
                if math.isfinite(pre):
                    parts.append(critical.bound_points(dt, pre if dt.is_float else dt.saturate(int(pre)), 3))
    return critical.unique_in_order(dt, parts)


def same_on_numbers(a: Meaning, b: Meaning) -> bool:
    """Two scalar clips that give the same output (up to the sign of a zero) for every non-NaN input: the same
    dtypes and effective bounds, min <= max, no NaN bound and no ScaleBias (x*0 makes NaN from inf), so
    neither the min > max order nor a NaN rule is ever reached except by a NaN input (meaning.evaluate)."""
    if a.dtype != b.dtype or a.out_dtype != b.out_dtype or a.scale_bias is not None or b.scale_bias is not None:
        return False
    if a.lower is None or a.upper is None or b.lower is None or b.upper is None or a.crossed:
        return False
    if a.state is State.REJECTED or b.state is State.REJECTED:
        return False  # compare() lets evaluate() raise for it
    if a.lower.is_nan or a.upper.is_nan or b.lower.is_nan or b.upper.is_nan:
        return False
    return same_value(a.lower.value, b.lower.value) and same_value(a.upper.value, b.upper.value)


def _py(dt: DType, v: object) -> Number:
    return dt.to_python(v)


def _diffs(src: Meaning, tgt: Meaning, pts: np.ndarray, ys: np.ndarray, yt: np.ndarray) -> list[Witness]:
    """The witnesses among the points, from both meanings' outputs there (in the points' order)."""
    bad = ~same_outputs(ys, yt)
    # Each output in its own dtype: a promoting source (PyTorch int32 -> float32) keeps its fractions.
    dt, ds, dtt = src.dtype, src.out_dtype, tgt.out_dtype
    return [Witness(_py(dt, pts[i]), _py(ds, ys[i]), _py(dtt, yt[i])) for i in np.flatnonzero(bad)]


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


def _closest(ws: list[Witness], anchor: Number) -> Witness | None:
    finite = [w for w in ws if not (isinstance(w.input, float) and math.isnan(w.input))]
    if not finite:
        return None
    return min(finite, key=lambda w: exact.distance(w.input, anchor))


def compare(src: Meaning, tgt: Meaning) -> list[Finding]:
    """Every way `tgt` computes something other than `src`, each with a witness where one exists."""
    out: list[Finding] = []
    if src.dynamic or tgt.dynamic:
        return [Finding(Code.DYNAMIC_BOUNDS, Severity.ERROR, "Bounds are computed at run time; clipbridge cannot "
                        "tell what they will be", src.describe(), tgt.describe())]
    if src.has_tensor_bounds or tgt.has_tensor_bounds:
        return compare_tensor(src, tgt)
    if same_on_numbers(src, tgt):
        return _same_on_numbers_findings(src, tgt)
    dt = src.dtype
    pts = critical_points(dt, (src, tgt))
    # One evaluation per meaning: the NaN input's outputs (for the NaN-input findings) come with the others'.
    ys, yt = evaluate(src, pts), evaluate(tgt, pts)
    nan_at = np.isnan(pts.astype(np.float64)) if dt.is_float else np.zeros(pts.shape, dtype=bool)
    keep = ~nan_at
    diffs = _diffs(src, tgt, pts[keep], ys[keep], yt[keep])
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
        return evaluate(src, pts), evaluate(tgt, pts)

    # One NaN-input rule on one clip gives one output for NaN too: nothing to look at.
    same_rule = src.nan_input == tgt.nan_input or not src.dtype.is_float
    found = [] if same_rule else _nan_findings(src, tgt, [], nan_out)
    return found + [engine_finding(n) for n in tgt.engine_notes]


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
        return replace(b, value=w, steps=b.steps + (step,), rounded=w != v, saturated=exact.is_inf(v))

    return replace(m, lower=bound(m.lower, "min"), upper=bound(m.upper, "max"), result_dtype=None)


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
                   f"-> {format_number(tv)}", _behaviour(a, side), _behaviour(b, side), _closest(ws, edge))


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
                               Witness(math.nan, _py(src.dtype, ys[0]), _py(src.dtype, yt[0]))))
    elif src.nan_input != tgt.nan_input:
        out.append(Finding(Code.NAN_INPUT, Severity.WARNING,
                           f"NaN inputs: {src.dialect} says {src.nan_input.value}, {tgt.dialect} says "
                           f"{tgt.nan_input.value}", f"NaN input: {src.nan_input.value}",
                           f"NaN input: {tgt.nan_input.value}", None))
    elif src.nan_input is NanInput.PROPAGATE:
        ys, yt = nan_out()
        if not same_outputs(ys, yt)[0]:
            out.append(Finding(Code.NAN_INPUT, Severity.ERROR, "NaN input gives different outputs",
                               "", "", Witness(math.nan, _py(src.dtype, ys[0]), _py(src.dtype, yt[0]))))
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


# --- per-element (tensor) bounds -------------------------------------------------------------------------------

MAX_TENSOR_BOUND = 4096  # elements of a tensor bound (and of the positions two meanings are compared at)
MAX_PAIR_COMPARES = 256  # distinct (source, target) bound pairs with different rules compared one by one


def check_tensor_bound_size(count: int, loc: str) -> None:
    """A tensor bound is compared position by position: its element count is capped (MAX_TENSOR_BOUND)."""
    if count > MAX_TENSOR_BOUND:
        raise SpecError(f"A tensor bound may have at most {MAX_TENSOR_BOUND} elements (each is compared as its own "
                        f"clip). Got: {count}", loc)


def _side_array(m: Meaning, side: str) -> np.ndarray:
    """One side of `m` as an object array of element indices into its tensor (-1: the scalar or open side)."""
    t = m.lower_tensor if side == "min" else m.upper_tensor
    if t is None:
        return np.full((), -1, dtype=np.int64)
    check_tensor_bound_size(len(t.values), side)
    return np.arange(len(t.values), dtype=np.int64).reshape(t.shape)


def _element_bound(m: Meaning, side: str, i: int) -> Bound | None:
    """The scalar Bound that side `side` of `m` has at element `i` of its tensor (the scalar Bound when i < 0)."""
    scalar, t = (m.lower, m.lower_tensor) if side == "min" else (m.upper, m.upper_tensor)
    if i < 0 or t is None:
        return scalar if scalar is not None else _open_bound(m.out_dtype, side)
    v = t.values[i]
    given = t.given[i] if t.given is not None else v
    changed = not same_value(v, given)
    inf = isinstance(v, float) and math.isinf(v)
    return Bound(v, given, t.steps if changed else (), precision_loss=changed and not inf and m.out_dtype.is_float,
                 overflow=inf and not exact.is_inf(given), rounded=changed and not m.out_dtype.is_float)


def _open_bound(dt: DType, side: str) -> Bound:
    """An absent side of a per-element clip: unbounded (+-inf, or the integer type's extreme)."""
    if dt.is_float:
        v: Number = -math.inf if side == "min" else math.inf
    else:
        v = dt.lowest() if side == "min" else dt.highest()
    return Bound(v, None, (f"no {side}: unbounded",), default=True)


def _scalar_at(m: Meaning, lo: int, hi: int) -> Meaning:
    """The scalar clip `m` computes at a position whose bounds are elements lo and hi of its tensors."""
    return replace(m, lower=_element_bound(m, "min", lo), upper=_element_bound(m, "max", hi), lower_tensor=None,
                   upper_tensor=None)


def _position_text(idx: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(i) for i in idx) + "]"


def compare_tensor(src: Meaning, tgt: Meaning) -> list[Finding]:
    """compare() for per-element bounds: the clip at each position is a scalar clip, so every distinct
    (source min, source max, target min, target max) combination is compared once, as scalars."""
    sides = [_side_array(src, "min"), _side_array(src, "max"), _side_array(tgt, "min"), _side_array(tgt, "max")]
    try:
        shape = np.broadcast_shapes(*(a.shape for a in sides))
    except ValueError:
        raise SpecError("The source's and the target's tensor bounds do not broadcast together. Got: "
                        + ", ".join(str(list(a.shape)) for a in sides), "min") from None
    check_tensor_bound_size(math.prod(shape), "min")
    grid = np.stack([np.broadcast_to(a, shape).reshape(-1) for a in sides], axis=1)
    tensors = [src.lower_tensor, src.upper_tensor, tgt.lower_tensor, tgt.upper_tensor]

    def value_key(row: list[int]) -> tuple:
        # Positions with equal bound values (NaN equal to NaN) are one scalar comparison.
        vals = [None if t is None else t.values[i] for t, i in zip(tensors, row)]
        return tuple("nan" if isinstance(v, float) and math.isnan(v) else v for v in vals)

    first: dict[tuple, tuple[tuple[int, ...], int]] = {}
    for pos, row in enumerate(grid.tolist()):
        first.setdefault(value_key(row), (tuple(row), pos))
    grouped: dict[tuple, tuple[Finding, int]] = {}
    notes = [engine_finding(n) for n in tgt.engine_notes]
    skipped = 0
    compared = 0
    for key, pos in first.values():
        where = _position_text(tuple(int(i) for i in np.unravel_index(pos, shape))) if shape else "[]"
        a, b = _scalar_at(src, key[0], key[1]), _scalar_at(tgt, key[2], key[3])
        if _same_rules(a, b):
            continue  # the same scalar function at this position: nothing but the target's engine notes
        if compared >= MAX_PAIR_COMPARES:
            skipped += 1
            continue
        compared += 1
        found = compare(a, b)
        for f in found:
            # One finding per code and kind ("The effective lower bound changes"), whatever the values.
            gkey = (f.code, f.severity, f.message if f.code is Code.ENGINE_BEHAVIOUR else f.message.split(":")[0])
            if gkey in grouped:
                grouped[gkey] = (grouped[gkey][0], grouped[gkey][1] + 1)
                continue
            if f.code is not Code.ENGINE_BEHAVIOUR:
                f = Finding(f.code, f.severity, f"{f.message} (at position {where})",
                            f"at {where}: {f.source_behaviour}" if f.source_behaviour else "",
                            f"at {where}: {f.target_behaviour}" if f.target_behaviour else "", f.witness)
            grouped[gkey] = (f, 0)
    out = []
    for f, more in grouped.values():
        if more and f.code is not Code.ENGINE_BEHAVIOUR:
            f = replace(f, message=f"{f.message} and at {more} other distinct bound pair{'s' if more > 1 else ''}")
        out.append(f)
    if skipped:
        out.append(Finding(Code.TENSOR_BOUNDS, Severity.WARNING, f"{skipped} more distinct bound pairs have different "
                           f"rules in the two meanings and were not compared one by one (at most "
                           f"{MAX_PAIR_COMPARES} are)", src.describe(), tgt.describe()))
    seen = {f.message for f in out if f.code is Code.ENGINE_BEHAVIOUR}
    return out + [n for n in notes if n.message not in seen]


def _same_rules(a: Meaning, b: Meaning) -> bool:
    """Two scalar meanings that compute one function: equal bounds (NaN equal to NaN) and equal rules."""
    def rules(m: Meaning) -> tuple:
        return (m.dtype, m.out_dtype, m.order, m.nan_input, m.nan_bound, m.scale_bias, m.state)
    return (rules(a) == rules(b) and same_value(a.lo, b.lo) and same_value(a.hi, b.hi))

