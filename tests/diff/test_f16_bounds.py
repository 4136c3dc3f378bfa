"""A float16 bound beyond 65504 is resolved as the engines hold it (+-inf), so the NaN prediction and the cause
(float16-bound-overflow with nan-input) are right; measured on the real engines, never assumed."""

from __future__ import annotations

import numpy as np
import pytest

from app.diff import report, run
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
    assert (row["node"], row["origin"], row["cause"]) == ("clip_f16", "introduced", "float16-bound-overflow")
    assert row["causes"] == {"float16-bound-overflow": 1, "nan-input": 1}
    assert row["witness"]["input"] == "nan"
    # OpenVINO writes the lower bound for a NaN: -7e4 as float16 holds it, -inf (the prediction it was checked on)
    assert row["witness"]["outputs"] == {"onnxruntime": "nan", "openvino": "-inf"}
