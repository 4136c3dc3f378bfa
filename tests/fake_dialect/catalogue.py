"""The fake dialect's data read through the registry: rule texts (lint catalogue, explain, docs), examples (the
inspector, /v1/dialects) and its capability row."""

from __future__ import annotations

from typing import Any

from clipbridge.core.findings import Code

from tests.fake_dialect.meaning import DTYPES, SRC
from tests.fake_dialect.spec import NAME, VERSIONS

RULE_TEXTS = {
    Code.MIN_GREATER_THAN_MAX.value: ("v2: lo > hi gives lo; v1 refuses it", f"{SRC} sections 1, 3"),
    Code.NAN_BOUND.value: ("a NaN bound leaves that side unbounded", f"{SRC} section 4"),
    Code.DTYPE_UNSUPPORTED.value: ("T: f32, i32", f"{SRC} section 2"),
}
EXAMPLES: dict[str, dict[str, Any]] = {
    "start": {"dialect": NAME, "version": "v2", "dtype": "f32", "lo": 0, "hi": 6},
    "crossed-gives-lo": {"dialect": NAME, "version": "v2", "dtype": "i32", "lo": 5, "hi": 2},
}


def capability() -> dict[str, Any]:
    rules = {"v1": ["max(lo, min(x, hi))", "lo > hi is refused"], "v2": ["max(lo, min(x, hi))", "lo > hi gives lo"]}
    return {"dialect": NAME, "default_target": {"dialect": NAME, "version": VERSIONS[-1]},
            "versions": [{"version": v, "selects": v, "dtypes": list(DTYPES), "ranks": "any", "rules": rules[v]}
                         for v in VERSIONS]}
