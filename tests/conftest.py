"""Shared fixtures: an in-process client of the app."""

from __future__ import annotations

import warnings

import pytest

warnings.filterwarnings("ignore", message=".*httpx.*")


@pytest.fixture(scope="session")
def client():
    from fastapi.testclient import TestClient

    from app.main import create_app
    with TestClient(create_app()) as c:
        yield c
