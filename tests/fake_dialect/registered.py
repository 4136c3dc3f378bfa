"""Import this first (before app.service, app.api, app.main or app.cli): it adds the fake dialect to the registry
with one line, exactly as a dialect under app/dialects/ is added, so the unions, the API models and the CLI that
are built from the registry at import include it."""

from __future__ import annotations

from app.dialects import registry

from tests.fake_dialect import DIALECT

registry.DIALECTS[DIALECT.name] = DIALECT  # the one registry line
