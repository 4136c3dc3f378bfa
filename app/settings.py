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
    max_npy_bytes: int = 1024 * 1024 * 1024  # /v1/execute.npy bodies
    max_json_elements: int = 1_000_000  # elements of a JSON tensor (larger: use .npy)
    max_npy_elements: int = 1 << 28
    max_concurrent_executions: int = 2  # past this, 503 + Retry-After

    @classmethod
    def from_env(cls) -> "Settings":
        return cls(
            host=os.environ.get("CLIPBRIDGE_HOST", cls.host),
            port=_int("CLIPBRIDGE_PORT", cls.port),
            workers=_int("CLIPBRIDGE_WORKERS", cls.workers),
            max_body_bytes=_int("CLIPBRIDGE_MAX_BODY_BYTES", cls.max_body_bytes),
            max_npy_bytes=_int("CLIPBRIDGE_MAX_NPY_BYTES", cls.max_npy_bytes),
            max_json_elements=_int("CLIPBRIDGE_MAX_JSON_ELEMENTS", cls.max_json_elements),
            max_npy_elements=_int("CLIPBRIDGE_MAX_NPY_ELEMENTS", cls.max_npy_elements),
            max_concurrent_executions=_int("CLIPBRIDGE_MAX_CONCURRENT_EXECUTIONS", cls.max_concurrent_executions),
        )
