"""A float16 bound beyond 65504 is resolved as the engines hold it (+-inf), so the NaN prediction is right and the
cause of a NaN element is nan-input (issue 44: not float16-bound-overflow); measured on the real engines."""

from __future__ import annotations

import numpy as np
import pytest

from clipbridge.diff import report, run
from tests.diff import models_bounds as B
from tests.diff.conftest import npz

pytestmark = pytest.mark.engines
with np.errstate(over="ignore"):
    X = np.array([[np.nan, 1, -8e4, 7e4, -1, 2, np.inf, -np.inf]], np.float16)


@pytest.mark.parametrize("model", [
    pytest.param(lambda: B.clip6_f16(-7e4), id="clip6-min-only"),
    pytest.param(lambda: B.clip6_f16(-7e4, 6.0), id="clip6-min-and-max"),
])
def test_nan_through_a_float16_bound_beyond_range(model):
    body = report.diff(run.direct, model(), npz(x=X), run.Options())[0]
    assert body["verdict"] == "explained"
    [row] = body["nodes"]
    assert (row["node"], row["origin"], row["cause"]) == ("clip_f16", "introduced", "nan-input")
    assert row["causes"] == {"nan-input": 1}
    assert row["witness"]["input"] == "nan"
    # OpenVINO writes the lower bound for a NaN: -7e4 as float16 holds it, -inf (the prediction it was checked on)
    assert row["witness"]["outputs"] == {"onnxruntime": "nan", "openvino": "-inf"}


@pytest.mark.parametrize("lo, hi, refused", [
    pytest.param(float("inf"), None, True, id="min-inf-no-max"),
    pytest.param(None, float("-inf"), True, id="no-min-max-minus-inf"),
    pytest.param(7e4, None, False, id="min-beyond-float16-no-max"),
    pytest.param(float("inf"), float("inf"), False, id="min-inf-max-inf"),
    pytest.param(0.0, 6.0, False, id="ordinary"),
])
def test_clip6_refusal_is_checked_on_the_float_attributes(lo, hi, refused):
    """onnxruntime compares Clip-6's FLOAT attributes (absent: -+FLT_MAX) before the cast to float16: min = inf
    with no max is refused although both bounds read inf in float16. The meaning's note must match the engine."""
    import onnxruntime as ort

    from clipbridge.dialects.onnx.meaning import resolve
    from clipbridge.dialects.onnx.model import build_model
    from clipbridge.dialects.onnx.spec import OnnxSpec

    spec = OnnxSpec(dialect="onnx", opset=6, elem_type="FLOAT16", min=lo, max=hi)
    try:
        ort.InferenceSession(build_model(spec).SerializeToString(), providers=["CPUExecutionProvider"])
        engine_refuses = False
    except Exception as exc:  # noqa: BLE001 - onnxruntime's Fail: the check under test
        assert "min_ <= max_" in str(exc)
        engine_refuses = True
    noted = any(n.refuses and n.engine == "onnxruntime" for n in resolve(spec).engine_notes)
    assert engine_refuses is refused and noted is refused


def test_literal_translation_to_clip6_carries_the_refusal():
    """The issue's case: ONNX Clip-6 float16 min = inf, no max, translated literally to onnx:6 is `exact` (the same
    function) and carries onnxruntime's refusal as an engine-behaviour warning."""
    from clipbridge.dialects.kit.common import Mode
    from clipbridge.dialects.onnx.spec import OnnxSpec, OnnxTarget
    from clipbridge.service.translate import translate

    spec = OnnxSpec(dialect="onnx", opset=6, elem_type="FLOAT16", min=float("inf"), max=None)
    t = translate(spec, [OnnxTarget(dialect="onnx", opset=6)], Mode.LITERAL).translations[0]
    assert t.target["min"] == "inf" and "max" not in t.target
    assert ("engine-behaviour", "warning") in [(f.code.value, f.severity.value) for f in t.findings]
