"""The rule catalogue: every finding code as a documented rule (meaning, each dialect's rule and its source,
a witness example computed live by the translator), for `clipbridge explain` and SARIF's tool.driver.rules.

The per-dialect rows are read when asked for, from the registry only: each registered dialect's `rule_texts`
(app/clipbridge/dialects/registry.py), in registry order. A new dialect's rows appear here, in `clipbridge explain`, in
SARIF's rule help and in docs/dialect-rules.md with its registry line and nothing else (each dialect's
catalogue.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from clipbridge.dialects import registry
from clipbridge.dialects.kit.common import Mode
from clipbridge.core.errors import SpecError
from clipbridge.core.findings import CODE_DOCS, Code
from clipbridge.reports import markdown
from clipbridge.reports.view import Paragraph, Strong, Table
from clipbridge.scan.report import target_from_text
from clipbridge.service.specs import Spec
from clipbridge.service.translate import translate

# A clip the scan finds but cannot resolve (e.g. Clip-6 on INT32) is not a drift finding of the translator;
# the linter reports it under this id so it can be selected, ignored and baselined like the others.
UNRESOLVED = "unresolved-clip"


@dataclass(frozen=True)
class Rule:
    id: str
    name: str
    title: str
    meaning: str
    level: str  # the usual severity: SARIF defaultConfiguration.level (error, warning, note)
    example: tuple[dict[str, Any], str, str] | None = None  # (source spec, target, mode) showing a witness
    example_note: str = ""
    tags: tuple[str, ...] = field(default=())

    @property
    def dialects(self) -> dict[str, tuple[str, str]]:
        """dialect -> (its rule, its source), in registry order, from the registered dialects' rule_texts."""
        return dialect_rows(str(self.id))

    @property
    def sources(self) -> list[str]:
        return [f"{d}: {src}" for d, (_, src) in self.dialects.items()]


def dialect_rows(rule_id: str) -> dict[str, tuple[str, str]]:
    """Every registered dialect's row for a rule, in registry order: its rule_texts."""
    out: dict[str, tuple[str, str]] = {}
    for name, d in registry.DIALECTS.items():
        row = d.rule_texts.get(rule_id)
        if row is not None:
            out[name] = (row[0], row[1])
    return out


def _f(elem: str, lo: Any, hi: Any, opset: int = 13, **kw: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"dialect": "onnx", "opset": opset, "elem_type": elem}
    if lo is not None:
        spec["min"] = lo
    if hi is not None:
        spec["max"] = hi
    return {**spec, **kw}


def _dml(dtype: str, lo: Any, hi: Any, sizes: list[int], **extra: Any) -> dict[str, Any]:
    t = {"DataType": dtype, "Sizes": sizes}
    inp = {**t, **extra.pop("input", {})}
    return {"dialect": "directml", "feature_level": "2_1",
            "desc": {"InputTensor": inp, "OutputTensor": t, "Min": lo, "Max": hi, **extra}}


_RULES: list[Rule] = [
    Rule(Code.BOUND_ROUNDING, "BoundRounding", "Integer bound rounded differently", CODE_DOCS[Code.BOUND_ROUNDING],
         "error",
         ({"dialect": "openvino", "element_type": "i8", "min": 0.5, "max": 100.7}, "directml:2_1", "literal")),
    Rule(Code.BOUND_SATURATION, "BoundSaturation", "Bound outside the dtype's range",
         CODE_DOCS[Code.BOUND_SATURATION], "warning",
         ({"dialect": "openvino", "element_type": "u8", "min": -5, "max": 300}, "onnx:13", "literal")),
    Rule(Code.BOUND_PRECISION, "BoundPrecision", "Bound not representable in its carrier",
         CODE_DOCS[Code.BOUND_PRECISION], "error",
         (_f("INT32", 16777217, 2000000000), "directml:2_1", "literal")),
    Rule(Code.DEFAULT_BOUND, "DefaultBound", "Missing bound defaults differently", CODE_DOCS[Code.DEFAULT_BOUND],
         "error", (_f("FLOAT16", None, None, opset=6), "onnx:13", "literal")),
    Rule(Code.MIN_GREATER_THAN_MAX, "MinGreaterThanMax", "min > max computed differently",
         CODE_DOCS[Code.MIN_GREATER_THAN_MAX], "error",
         (_f("INT8", 5, 2), "directml:5_0", "literal")),
    Rule(Code.NAN_INPUT, "NanInput", "NaN input handled differently", CODE_DOCS[Code.NAN_INPUT], "warning",
         (_f("FLOAT", 0, 6), "directml", "literal")),
    Rule(Code.NAN_BOUND, "NanBound", "NaN bound handled differently", CODE_DOCS[Code.NAN_BOUND], "error",
         (_f("FLOAT", "nan", 6), "directml", "literal")),
    Rule(Code.INFINITE_BOUND, "InfiniteBound", "Infinite bound carried specially", CODE_DOCS[Code.INFINITE_BOUND],
         "note", (_f("FLOAT", "-inf", 6), "openvino", "literal")),
    Rule(Code.FLOAT16_BOUND_OVERFLOW, "Float16BoundOverflow", "Bound overflows float16",
         CODE_DOCS[Code.FLOAT16_BOUND_OVERFLOW], "error",
         (_f("FLOAT16", 0, 65519.999999), "onnx:6", "literal")),
    Rule(Code.DTYPE_UNSUPPORTED, "DtypeUnsupported", "Target has no such dtype", CODE_DOCS[Code.DTYPE_UNSUPPORTED],
         "error", (_f("DOUBLE", 0, 6), "directml", "preserve")),
    Rule(Code.VERSION_UNSUPPORTED, "VersionUnsupported", "Target version beyond this installation",
         CODE_DOCS[Code.VERSION_UNSUPPORTED], "error",
         (_f("FLOAT", 0, 6), "onnx:99", "preserve")),
    Rule(Code.RANK_UNSUPPORTED, "RankUnsupported", "Target cannot take the rank", CODE_DOCS[Code.RANK_UNSUPPORTED],
         "error", (_f("FLOAT", 0, 6, shape=[1, 3, 224]), "directml:2_1", "literal")),
    Rule(Code.SCALE_BIAS, "ScaleBias", "DirectML ScaleBias", CODE_DOCS[Code.SCALE_BIAS], "warning",
         (_dml("FLOAT32", 0, 6, [1, 1, 1, 4], ScaleBias={"Scale": 0.1, "Bias": 0.2}), "onnx", "preserve")),
    Rule(Code.STRIDES, "Strides", "Strided or broadcast DirectML tensor", CODE_DOCS[Code.STRIDES], "note",
         (_dml("FLOAT32", 0, 6, [1, 1, 2, 2], input={"Strides": [0, 0, 0, 1]}), "onnx", "preserve")),
    Rule(Code.DYNAMIC_BOUNDS, "DynamicBounds", "Bounds computed at run time", CODE_DOCS[Code.DYNAMIC_BOUNDS],
         "error", None, "A spec has constant bounds by construction; see `clipbridge scan docs/example.onnx`, "
         "clip graph/clip_dynamic_max (its max is a Relu's output)."),
    Rule(Code.TENSOR_BOUNDS, "TensorBounds", "Per-element bounds", CODE_DOCS[Code.TENSOR_BOUNDS], "error",
         None, "Written by a dialect with tensor bounds (PyTorch, StableHLO): see `clipbridge explain` there."),
    Rule(Code.DTYPE_PROMOTION, "DtypePromotion", "Output dtype changes", CODE_DOCS[Code.DTYPE_PROMOTION], "error",
         None, "Written by PyTorch's type promotion (an integer tensor with a float bound)."),
    Rule(Code.SHAPE_UNKNOWN, "ShapeUnknown", "Target needs concrete sizes", CODE_DOCS[Code.SHAPE_UNKNOWN], "note",
         (_f("INT8", 0, 6), "directml:2_1", "preserve")),
    Rule(Code.ENGINE_BEHAVIOUR, "EngineBehaviour", "A real engine deviates from its spec",
         CODE_DOCS[Code.ENGINE_BEHAVIOUR], "note",
         (_f("FLOAT", 0, 6), "openvino", "preserve")),
    Rule(UNRESOLVED, "UnresolvedClip", "A clip of the model cannot be resolved",
         "The scan found a clip it cannot read as any dialect allows (e.g. Clip-6 on INT32, a bound of the wrong "
         "type); no translation is possible until the model is fixed.", "error",
         None, "Reported by `clipbridge scan` only, with the reason as the message."),
]
CATALOGUED = frozenset(str(r.id) for r in _RULES)


def _fallback(code: Code) -> Rule:
    """A code added to app/clipbridge/core/findings.py before it is catalogued here still renders (SARIF needs a rule per
    result); tests/lint/test_rules_baseline.py fails until it has a real entry."""
    return Rule(code, "".join(w.capitalize() for w in code.value.split("-")), code.value, CODE_DOCS.get(code, ""),
                "warning", {}, None, "Not yet catalogued: see app/clipbridge/core/findings.py.")


RULES: dict[str, Rule] = {str(r.id): r for r in _RULES}
RULES.update({c.value: _fallback(c) for c in Code if c.value not in RULES})
RULE_IDS: tuple[str, ...] = tuple(RULES)


def check_codes(codes: list[str] | None, loc: str) -> list[str]:
    """Validated rule ids (comma-separated items allowed); an unknown one is the user's error, named by loc."""
    out: list[str] = []
    for i, item in enumerate(codes or []):
        for code in (c.strip() for c in item.split(",")):
            if not code:
                continue
            if code not in RULES:
                raise SpecError(f"unknown finding code {code[:60]!r}; known: {', '.join(RULE_IDS)}", f"{loc}[{i}]")
            out.append(code)
    return out


@lru_cache(maxsize=None)
def example_finding(rule_id: str) -> dict[str, Any] | None:
    """The rule's example, translated now: the finding it produces, with its witness (None without example)."""
    rule = RULES[rule_id]
    if rule.example is None:
        return None
    from pydantic import TypeAdapter

    spec, target, mode = rule.example
    tr = translate(TypeAdapter(Spec).validate_python(spec), [target_from_text(target)], Mode(mode)).translations[0]
    hit = next((f for f in tr.findings if f.code.value == rule_id), None)
    return {"spec": spec, "target": target, "mode": mode, "status": tr.status,
            "finding": hit.to_json() if hit else None}


def explain(rule_id: str) -> dict[str, Any]:
    """A rule as JSON (what `clipbridge explain CODE --format json` prints)."""
    r = RULES[rule_id]
    return {"code": str(r.id), "name": r.name, "title": r.title, "meaning": r.meaning, "level": r.level,
            "dialects": {d: {"rule": rule, "source": src} for d, (rule, src) in r.dialects.items()},
            "example": example_finding(rule_id), "example_note": r.example_note or None}


def explain_text(rule_id: str) -> str:
    """A rule for people: meaning, per-dialect rules with sources, and the example's witness."""
    e = explain(rule_id)
    lines = [f"{e['code']} ({e['name']}): {e['title']}", "", e["meaning"], "", "Per dialect:"]
    width = max((len(d) for d in e["dialects"]), default=0)
    for d, v in e["dialects"].items():
        lines.append(f"  {d:{width}} {v['rule']}  [{v['source']}]")
    ex = e["example"]
    if ex is not None:
        import json
        lines += ["", f"Example: {json.dumps(ex['spec'])} -> {ex['target']} ({ex['mode']}): {ex['status']}"]
        f = ex["finding"]
        if f is not None:
            lines.append(f"  [{f['severity']}] {f['message']}")
            for k in ("source_behaviour", "target_behaviour"):
                if f[k]:
                    lines.append(f"  {k.replace('_', ' ')}: {f[k]}")
            w = f["witness"]
            if w:
                lines.append(f"  witness: input {w['input']} -> source {w['source_output']}, target "
                             f"{w['target_output']}")
    if e["example_note"]:
        lines += ["", e["example_note"]]
    return "\n".join(lines)


def help_markdown(rule_id: str) -> str:
    """SARIF rule help as Markdown (GitHub code scanning shows it beside each alert)."""
    r = RULES[rule_id]
    return markdown.render([
        Paragraph((Strong(r.title),)), Paragraph((r.meaning,)),
        Table(("dialect", "rule", "source"), tuple((d, rule, src) for d, (rule, src) in r.dialects.items())),
        Paragraph((f"Run `clipbridge explain {r.id}` for a worked example with its witness.",))]).rstrip("\n")
