"""A translation's findings split by reading: the default readings' own, and those "under the X reading: ..."
(app/clipbridge/service/translate.py _reading_findings, from Meaning.alternates)."""

from __future__ import annotations

from clipbridge.core.drift import status_of
from clipbridge.core.findings import Finding
from clipbridge.service.translate import Translation


def default_status(tr: Translation) -> str:
    """The status the default readings' findings alone give."""
    own = [f for f in tr.findings if not f.message.startswith("under the ")]
    return status_of(own, tr.status == "unsupported")


def under(tr: Translation, reading: str) -> list[Finding]:
    """The findings reported under `reading` that are not info (drift only that reading shows)."""
    return [f for f in tr.findings if f.message.startswith(f"under the {reading} reading:")
            and f.severity.value != "info"]
