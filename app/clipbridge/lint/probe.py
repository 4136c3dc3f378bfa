"""Probes: the inputs where a clip's meaning can change between dialects, with the expected output under each.

The points are app/clipbridge/core/drift.py's critical points (every effective bound and its neighbours, the type's extremes,
+-0, +-inf, NaN, subnormals, ScaleBias pre-images) plus the carrier limits a device run should hit (the
float16 overflow threshold, integers past 2^24 and 2^53). Outputs come from clipbridge/service/execute.py's NumPy run of
each dialect's meaning, the same code /v1/execute uses.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
import numpy as np

from clipbridge.dialects import registry
from clipbridge.dialects.kit.common import Mode
from clipbridge.core.drift import critical_points
from clipbridge.core.dtypes import DType
from clipbridge.core.errors import ClipBridgeError
from clipbridge.service.execute import Semantics, reading_for, run, semantics_for
from clipbridge.core.meaning import same_outputs
from clipbridge.core.numbers import Number, wire_number
from clipbridge.service.specs import AnySpec, AnyTarget
from clipbridge.scan.report import target_from_text
from clipbridge.service.translate import resolve_spec

F16_MAX = 65504.0
F16_OVERFLOW = 65520.0  # the smallest value that rounds to inf in float16 (round to nearest even)


@dataclass
class ProbeSemantics:
    label: str
    dialect: str
    sem: Semantics | None
    reading: str | None = None
    outputs: np.ndarray | None = None
    error: str | None = None


@dataclass
class Probe:
    dtype: DType
    inputs: np.ndarray
    why: list[list[str]]
    semantics: list[ProbeSemantics] = field(default_factory=list)

    def differing(self) -> list[int]:
        """Indices where the semantics that computed an output disagree (NaN equals NaN)."""
        outs = [s.outputs for s in self.semantics if s.outputs is not None]
        if len(outs) < 2:
            return []
        bad = np.zeros(len(self.inputs), dtype=bool)
        for o in outs[1:]:
            bad |= ~same_outputs(outs[0], o)
        return [int(i) for i in np.flatnonzero(bad)]

    def to_json(self) -> dict[str, Any]:
        dt = self.dtype
        py = [dt.to_python(v) for v in self.inputs]
        return {"dtype": dt.name,
                "inputs": [{"value": wire_number(v), "why": w} for v, w in zip(py, self.why)],
                "semantics": [{"label": s.label, "dialect": s.dialect,
                               "meaning": s.sem.meaning.describe() if s.sem else None, "reading": s.reading,
                               "spec": s.sem.spec if s.sem else None,
                               "outputs": None if s.outputs is None else
                               [wire_number(dt.to_python(v)) for v in s.outputs],
                               "error": s.error} for s in self.semantics],
                "differing": self.differing()}


def semantics_label(item: str | AnyTarget) -> str:
    if isinstance(item, str):
        return item
    version = getattr(item, "opset", None) or getattr(item, "version", None) or getattr(item, "feature_level", None)
    return f"{item.dialect}:{version}" if version else item.dialect


def _key(dt: DType, v: Number) -> object:
    return repr(float(v)) if dt.is_float else int(v)


def _extras(dt: DType) -> list[tuple[Number, str]]:
    """Carrier limits that critical points do not visit unless a bound sits there."""
    out: list[tuple[Number, str]] = []
    if dt.is_float and dt.name != "float16":
        for sign in (1.0, -1.0):
            out += [(sign * F16_MAX, "float16 max"), (sign * F16_OVERFLOW, "float16 overflow threshold"),
                    (dt.next_down(sign * F16_OVERFLOW) if sign > 0 else dt.next_up(sign * F16_OVERFLOW),
                     "just below the float16 overflow threshold")]
    if dt.is_float and dt.bits == 64:
        out += [(2.0**53, "2^53"), (2.0**53 + 2, "beyond 2^53 (float64 spacing 2)")]
    if not dt.is_float and dt.bits >= 32:
        out += [(2**24 + 1, "beyond 2^24 (a FLOAT bound cannot hold it)"), (2**24, "2^24")]
        if dt.lowest() < 0:
            out += [(-(2**24) - 1, "beyond -2^24")]
    if not dt.is_float and dt.bits == 64:
        out += [(2**53, "2^53"), (2**53 + 1, "beyond 2^53 (a double bound cannot hold it)")]
        if dt.lowest() < 0:
            out += [(-(2**53) - 1, "beyond -2^53")]
    return [(v, why) for v, why in out if dt.contains(v)]


def _labels(dt: DType, sems: list[ProbeSemantics]) -> dict[object, list[str]]:
    labels: dict[object, list[str]] = {}

    def add(v: Number, why: str) -> None:
        if not dt.is_float or not math.isnan(float(v)):
            if not dt.contains(v):
                return
        labels.setdefault(_key(dt, v), []).append(why)

    unit = "ulp" if dt.is_float else "unit"
    for v, name in ((dt.lowest(), "type lowest"), (dt.highest(), "type max")):
        add(v, name)
        for nb, word in ((dt.next_up(v), "+"), (dt.next_down(v), "-")):
            if nb != v:
                add(nb, f"{name} {word} 1 {unit}")
    if dt.is_float:
        tiny = float(np.finfo(np.float64).tiny) if dt.bits == 64 else float(ml_dtypes.finfo(dt.np_dtype).smallest_normal)
        for v in (tiny, -tiny):
            add(v, "smallest normal" if v > 0 else "-smallest normal")
            add(dt.next_down(v) if v > 0 else dt.next_up(v), "largest subnormal" if v > 0 else "-largest subnormal")
    if not dt.is_float:
        add(0, "0")
    if dt.is_float:
        for v, why in ((0.0, "+0"), (-0.0, "-0"), (math.inf, "+inf"), (-math.inf, "-inf"), (math.nan, "NaN"),
                       (dt.next_up(0.0), "smallest subnormal"), (dt.next_down(0.0), "-smallest subnormal")):
            add(v, why)
    for s in sems:
        m = s.sem.meaning if s.sem else None
        if m is None or m.dynamic:
            continue
        for side, b in (("min", m.lower), ("max", m.upper)):
            if b is None or b.is_nan:
                continue
            add(b.value, f"{side} of {s.label}")
            for nb, word in ((dt.next_up(b.value), "+"), (dt.next_down(b.value), "-")):
                if nb != b.value:
                    add(nb, f"{side} of {s.label} {word} 1 {unit}")
            sb = m.scale_bias
            if sb is not None and sb.scale != 0 and math.isfinite(float(b.value)):
                pre = (float(b.value) - sb.bias) / sb.scale
                if math.isfinite(pre):
                    add(dt.round(pre) if dt.is_float else dt.saturate(int(pre)),
                        f"ScaleBias pre-image of {side} of {s.label}")
    for v, why in _extras(dt):
        add(v, why)
    return labels


def probe(spec: AnySpec, semantics: list[str | AnyTarget] | None = None, mode: Mode = Mode.LITERAL) -> Probe:
    """The probe inputs for `spec` and each semantics' expected outputs (an error where it cannot compute)."""
    src = resolve_spec(spec)
    if src.meaning.dynamic:
        raise ClipBridgeError("the spec's bounds are computed at run time: there is nothing to probe", "spec")
    if src.meaning.has_tensor_bounds:
        # A probe is one column of scalar inputs; per-element bounds need an input of the bounds' shape.
        raise ClipBridgeError("the spec has per-element (tensor) bounds: a probe runs scalar inputs only; use "
                              "/v1/compare with an input of the spec's shape", "spec")
    dt = src.meaning.dtype
    sems: list[ProbeSemantics] = []
    for item in semantics or list(registry.default_names()):
        label = semantics_label(item)
        try:
            if isinstance(item, str) and ":" in item:  # the CLI's onnx:13, directml:5_0
                item = target_from_text(item, "semantics")
            sem = semantics_for(src, item, mode)
        except ClipBridgeError as exc:
            dialect = item if isinstance(item, str) else item.dialect
            sems.append(ProbeSemantics(label, dialect, None, error=exc.message))
            continue
        sems.append(ProbeSemantics(label, sem.dialect, sem, reading_for(sem.meaning, None)))
    labels = _labels(dt, sems)
    pts = critical_points(dt, [s.sem.meaning for s in sems if s.sem])
    seen = {_key(dt, v) for v in pts}
    extra = [v for v, _ in _extras(dt) if _key(dt, v) not in seen]
    if extra:
        pts = np.concatenate([pts, dt.array(extra)])
    order = np.argsort(pts.astype(np.float64), kind="stable")  # NaN sorts last
    pts = pts[order]
    why = [labels.get(_key(dt, dt.to_python(v)), ["within 2 steps of a bound, an extreme or 0"]) for v in pts]
    result = Probe(dt, pts, why, sems)
    for s in sems:
        if s.sem is None:
            continue
        try:
            s.outputs = run(s.sem, pts.copy(), "numpy", s.reading)
        except ClipBridgeError as exc:
            s.error = exc.message
    return result
