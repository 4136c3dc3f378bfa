"""Models built once per session (the torch exports take a second each)."""

from __future__ import annotations

import io

import numpy as np
import pytest

from tests.diff import models as M


@pytest.fixture(scope="session")
def mnv2() -> bytes:
    return M.mobilenet_v2()


@pytest.fixture(scope="session")
def mnv3() -> bytes:
    return M.mobilenet_v3()


def npz(**arrays: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


@pytest.fixture(scope="session")
def clean_image() -> bytes:
    """A finite image (no NaN, no inf): only precision can make the engines differ on it."""
    return npz(image=np.random.default_rng(1).standard_normal((1, 3, 32, 32)).astype(np.float32))
