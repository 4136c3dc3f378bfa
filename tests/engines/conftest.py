"""Fixtures of the engine tests."""

from __future__ import annotations

import pytest

from clipbridge.core.settings import Settings
from clipbridge.engines import sandbox


@pytest.fixture(scope="module")
def small_pool():
    """A one-worker sandbox pool for the module's tests (20 s per call, results up to 1 MiB), closed after them."""
    pool = sandbox.configure(Settings(sandbox_workers=1, sandbox_timeout_seconds=20,
                                      sandbox_max_result_bytes=1 << 20))
    pool.warm()
    yield pool
    pool.close()
