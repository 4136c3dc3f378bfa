"""Converter lowering rules: why a clamp computes otherwise after a converter rewrote it.

Each rule is a named function `(clip, group, stage, v) -> float | None`: given the torch source op (`clip`, from
child_torch.describe), the ops the converter wrote for it (`group`, from child_engines' graph readers), the stage and
one input value `v`, it returns what the converted stage computes for `v` under this rule, or None where the rule
does not speak. A cause is the difference of two meanings, the source's (`torch_value`, torch's own formulas) and the
stage's under the rule, with `v` as the witness. Each rule names the rows of the behaviour table it implements
(clipbridge.behaviour: the fact, its source and the test that measures it live there, once).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from clipbridge import behaviour
from clipbridge.core.numbers import wire_number

FLT_MAX = float(np.finfo(np.float32).max)
Rule = Callable[[dict, list[dict], str, float], "float | None"]
WITNESSES = (math.nan, -math.inf, math.inf, FLT_MAX, -FLT_MAX)  # the inputs a static prediction is made for


def _f32(x: float) -> float:
    with np.errstate(all="ignore"):
        return float(np.float32(x))


def torch_value(clip: dict, v: float) -> float:
    """The source meaning: torch's eager formula in float32 (clamp keeps NaN and an open side's inf; min > max
    gives max; hardswish is x * min(max(x + 3, 0), 6) / 6, which overflows; hardsigmoid is relu6(x + 3) / 6);
    an ONNX source's HardSwish by its spec."""
    op, lo, hi = clip["op"], clip.get("lo"), clip.get("hi")
    if math.isnan(v):
        return math.nan
    with np.errstate(all="ignore"):
        x = np.float32(v)
        if op == "hardswish" and clip.get("source") == "onnx":  # HardSwish-14: x * max(0, min(1, x/6 + 0.5))
            return float(x * np.maximum(np.float32(0), np.minimum(np.float32(1), x / np.float32(6) + np.float32(0.5))))
        if op == "hardswish":
            return float(x * np.minimum(np.maximum(x + np.float32(3), np.float32(0)), np.float32(6)) / np.float32(6))
        if op == "hardsigmoid":
            return float(np.minimum(np.maximum(x + np.float32(3), np.float32(0)), np.float32(6)) / np.float32(6))
    lo = lo if isinstance(lo, (int, float)) else None
    hi = hi if isinstance(hi, (int, float)) else None
    if lo is not None and hi is not None and lo > hi:
        return _f32(hi)
    out = v if lo is None else max(v, lo)
    return _f32(out if hi is None else min(out, hi))


def _speaks(row_id: str, stage: str) -> bool:
    """Whether the row is about this stage's engine (its `engines`): where a rule applies, from the table."""
    return stage in behaviour.row(row_id).engines


def _minmax_x86(kind: str, a: float, b: float) -> float:
    """x86 MAXPS/MINPS as behaviour.model.X86_MAXPS cites them: a NaN operand gives the second operand."""
    if math.isnan(a) or math.isnan(b):
        return b
    return max(a, b) if kind == "max" else min(a, b)


def _operands(op: dict, v: float) -> list[float]:
    return [v if kind == "tensor" else (c if c is not None else math.nan) for kind, c in op["operands"][:2]]


def _open_side(clip: dict, v: float) -> bool:
    side = "lo" if v < 0 else "hi"
    return clip.get(side) is None and clip["op"] in ("clamp", "clamp_min", "clamp_max", "relu")


@behaviour.states("omitted-bound-default")
def omitted_bound_lowest(clip: dict, group: list[dict], stage: str, v: float) -> float | None:
    """Row omitted-bound-default: the exporter omits the bound torch leaves open, and the stage's op reads it as
    the type's limit (an omitted Clip input, a +-FLT_MAX attribute or constant): +-inf becomes +-FLT_MAX."""
    if not math.isinf(v) or not _open_side(clip, v):
        return None
    pos = 1 if v < 0 else 2
    for op in group:
        attrs = op.get("attrs") or op.get("consts") or {}
        if op["type"] == "Clip" and (len(op["operands"]) <= pos or op["operands"][pos][0] == "omitted"):
            return -FLT_MAX if v < 0 else FLT_MAX
        if op["type"] in ("Clamp", "clip") and any(a is not None and abs(float(a)) >= FLT_MAX for a in attrs.values()):
            return -FLT_MAX if v < 0 else FLT_MAX
        extreme = [c for k, c in op.get("operands", []) if k == "const" and c is not None and abs(c) >= FLT_MAX]
        if op["type"] in ("Maximum", "Minimum", "MAXIMUM", "MINIMUM") and extreme:
            return -FLT_MAX if v < 0 else FLT_MAX
    return None


def _omitted_min_clamp(clip: dict, group: list[dict]) -> dict | None:
    """The OpenVINO Clamp whose min is the lowest float standing for a min torch left open (or an ONNX source
    omitted, which _onnx_clips reads as -FLT_MAX)."""
    clamp = next((op for op in group if op["type"] == "Clamp"), None)
    lo = clip.get("lo")
    if clamp is None or clamp.get("attrs", {}).get("min", 0.0) > -FLT_MAX or not (lo is None or lo == -FLT_MAX):
        return None
    return clamp


@behaviour.states("openvino-omitted-min-nan-to-lowest")
def nan_to_omitted_min_lowest(clip: dict, group: list[dict], stage: str, v: float) -> float | None:
    """Row openvino-omitted-min-nan-to-lowest, on the group's Clamp; the ops after it as _after computes them."""
    clamp = _omitted_min_clamp(clip, group)
    if not _speaks("openvino-omitted-min-nan-to-lowest", stage) or not math.isnan(v) or clamp is None:
        return None
    return _after(group, group.index(clamp) + 1, -FLT_MAX, stage)


@behaviour.states("openvino-clamp-nan-to-lower")
def nan_to_lower_bound(clip: dict, group: list[dict], stage: str, v: float) -> float | None:
    """Row openvino-clamp-nan-to-lower, on the group's Clamp; the ops after it as _after computes them (an omitted
    min is nan_to_omitted_min_lowest's)."""
    if not _speaks("openvino-clamp-nan-to-lower", stage) or not math.isnan(v) or _omitted_min_clamp(clip, group):
        return None
    clamp = next((op for op in group if op["type"] == "Clamp"), None)
    if clamp is None or "min" not in clamp.get("attrs", {}):
        return None
    return _after(group, group.index(clamp) + 1, _f32(clamp["attrs"]["min"]), stage)


@behaviour.states("openvino-max-nan-to-constant", "openvino-min-nan-to-constant",
                  "openvino-minmax-constant-first-propagates", "openvino-relu-nan-to-zero",
                  "openvino-hardsigmoid-nan-to-one")
def nan_to_bound_by_operand_order(clip: dict, group: list[dict], stage: str, v: float) -> float | None:
    """The operand-order rows (openvino-max/min-nan-to-constant, -constant-first-propagates, relu, hardsigmoid):
    the order the frontend writes decides (converter-chain-notes.md: the ExportedProgram route writes the
    tensor first, the ONNX route the constant first)."""
    if not _speaks("openvino-max-nan-to-constant", stage) or not math.isnan(v) or not group or \
            any(op["type"] == "Clamp" for op in group):
        return None  # a Clamp is nan-to-lower-bound's
    out = _after(group, 0, v, stage)
    return out if not math.isnan(out) else None


@behaviour.states("litert-builtin-nan-to-constant")
def nan_to_constant_builtin(clip: dict, group: list[dict], stage: str, v: float) -> float | None:
    """Row litert-builtin-nan-to-constant, op after op through the group."""
    if not _speaks("litert-builtin-nan-to-constant", stage) or not math.isnan(v):
        return None
    out = v
    for op in group:  # each op in turn: a NaN becomes the constant, a number meets it (min > max: MINIMUM wins)
        if op["type"] in ("MAXIMUM", "MINIMUM"):
            c = next((c for kind, c in op["operands"] if kind == "const" and c is not None), None)
            if c is not None:
                out = c if math.isnan(out) else (max if op["type"] == "MAXIMUM" else min)(out, c)
    return None if math.isnan(out) else _f32(out)


@behaviour.states("coreml-min-ge-max-fill")
def min_ge_max_fill(clip: dict, group: list[dict], stage: str, v: float) -> float | None:
    """Row coreml-min-ge-max-fill (a const of that name is what the converted program keeps)."""
    lo, hi = clip.get("lo"), clip.get("hi")
    folded = all(op["type"] in ("const", "fill") for op in group)
    numbers = isinstance(lo, (int, float)) and isinstance(hi, (int, float))
    if not _speaks("coreml-min-ge-max-fill", stage) or not folded or not numbers:
        return None
    return _f32(hi) if lo >= hi and math.isnan(v) else None


@behaviour.states("torch-hardswish-overflow")
def torch_hardswish_overflow(clip: dict, group: list[dict], stage: str, v: float) -> float | None:
    """Row torch-hardswish-overflow. Torch eager is the reference, not an oracle."""
    if clip["op"] != "hardswish" or clip.get("source") == "onnx" or not group:
        return None
    if not math.isfinite(v) or abs(v) <= FLT_MAX / 6:
        return None
    if v > 0 and stage == "tflite:builtin" and any(op["type"] == "HARD_SWISH" for op in group):
        # the builtin kernel scales first: (x * f32(1/6)) * relu6(x + 3), rounding up by an ulp (measured)
        with np.errstate(all="ignore"):
            return float(np.float32(np.float32(v) * (np.float32(1) / np.float32(6))) * np.float32(6))
    return _f32(v) if v > 0 else 0.0


def _after(group: list[dict], start: int, v: float, stage: str) -> float:
    """`v` through the group's ops from `start`, each with the engine's NaN rule (x86 operand order on OpenVINO)."""
    out = v
    for op in group[start:]:
        t, attrs = op["type"], op.get("attrs", {})
        if t in ("Maximum", "Minimum"):
            a, b = _operands(op, out)
            out = _minmax_x86("max" if t == "Maximum" else "min", a, b)
        elif t == "Relu":
            out = _minmax_x86("max", out, 0.0)
        elif t == "Clamp":
            out = _minmax_x86("max", _minmax_x86("min", out, attrs.get("max", FLT_MAX)), attrs.get("min", -FLT_MAX))
        elif t in ("HardSigmoid", "HSigmoid"):
            out = _minmax_x86("max", _minmax_x86("min", out, 1.0), 0.0) if math.isnan(out) else out
    return _f32(out)


RULES: dict[str, Rule] = {
    "omitted-bound-lowest": omitted_bound_lowest,
    "nan-to-omitted-min-lowest": nan_to_omitted_min_lowest,
    "nan-to-lower-bound": nan_to_lower_bound,
    "nan-to-bound-by-operand-order": nan_to_bound_by_operand_order,
    "nan-to-constant-builtin": nan_to_constant_builtin,
    "min-ge-max-fill": min_ge_max_fill,
    "torch-hardswish-overflow": torch_hardswish_overflow,
}
# Each rule's fact as a report cites it: the text of the behaviour rows it implements.
RULE_TEXT = {name: " | ".join(behaviour.row(i).text() for i in getattr(fn, "rows")) for name, fn in RULES.items()}
# Rules that are no element's value: named on a hop as a whole, their text the row's.
HOP_ROWS = {"int-literal-refused": "coreml-int-literal-refused", "conv-saturates-inf": "litert-conv-saturates-inf",
            "arith-saturates-inf": "litert-arith-saturates-inf"}
HOP_RULES = {name: behaviour.row(r).text() for name, r in HOP_ROWS.items()}


def _saturated(ref: float, got: float) -> bool:
    """+-inf where the reference has it became +-FLT_MAX of the same sign."""
    return math.isinf(ref) and abs(got) == FLT_MAX and (ref > 0) == (got > 0)


def _fed_by(row_id: str, group: list[dict], stage: str) -> bool:
    """The group's first op reads a tensor written by one of the row's ops (lowering marks it `input_from`)."""
    return _speaks(row_id, stage) and bool(group) and group[0].get("input_from") in behaviour.row(row_id).ops


@behaviour.states("litert-conv-saturates-inf")
def conv_saturates_inf(group: list[dict], stage: str, ref_in: float, got_in: float) -> bool:
    """Row litert-conv-saturates-inf: the clamp's input already differs, and no clamp made it so."""
    return _fed_by("litert-conv-saturates-inf", group, stage) and _saturated(ref_in, got_in)


@behaviour.states("litert-arith-saturates-inf")
def arith_saturates_inf(group: list[dict], stage: str, ref_in: float, got_in: float) -> bool:
    """Row litert-arith-saturates-inf: the clamp's input already differs, written by a builtin ADD, MUL, ..."""
    return _fed_by("litert-arith-saturates-inf", group, stage) and _saturated(ref_in, got_in)


# The hop rules that explain a clamp's input differing: the builtin op that wrote it saturated +-inf.
SATURATION = {"conv-saturates-inf": conv_saturates_inf, "arith-saturates-inf": arith_saturates_inf}


def saturation(group: list[dict], stage: str, ref_in: float, got_in: float) -> str | None:
    """The saturation hop rule that explains the clamp's input value `got_in` where the reference had `ref_in`."""
    return next((name for name, rule in SATURATION.items() if rule(group, stage, ref_in, got_in)), None)


def saturating_op(op_type: str) -> bool:
    """Whether a builtin op is one a saturation row names (the op `input_from` marks, lowering and litert_static)."""
    return any(op_type in behaviour.row(HOP_ROWS[name]).ops for name in SATURATION)


@behaviour.states("litert-conv-saturates-inf", "litert-arith-saturates-inf")
def output_saturation(op: dict | None, stage: str, ref: float, got: float) -> str | None:
    """Rows litert-conv/arith-saturates-inf at a graph output no clamp wrote (clamp_min(x, 0) + 1's ADD)."""
    if op is None or not _saturated(ref, got):
        return None
    return next((name for name in SATURATION if _speaks(HOP_ROWS[name], stage)
                 and op["type"] in behaviour.row(HOP_ROWS[name]).ops), None)


def predict_input(clip: dict, group: list[dict], stage: str) -> list[dict[str, Any]]:
    """The hop rule predicted at a clamp's input: a saturation rule where a builtin convolution, ADD, MUL, ...
    with no fused activation feeds it."""
    name = saturation(group, stage, math.inf, FLT_MAX)
    if name is None:
        return []
    return [{"rule": name, "input": wire_number(math.inf), "source": wire_number(math.inf),
             "became": wire_number(FLT_MAX), "at": "input"}]


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


def explain(clip: dict, group: list[dict], stage: str, v: float, got: float) -> str | None:
    """The first rule whose prediction for `v` is what the stage gave, where torch's meaning gives otherwise."""
    if same(torch_value(clip, v), got):
        return None
    for name, rule in RULES.items():
        want = rule(clip, group, stage, v)
        if want is not None and same(want, got):
            return name
    return None


def predict(clip: dict, group: list[dict], stage: str) -> list[dict[str, Any]]:
    """Findings predicted statically: for each witness input, each rule whose value differs from torch's."""
    found: list[dict[str, Any]] = []
    for name, rule in RULES.items():
        for v in WITNESSES:
            want = rule(clip, group, stage, v)
            src = torch_value(clip, v)
            if want is not None and not same(want, src):
                found.append({"rule": name, "input": wire_number(v), "source": wire_number(src),
                              "became": wire_number(want)})
                break
    return found


@behaviour.states("coreml-int-literal-refused")
def refused(clip: dict, stage: str) -> bool:
    """int-literal-refused, predicted from the source alone: a clamp_min/clamp_max with an int literal bound."""
    return _speaks("coreml-int-literal-refused", stage) and clip["op"] in ("clamp_min", "clamp_max") and \
        bool(clip.get("int_literal"))
