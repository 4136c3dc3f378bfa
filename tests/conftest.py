"""Shared fixtures: an in-process client of the app, and a hermetic environment.

No CLIPBRIDGE_* variable of the shell that runs pytest reaches a test: they are removed before any test module
is imported (app settings read them when an app is created) and put back when the session ends. A test that
needs a setting sets it itself (monkeypatch.setenv, or the env of the subprocess it starts). The test-budget
knobs (TEST_KNOBS) are the suite's own settings, not the app's, and stay.
"""

from __future__ import annotations

import os
import warnings

import pytest

warnings.filterwarnings("ignore", message=".*httpx.*")

TEST_KNOBS = frozenset({"CLIPBRIDGE_FUZZ_EXAMPLES", "CLIPBRIDGE_LINT_EXAMPLES", "CLIPBRIDGE_HYPOTHESIS_EXAMPLES",
                        "CLIPBRIDGE_MEMORY_EXAMPLES", "CLIPBRIDGE_LIVE_CASES", "CLIPBRIDGE_UPDATE_SCREENSHOT",
                        "CLIPBRIDGE_CHROMIUM"})


def _app_settings() -> list[str]:
    return [k for k in os.environ if k.startswith("CLIPBRIDGE_") and k not in TEST_KNOBS]


_SHELL_SETTINGS = {k: os.environ.pop(k) for k in _app_settings()}


def pytest_unconfigure(config: pytest.Config) -> None:
    os.environ.update(_SHELL_SETTINGS)


@pytest.fixture(autouse=True)
def _no_clipbridge_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts without CLIPBRIDGE_* variables, whatever an earlier test or fixture left behind."""
    for k in _app_settings():
        monkeypatch.delenv(k)


@pytest.fixture(scope="session")
def client():
    from fastapi.testclient import TestClient

    from clipbridge.main import create_app
    with TestClient(create_app()) as c:
        yield c
