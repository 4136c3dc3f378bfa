"""The lowering rules and the source meaning they are measured against.

`torch_value` is checked against torch itself (the oracle) on every clamp form and the special values; each rule
is checked on the witness it is named for."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from clipbridge.chain import rules

FLT_MAX = rules.FLT_MAX
FORMS = {  # source op row (as child_torch.describe lists it) -> torch eager
    "relu6": ({"op": "hardtanh", "lo": 0.0, "hi": 6.0}, lambda x: torch.nn.functional.relu6(x)),
    "hardtanh": ({"op": "hardtanh", "lo": -1.0, "hi": 1.0}, lambda x: torch.nn.functional.hardtanh(x)),
    "hardswish": ({"op": "hardswish", "lo": None, "hi": None}, lambda x: torch.nn.functional.hardswish(x)),
    "hardsigmoid": ({"op": "hardsigmoid", "lo": 0.0, "hi": 1.0}, lambda x: torch.nn.functional.hardsigmoid(x)),
    "clamp": ({"op": "clamp", "lo": -2.0, "hi": 2.0}, lambda x: torch.clamp(x, -2.0, 2.0)),
    "clamp-int": ({"op": "clamp", "lo": -2, "hi": 2}, lambda x: torch.clamp(x, -2, 2)),
    "min-only": ({"op": "clamp", "lo": 0.0, "hi": None}, lambda x: torch.clamp(x, min=0.0)),
    "max-only": ({"op": "clamp", "lo": None, "hi": 6.0}, lambda x: torch.clamp(x, max=6.0)),
    "min-gt-max": ({"op": "clamp", "lo": 1.0, "hi": -1.0}, lambda x: torch.clamp(x, 1.0, -1.0)),
    "relu": ({"op": "relu", "lo": 0.0, "hi": None}, lambda x: torch.relu(x)),
}
SPECIALS = [math.nan, math.inf, -math.inf, FLT_MAX, -FLT_MAX, FLT_MAX / 5, 0.0, -0.0, 3.0, -3.0, 6.0, 1e-40]


def _torch(fn, v: float) -> float:  # noqa: ANN001
    return float(fn(torch.tensor([v], dtype=torch.float32))[0])


@pytest.mark.parametrize("form", list(FORMS))
def test_torch_meaning_is_torch_on_the_specials(form: str) -> None:
    clip, fn = FORMS[form]
    for v in SPECIALS:
        assert rules.same(rules.torch_value(clip, v), _torch(fn, v)), (form, v)


@settings(max_examples=200, derandomize=True, deadline=None)
@given(st.sampled_from(sorted(FORMS)), st.floats(width=32, allow_nan=True, allow_infinity=True))
def test_torch_meaning_is_torch(form: str, v: float) -> None:
    clip, fn = FORMS[form]
    assert rules.same(rules.torch_value(clip, v), _torch(fn, v))


def _op(t: str, *operands: tuple[str, float | None], **attrs: float) -> dict:
    return {"type": t, "operands": list(operands), "attrs": attrs}


X = ("tensor", None)


@pytest.mark.parametrize(("rule", "clip", "group", "stage", "v", "want"), [
    pytest.param("omitted-bound-lowest", FORMS["max-only"][0], [_op("Clip", X, ("omitted", None), ("const", 6.0))],
                 "onnx", -math.inf, -FLT_MAX, id="onnx-clip-omitted-min"),
    pytest.param("omitted-bound-lowest", FORMS["min-only"][0], [_op("Clamp", X, min=0.0, max=FLT_MAX)],
                 "openvino", math.inf, FLT_MAX, id="openvino-clamp-flt-max"),
    pytest.param("omitted-bound-lowest", FORMS["min-only"][0],
                 [_op("Maximum", ("const", 0.0), X), _op("Minimum", ("const", FLT_MAX), X)],
                 "openvino", math.inf, FLT_MAX, id="openvino-minimum-flt-max"),
    pytest.param("nan-to-lower-bound", FORMS["clamp"][0], [_op("Clamp", X, min=-2.0, max=2.0)], "openvino",
                 math.nan, -2.0, id="openvino-clamp-nan"),
    pytest.param("nan-to-omitted-min-lowest", FORMS["max-only"][0], [_op("Clamp", X, min=-FLT_MAX, max=6.0)],
                 "openvino", math.nan, -FLT_MAX, id="openvino-omitted-min-is-the-lowest-float"),
    pytest.param("nan-to-lower-bound", FORMS["max-only"][0], [_op("Clamp", X, min=-FLT_MAX, max=6.0)],
                 "openvino", math.nan, None, id="an-omitted-min-is-not-a-lower-bound"),
    pytest.param("nan-to-bound-by-operand-order", FORMS["min-only"][0], [_op("Maximum", X, ("const", 0.0))],
                 "openvino", math.nan, 0.0, id="tensor-first-gives-the-bound"),
    pytest.param("nan-to-bound-by-operand-order", FORMS["min-gt-max"][0],
                 [_op("Maximum", ("const", 1.0), X), _op("Minimum", ("const", -1.0), X)], "openvino", math.nan,
                 None, id="constant-first-keeps-nan"),
    pytest.param("nan-to-constant-builtin", FORMS["clamp"][0],
                 [_op("MAXIMUM", X, ("const", -2.0)), _op("MINIMUM", X, ("const", 2.0))], "tflite:builtin",
                 math.nan, -2.0, id="litert-builtin"),
    pytest.param("nan-to-constant-builtin", FORMS["clamp"][0],
                 [_op("MAXIMUM", X, ("const", -2.0))], "tflite", math.nan, None, id="xnnpack-keeps-nan"),
    pytest.param("min-ge-max-fill", FORMS["min-gt-max"][0], [{"type": "const", "operands": []}], "coreml",
                 math.nan, -1.0, id="coreml-fill"),
    pytest.param("torch-hardswish-overflow", FORMS["hardswish"][0], [_op("HardSwish", X)], "onnx", FLT_MAX,
                 FLT_MAX, id="hardswish-finite-where-torch-overflows"),
    pytest.param("torch-hardswish-overflow", FORMS["hardswish"][0], [_op("HardSwish", X)], "onnx", 1e30, None,
                 id="no-overflow-below-flt-max-over-6"),
])
def test_rule(rule: str, clip: dict, group: list[dict], stage: str, v: float, want: float | None) -> None:
    got = rules.RULES[rule](clip, group, stage, v)
    assert (got is None) if want is None else rules.same(got, want)


def test_every_rule_cites_its_source() -> None:
    for name, fn in rules.RULES.items():
        assert fn.__doc__ and fn.__doc__.strip(), name
        assert name.replace("-", "_") == fn.__name__
    assert np.float32(rules.FLT_MAX) == np.finfo(np.float32).max


def test_int_literal_refused_is_predicted_from_the_source() -> None:
    clip = {"op": "clamp_min", "lo": 0, "hi": None, "int_literal": ["lo"]}
    assert rules.refused(clip, "coreml") and not rules.refused(clip, "onnx")
    assert not rules.refused({**clip, "lo": 0.0, "int_literal": []}, "coreml")
