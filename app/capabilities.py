"""The capability matrix: per dialect and version, the dtypes, ranks and semantic rules in force."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from app import runtime_support
from app.dialects import registry
from app.dialects.base import Dialect
from app.findings import CODE_DOCS


def capabilities() -> dict[str, Any]:
    """/v1/dialects: each registered dialect's row, the finding codes and the runtime support table."""
    return _capabilities(tuple(registry.DIALECTS.values()))


@lru_cache(maxsize=4)  # keyed on the registry's contents (dialects hash by identity)
def _capabilities(dialects: tuple[Dialect, ...]) -> dict[str, Any]:
    return {
        "dialects": [d.capability() for d in dialects],
        "finding_codes": [{"code": c.value, "meaning": text} for c, text in CODE_DOCS.items()],
        "runtime_support": runtime_support.summary(),
    }
