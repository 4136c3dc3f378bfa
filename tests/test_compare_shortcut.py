"""compare()'s shortcut for two clips equal on every non-NaN input (drift.same_on_numbers) gives exactly the
findings of the full comparison on the critical points.

Pairs: every registered example, the registry test's examples and the all-pairs hand cases, plus ONNX sources
of each dtype with edge bounds (signed zeros, subnormal-sized, the float16 maximum, huge, fractional), each
emitted into every dialect in both modes, under every reading either side has.
"""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import TypeAdapter

from clipbridge.core import critical, drift
from clipbridge.core.dtypes import ALL
from clipbridge.dialects import registry
from clipbridge.dialects.kit.common import Mode
from clipbridge.core.errors import ClipBridgeError
from clipbridge.core.evaluate import evaluate
from clipbridge.core.meaning import Bound, Meaning, NanInput, Order, State
from clipbridge.service.translate import emit_to, resolve_spec
from tests.api.test_all_pairs import HAND
from tests.dialects.test_registry import EXAMPLES

EDGE_BOUNDS = [(0, 6), (-0.0, 0.0), (1e-40, 1e30), (-65504, 65504), (-2.5, 0.1), (-128, 127), (0.5, 6.5)]
ONNX_TYPES = ["FLOAT", "FLOAT16", "BFLOAT16", "DOUBLE", "INT8", "UINT8", "INT32", "INT64"]


def _sources() -> list[dict]:
    out = [spec for d in registry.DIALECTS.values() for spec in d.examples.values()]
    out += [spec for spec, _ in EXAMPLES.values()] + list(HAND.values())
    out += [{"dialect": "onnx", "opset": 13, "elem_type": t, "min": lo, "max": hi}
            for t in ONNX_TYPES for lo, hi in EDGE_BOUNDS]
    return out


def _pairs() -> list[tuple[Meaning, Meaning]]:
    parse = TypeAdapter(registry.spec_union())
    out = []
    for spec in _sources():
        try:
            src = resolve_spec(parse.validate_python(spec))
        except (ClipBridgeError, ValueError):
            continue
        if src.meaning.state is State.REJECTED or src.meaning.dynamic:
            continue
        for name, d in registry.DIALECTS.items():
            for mode in Mode:
                try:
                    e = emit_to(src, d.target(None), mode)
                except ClipBridgeError:
                    continue
                if e.meaning is None:
                    continue
                names = dict.fromkeys(n for m in (src.meaning, e.meaning) for n, _ in m.alternates)
                out += [(src.meaning, e.meaning)] + [(src.meaning.under(n), e.meaning.under(n)) for n in names]
    return out


def test_shortcut_findings_equal_the_full_comparison(monkeypatch):
    pairs = [(a, b) for a, b in _pairs() if not (a.has_tensor_bounds or b.has_tensor_bounds)]
    taken = [(a, b) for a, b in pairs if drift.same_on_numbers(a, b)]
    assert len(taken) > 100, len(taken)  # the shortcut is the common case, and is what this test checks
    fast = [repr(drift.compare(a, b)) for a, b in taken]
    monkeypatch.setattr(drift, "same_on_numbers", lambda a, b: False)
    slow = [repr(drift.compare(a, b)) for a, b in taken]
    for (a, b), f, s in zip(taken, fast, slow):
        assert f == s, (a.describe(), b.dialect, b.describe())


@pytest.mark.parametrize("case", ["bounds", "nan-bound", "crossed", "scale-bias", "dtype"])
def test_shortcut_is_refused_where_a_rule_can_differ_on_numbers(case):
    src = resolve_spec(TypeAdapter(registry.spec_union()).validate_python(
        {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "min": 0, "max": 6}))
    a = src.meaning
    other = {"bounds": {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "min": 0, "max": 5},
             "nan-bound": {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "min": 0, "max": "nan"},
             "crossed": {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "min": 6, "max": 0},
             "scale-bias": {"dialect": "directml", "feature_level": "5_0", "desc": {
                 "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 1, 4]},
                 "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 1, 4]},
                 "ScaleBias": {"Scale": 1, "Bias": 0}, "Min": 0, "Max": 6}},
             "dtype": {"dialect": "onnx", "opset": 13, "elem_type": "DOUBLE", "min": 0, "max": 6}}[case]
    b = resolve_spec(TypeAdapter(registry.spec_union()).validate_python(other)).meaning
    assert drift.same_on_numbers(a, a)
    assert not drift.same_on_numbers(a, b) and not drift.same_on_numbers(b, a)


@pytest.mark.parametrize("rule", list(NanInput), ids=lambda r: r.value)
def test_nan_output_equals_evaluate(rule: NanInput) -> None:
    """The shortcut's NaN-input output (a NaN of the output dtype where the rule does not fill it) is evaluate()'s:
    NaN where evaluate gives NaN, the same bits elsewhere, for every float dtype and order."""
    for dt in (d for d in ALL if d.is_float):
        for lo, hi in ((0.0, 6.0), (-0.0, 0.0), (-1.0, -1.0)):
            for order in (Order.MAX_WINS, Order.MIN_WINS):
                m = Meaning("x", "1", dt, Bound(dt.round(lo)), Bound(dt.round(hi)), order=order, nan_input=rule)
                pts = critical.nan_points(dt)
                got, want = drift._nan_output(m, pts), evaluate(m, pts)
                assert got.dtype == want.dtype and len(got) == len(want) == 1
                assert np.isnan(got.astype(np.float64)[0]) == np.isnan(want.astype(np.float64)[0])
                if not np.isnan(want.astype(np.float64)[0]):
                    assert got.view(dt.uint_view).tolist() == want.view(dt.uint_view).tolist()
