"""Every setting, read from CLIPBRIDGE_* environment variables in one place."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from app.errors import ClipBridgeError


def _int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ClipBridgeError(f"{name} must be an integer, got {raw!r}") from None


def _float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise ClipBridgeError(f"{name} must be a number, got {raw!r}") from None


def _bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name, "").strip().lower()
    if raw == "":
        return default
    if raw in ("1", "true", "yes", "on"):
        return True
    if raw in ("0", "false", "no", "off"):
        return False
    raise ClipBridgeError(f"{name} must be 1/0 (true/false), got {raw!r}")


def _list(name: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in os.environ.get(name, "").split(",") if item.strip())


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
    max_execution_seconds: float = 30.0  # an execution past this answers 503 (its slot stays taken until it ends)
    max_model_bytes: int = 512 * 1024 * 1024  # /v1/models/* bodies (413 before reading)
    api_key: str | None = field(default=None, repr=False)  # when set, every /v1 endpoint requires it
    cors_origins: tuple[str, ...] = ()  # CORS allow-list; empty: same origin only (no CORS headers)
    access_log: bool = True  # one JSON line per request on the clipbridge.access logger
    graceful_shutdown_seconds: int = 20  # on SIGTERM: stop accepting, let requests in flight finish this long

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
            max_execution_seconds=_float("CLIPBRIDGE_MAX_EXECUTION_SECONDS", cls.max_execution_seconds),
            max_model_bytes=_int("CLIPBRIDGE_MAX_MODEL_BYTES", cls.max_model_bytes),
            api_key=os.environ.get("CLIPBRIDGE_API_KEY", "").strip() or None,
            cors_origins=_list("CLIPBRIDGE_CORS_ORIGINS"),
            access_log=_bool("CLIPBRIDGE_ACCESS_LOG", cls.access_log),
            graceful_shutdown_seconds=_int("CLIPBRIDGE_GRACEFUL_SHUTDOWN_SECONDS", cls.graceful_shutdown_seconds),
        )
