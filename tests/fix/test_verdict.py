"""A fix's verdict is said in the diff's words (issue 43): the proof's own, and never `equal` when the written
model changes the clean outputs."""

from __future__ import annotations

import pytest

from clipbridge.fix.proof import verdict


@pytest.mark.parametrize("proof,clean_identical,expected", [
    pytest.param("equal", True, "equal", id="proven"),
    pytest.param("equal", False, "unexplained", id="proven-but-clean-outputs-changed"),
    pytest.param("explained", True, "explained", id="explained-difference-left"),
    pytest.param("explained", False, "explained", id="explained-and-clean-changed"),
    pytest.param("unexplained", True, "unexplained", id="unexplained-difference-left"),
])
def test_the_fix_verdict_is_the_proofs_in_the_diffs_words(proof, clean_identical, expected):
    assert verdict({"verdict": proof}, clean_identical) == expected
