"""The fake dialect's one engine, `fake-ref`: fake.clamp computed from the emitted spec's own numbers (not from the
Meaning), so /v1/execute and /v1/compare exercise a dialect engine the way onnxruntime or OpenVINO are run."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tests.fake_dialect.spec import FakeSpec

ENGINE = "fake-ref"


def run_fake(sem: Any, x: np.ndarray) -> np.ndarray:
    """Section 1 of the fake spec: max(lo, min(x, hi)); section 4: a NaN bound is ignored, a NaN input kept."""
    spec = FakeSpec.model_validate(sem.spec)
    t = x.dtype.type
    y = x.copy()
    for bound, beyond in ((spec.hi, np.greater), (spec.lo, np.less)):  # min(x, hi) first, then max(lo, .)
        if not (isinstance(bound, float) and math.isnan(bound)):
            y = np.where(beyond(y, t(bound)), t(bound), y)
    return y.astype(x.dtype)
