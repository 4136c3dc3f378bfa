"""Import this first (before clipbridge.service, clipbridge.api, clipbridge.main or clipbridge.cli): it adds the fake dialect to the registry
with one line, exactly as a dialect under app/clipbridge/dialects/ is added, so the unions, the API models and the CLI that
are built from the registry at import include it."""

from __future__ import annotations

from clipbridge.dialects import registry

from tests.fake_dialect import DIALECT

registry.DIALECTS[DIALECT.name] = DIALECT  # the one registry line
