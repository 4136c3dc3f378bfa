"""A fix's verdict is said in the diff's words (issue 43) and is exactly the proof's (issue 44: `clipbridge fix`
exits 0 exactly when its proof is `equal`)."""

from __future__ import annotations

import pytest

from clipbridge.fix.proof import verdict


@pytest.mark.parametrize("proof", [
    pytest.param("equal", id="proven"),
    pytest.param("explained", id="explained-difference-left"),
    pytest.param("unexplained", id="unexplained-difference-left"),
])
def test_the_fix_verdict_is_the_proofs_in_the_diffs_words(proof):
    assert verdict({"verdict": proof}) == proof
