"""The Core ML artifact's text written directly (mil._printed_program) is what coremltools prints for the program
it builds, byte for byte, and advances coremltools' process-wide counters (blockN, isN) as building does."""

from __future__ import annotations

import random

import pytest

from clipbridge.dialects.coreml import mil as cml_mil
from clipbridge.dialects.coreml.spec import DTYPES, OPSETS, CoreMLSpec

VALUES = [0, -0.0, 6, 1, -1, 0.1, 1e-45, 1e-40, 6e-8, 65504, 65520, 1e30, -3.4e38, 3.5e38, "nan", "inf", "-inf",
          6 + 3 / 1048576, 2**-24, -1e-7, 123456789, 2**63 - 1]
SHAPES = [None, [1], [0, 5], [1, 3, 224, 224], [None], ["N", 3, None], [2**63 - 1], [None] * 8, [7, "batch"]]


def _counters() -> tuple[int, int]:
    from coremltools.converters.mil.mil import program as mil_program
    from coremltools.converters.mil.mil.block import Block
    return Block.counter, mil_program.k_num_internal_syms


def _set_counters(block: int, syms: int) -> None:
    from coremltools.converters.mil.mil import program as mil_program
    from coremltools.converters.mil.mil.block import Block
    Block.counter, mil_program.k_num_internal_syms = block, syms


def _specs(n: int) -> list[CoreMLSpec]:
    rng = random.Random(28)
    out = []
    for _ in range(n):
        a, b = rng.choice(VALUES), rng.choice(VALUES)
        if rng.random() < 0.3:
            a, b = rng.uniform(-1e3, 1e3), rng.uniform(-1e3, 1e3)
        out.append(CoreMLSpec(dialect="coreml", opset=rng.choice(OPSETS), dtype=rng.choice(list(DTYPES)),
                              alpha=a, beta=b, shape=rng.choice(SHAPES)))
    return out


def test_written_text_is_the_printed_program():
    pytest.importorskip("coremltools")
    cml_mil._import_coremltools()
    written = 0
    for s in _specs(400):
        start = _counters()
        try:
            want = str(cml_mil.build_program(s)).strip() + "\n"
        except ValueError:
            want = None
        after = _counters()
        _set_counters(*start)
        got = cml_mil._printed_program(s)
        if got is None:  # left to the builder (alpha >= beta)
            _set_counters(*after)
            continue
        written += 1
        assert got == want, s
        assert _counters() == after, s
    assert written > 200
