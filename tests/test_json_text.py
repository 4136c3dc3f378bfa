"""app/clipbridge/service/json_text.dumps writes json.dumps' compact text byte for byte (and refuses NaN as it does), and
takes its fast path for real translate responses."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from pydantic import TypeAdapter
from pydantic_core import to_json

from clipbridge.service import json_text
from clipbridge.service.specs import Spec
from clipbridge.service.translate import translate

ALL = ["openvino", "directml", "stablehlo", "webnn", "tosa", "tensorrt", "tflite", "coreml", "pytorch"]


def _floats() -> list[float]:
    rng = np.random.default_rng(28)
    out = [0.0, -0.0, 5e-324, -5e-324, 1e-4, 9.999999999999999e-05, 1e-05, 1e-07, 0.1, 1.0, 1e15, 1e16, 1e17,
           1.7976931348623157e308, 2.0**-149, 2.0**-126, 65504.0, 6.000004768371582, 1 / 3]
    for e in range(-323, 308, 3):
        out += (rng.random(8) * 10.0**e * rng.choice([-1.0, 1.0], 8)).tolist()
    return out


STRINGS = ["", "plain", "".join(map(chr, range(128))), "caf\u00e9", "\u2028", "\U0001f600", "x:1e-7", "[NaN]",
           ",0.00001", "Infinity", "NaN", "-Infinity", 'quote " and \\ backslash', "e-5", "1e-40 in a note"]


def test_scalars_and_strings_match_json_dumps() -> None:
    for v in [*_floats(), *STRINGS, 0, -1, 2**53 + 1, 2**70, -(2**70), True, False, None]:
        assert json_text.dumps(v) == json_text.reference(v), v
        assert json_text.dumps([v]) == json_text.reference([v]), v
        assert json_text.dumps({"k": v, "s": [v, "x"]}) == json_text.reference({"k": v, "s": [v, "x"]}), v


def test_nested_mixtures_match_json_dumps() -> None:
    rng = np.random.default_rng(5)
    floats, leaves = _floats(), [*STRINGS, 1, None, True, (1, 2.5)]
    for _ in range(300):
        doc = {f"k{i}": [floats[int(rng.integers(len(floats)))], leaves[int(rng.integers(len(leaves)))],
                         {"inner": leaves[int(rng.integers(len(leaves)))]}] for i in range(int(rng.integers(1, 6)))}
        assert json_text.dumps(doc) == json_text.reference(doc)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_floats_are_refused_like_json_dumps(bad: float) -> None:
    with pytest.raises(ValueError):
        json_text.reference({"x": [bad]})
    with pytest.raises(ValueError):
        json_text.dumps({"x": [bad]})


@pytest.mark.parametrize("targets", [None, ALL], ids=["default-targets", "all-nine"])
@pytest.mark.parametrize("artifacts", [True, False])
def test_translate_responses_take_the_fast_path(targets: list[str] | None, artifacts: bool) -> None:
    spec = TypeAdapter(Spec).validate_python({"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "min": 0,
                                              "max": 6.25})
    doc = translate(spec, targets).to_json(artifacts)
    raw = to_json(doc, inf_nan_mode="strings")
    assert raw.isascii() and not json_text._may_differ(raw)
    assert json_text.dumps(doc) == json_text.reference(doc) == json.dumps(doc, allow_nan=False,
                                                                          separators=(",", ":"))
