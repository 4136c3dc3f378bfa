"""The .tflite artifact from a cached model of the same layout with its values written in place (patch.model)
is flatbuffer.build_model's output byte for byte, over many graphs (ops, types, ranks, unknown sizes,
quantization, bounds)."""

from __future__ import annotations

import random

import pytest

from clipbridge.dialects.tflite import patch
from clipbridge.dialects.tflite.flatbuffer import OPCODES, Graph, build_model

SIZES = [1, 0, 3, 224, 2**31 - 1, -1, 7]
TYPES = ["float32", "int32", "uint8", "int64", "int16", "int8"]
INFO = {"float32": (-3.4e38, 3.4e38), "int32": (-2**31, 2**31 - 1), "uint8": (0, 255), "int64": (-2**63, 2**63 - 1),
        "int16": (-2**15, 2**15 - 1), "int8": (-128, 127)}


def _graph(rng: random.Random) -> Graph:
    dtype = rng.choice(TYPES)
    op = "MINIMUM_MAXIMUM" if dtype != "float32" or rng.random() < 0.6 else \
        rng.choice([o for o in OPCODES if o not in ("MINIMUM", "MAXIMUM")])
    shape = tuple(rng.choice(SIZES) for _ in range(rng.choice([0, 1, 1, 2, 4, 4, 8])))
    lo = hi = None
    if op == "MINIMUM_MAXIMUM":
        a, b = INFO[dtype]
        if dtype == "float32":
            lo, hi = rng.choice([rng.uniform(-10, 10), a, 0.0, -0.0, float("nan"), float("-inf")]), \
                rng.choice([rng.uniform(-10, 10), b, 6.0, float("inf"), float("nan")])
        else:
            lo, hi = rng.randint(a, b), rng.randint(a, b)
    q = None
    if dtype in ("uint8", "int8", "int16") and rng.random() < 0.7:
        q = (rng.choice([0.5, 0.0235294122248888, 1e-30, 3e38, rng.random()]), rng.randint(-128, 255))
    return Graph(op, dtype, shape, lo, hi, q)


def test_patched_models_are_built_models():
    pytest.importorskip("tflite")
    rng = random.Random(28)
    patch._CACHE.clear()
    for _ in range(1500):
        g = _graph(rng)
        assert patch.model(g) == build_model(g), g
    assert any(v is not None for v in patch._CACHE.values())
    assert all(v is not None for v in patch._CACHE.values())  # every layout met was patchable
