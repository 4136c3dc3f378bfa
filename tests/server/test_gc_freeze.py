"""The served app freezes what start-up allocated out of the cyclic GC's reach; an app a test makes does not."""

from __future__ import annotations

import gc

import pytest
from fastapi.testclient import TestClient

from clipbridge.main import create_app


@pytest.mark.parametrize("freeze", [True, False], ids=["served-app-freezes", "test-app-leaves-gc-alone"])
def test_start_up_freezes_only_when_asked(freeze: bool) -> None:
    gc.unfreeze()
    try:
        with TestClient(create_app(freeze_gc=freeze)) as client:
            assert client.get("/healthz").status_code == 200
            assert (gc.get_freeze_count() > 0) is freeze
    finally:
        gc.unfreeze()  # the rest of the test process collects as before
