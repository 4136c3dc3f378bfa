"""schemas/*.json must equal what the pydantic models export (run `clipbridge schemas` after a model change)."""

from __future__ import annotations

from pathlib import Path

import pytest

from clipbridge.api.schemas_export import render, schemas

ROOT = Path(__file__).resolve().parent.parent / "schemas"


@pytest.mark.parametrize("name", sorted(schemas()))
def test_schema_file_in_sync(name):
    path = ROOT / f"{name}.json"
    assert path.exists(), f"{path} missing: run `clipbridge schemas`"
    assert path.read_text() == render(schemas()[name]), f"{path} is stale: run `clipbridge schemas`"


def test_no_stray_schema_files():
    assert {p.stem for p in ROOT.glob("*.json")} == set(schemas())
