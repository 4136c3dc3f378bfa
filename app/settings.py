"""Every setting, read from CLIPBRIDGE_* environment variables in one place."""

from __future__ import annotations

import os
from dataclasses import dataclass

from app.errors import ClipBridgeError


def _int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ClipBridgeError(f"{name} must be an integer, got {raw!r}") from None


@dataclass(frozen=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = 1
    max_body_bytes: int = 16 * 1024 * 1024  # JSON requests; larger bodies get 413 before they are read

    @classmethod
    def from_env(cls) -> "Settings":
        return cls(
            host=os.environ.get("CLIPBRIDGE_HOST", cls.host),
            port=_int("CLIPBRIDGE_PORT", cls.port),
            workers=_int("CLIPBRIDGE_WORKERS", cls.workers),
            max_body_bytes=_int("CLIPBRIDGE_MAX_BODY_BYTES", cls.max_body_bytes),
        )
