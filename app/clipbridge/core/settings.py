"""Every setting, read from CLIPBRIDGE_* environment variables in one place, and validated there.

Fail closed: a setting that is set but blank, malformed or out of range refuses to start the service (a
ClipBridgeError naming the variable; `clipbridge serve` prints it and exits 2). Unset means the default.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field, fields
from urllib.parse import urlsplit

from clipbridge.core.errors import ClipBridgeError

API_KEY_MIN_LENGTH = 16
API_KEY_CHARS = re.compile(r"[\x21-\x7e]+")  # visible ASCII: what an HTTP header carries unchanged
ENV = {  # field -> environment variable
    "host": "CLIPBRIDGE_HOST", "port": "CLIPBRIDGE_PORT", "workers": "CLIPBRIDGE_WORKERS",
    "max_body_bytes": "CLIPBRIDGE_MAX_BODY_BYTES", "max_npy_bytes": "CLIPBRIDGE_MAX_NPY_BYTES",
    "max_json_elements": "CLIPBRIDGE_MAX_JSON_ELEMENTS", "max_npy_elements": "CLIPBRIDGE_MAX_NPY_ELEMENTS",
    "max_concurrent_executions": "CLIPBRIDGE_MAX_CONCURRENT_EXECUTIONS",
    "max_execution_seconds": "CLIPBRIDGE_MAX_EXECUTION_SECONDS", "max_model_bytes": "CLIPBRIDGE_MAX_MODEL_BYTES",
    "api_key": "CLIPBRIDGE_API_KEY", "cors_origins": "CLIPBRIDGE_CORS_ORIGINS", "access_log": "CLIPBRIDGE_ACCESS_LOG",
    "graceful_shutdown_seconds": "CLIPBRIDGE_GRACEFUL_SHUTDOWN_SECONDS",
    "header_timeout_seconds": "CLIPBRIDGE_HEADER_TIMEOUT_SECONDS",
    "min_body_bytes_per_second": "CLIPBRIDGE_MIN_BODY_BYTES_PER_SECOND",
    "body_grace_seconds": "CLIPBRIDGE_BODY_GRACE_SECONDS",
    "memo_bytes": "CLIPBRIDGE_MEMO_BYTES", "memo_entries": "CLIPBRIDGE_MEMO_ENTRIES",
    "sandbox_workers": "CLIPBRIDGE_SANDBOX_WORKERS", "sandbox_memory_mb": "CLIPBRIDGE_SANDBOX_MEMORY_MB",
    "sandbox_timeout_seconds": "CLIPBRIDGE_SANDBOX_TIMEOUT_SECONDS",
    "sandbox_max_result_bytes": "CLIPBRIDGE_SANDBOX_MAX_RESULT_BYTES",
    "diff_memory_mb": "CLIPBRIDGE_DIFF_MEMORY_MB",
}
# (lowest, highest) allowed per numeric field; None: no upper bound.
RANGES: dict[str, tuple[float, float | None]] = {
    "port": (1, 65535), "workers": (1, 1024), "max_body_bytes": (1, None), "max_npy_bytes": (1, None),
    "max_json_elements": (1, None), "max_npy_elements": (1, None), "max_concurrent_executions": (1, 4096),
    "max_execution_seconds": (0, None), "max_model_bytes": (1, None), "graceful_shutdown_seconds": (0, 86400),
    "header_timeout_seconds": (0.01, 86400), "min_body_bytes_per_second": (0, None), "body_grace_seconds": (0, 86400),
    "memo_bytes": (0, None), "memo_entries": (0, None),
    "sandbox_workers": (1, 256), "sandbox_memory_mb": (64, None), "sandbox_timeout_seconds": (0.01, 86400),
    "sandbox_max_result_bytes": (1024, None),
}


def _raw(name: str) -> str | None:
    """The variable's value; None when unset. Set but blank is an error (a blank value is never a default)."""
    raw = os.environ.get(name)
    if raw is None:
        return None
    if raw.strip() == "":
        raise ClipBridgeError(f"{name} is set but blank; unset it for the default or give a value")
    return raw.strip()


def _int(name: str, default: int) -> int:
    raw = _raw(name)
    if raw is None:
        return default
    if not re.fullmatch(r"[+-]?[0-9]+", raw):
        raise ClipBridgeError(f"{name} must be an integer, got {raw[:40]!r}")
    return int(raw)


def _float(name: str, default: float) -> float:
    raw = _raw(name)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ClipBridgeError(f"{name} must be a number, got {raw[:40]!r}") from None
    if not math.isfinite(value):
        raise ClipBridgeError(f"{name} must be a finite number, got {raw[:40]!r}")
    return value


def _bool(name: str, default: bool) -> bool:
    raw = _raw(name)
    if raw is None:
        return default
    if raw.lower() in ("1", "true", "yes", "on"):
        return True
    if raw.lower() in ("0", "false", "no", "off"):
        return False
    raise ClipBridgeError(f"{name} must be 1/0 (true/false), got {raw[:40]!r}")


def _list(name: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in os.environ.get(name, "").split(",") if item.strip())


def check_api_key(key: str | None) -> None:
    """A configured key must be usable as one: visible ASCII (no spaces or control characters) and at least
    API_KEY_MIN_LENGTH characters, so a blank or mangled value can never switch authentication off or guessable."""
    if key is None:
        return
    name = ENV["api_key"]
    if not API_KEY_CHARS.fullmatch(key):
        raise ClipBridgeError(f"{name} must be visible ASCII characters only (no spaces, control characters or "
                              "non-ASCII); it is set but is not")
    if len(key) < API_KEY_MIN_LENGTH:
        raise ClipBridgeError(f"{name} must be at least {API_KEY_MIN_LENGTH} characters; it has {len(key)}")


def check_origin(origin: str) -> None:
    """A CORS origin is `*` or scheme://host[:port] (http or https), nothing more (the Origin header's form)."""
    name = ENV["cors_origins"]
    if origin == "*":
        return
    try:
        parts = urlsplit(origin)
        port_ok = parts.port is None or 0 < parts.port < 65536
    except ValueError:
        port_ok = False
    if not port_ok or parts.scheme not in ("http", "https") or not parts.hostname or parts.path or parts.query \
            or parts.fragment or parts.username or parts.password or any(c.isspace() for c in origin):
        raise ClipBridgeError(f"{name}: {origin[:80]!r} is not an origin; give `*` or scheme://host[:port] "
                              "(http or https, no path), comma-separated")


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
    header_timeout_seconds: float = 30.0  # a connection without a complete request head by then is closed
    min_body_bytes_per_second: float = 1024.0  # a body slower than this (after the grace) is cut off; 0: never
    body_grace_seconds: float = 10.0  # how long a body may arrive slower than the minimum rate
    memo_bytes: int = 8 * 1024 * 1024  # the translation memo's bound in bytes (keys' digests + responses); 0: off
    memo_entries: int = 4096  # and in entries
    # Native code on uploaded models runs in child processes (app/clipbridge/engines/sandbox.py, docs/isolation.md):
    sandbox_workers: int = 2  # how many; a call waits for a free one (503 past its time limit)
    sandbox_memory_mb: int = 4096  # address space a call may add to an idle worker (RLIMIT_AS)
    sandbox_timeout_seconds: float = 25.0  # a call past this kills its worker (503); below the execution limit
    sandbox_max_result_bytes: int = 1024 * 1024 * 1024  # a pickled result past this is refused (422)
    # Captured tensors a diff holds at once in its sandbox call (clipbridge.diff.passes: past it, passes). Unset:
    # half the call's memory, the other half left to the engines' own model memory (docs/operations.md).
    diff_memory_mb: int | None = None

    def __post_init__(self) -> None:
        for f in fields(self):
            if f.name not in RANGES:
                continue
            value = getattr(self, f.name)
            lo, hi = RANGES[f.name]
            name = ENV[f.name]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ClipBridgeError(f"{name} must be a finite number, got {value!r}")
            if value < lo or (hi is not None and value > hi):
                raise ClipBridgeError(f"{name} must be between {lo} and {hi if hi is not None else 'any'}, "
                                      f"got {value!r}")
        if not self.host or any(c.isspace() or not c.isprintable() for c in self.host):
            raise ClipBridgeError(f"{ENV['host']} must be a host name or address, got {self.host[:40]!r}")
        check_api_key(self.api_key)
        if "*" in self.cors_origins and len(self.cors_origins) > 1:
            raise ClipBridgeError(f"{ENV['cors_origins']}: `*` allows any origin; give it alone, not in a list")
        for origin in self.cors_origins:
            check_origin(origin)
        d = self.diff_memory_mb
        if d is not None and (isinstance(d, bool) or not isinstance(d, int) or not 1 <= d < self.sandbox_memory_mb):
            # the engines need room beside the captured tensors, in the same call's memory
            raise ClipBridgeError(f"{ENV['diff_memory_mb']} ({d!r}) must be a whole number from 1 to below "
                                  f"{ENV['sandbox_memory_mb']} ({self.sandbox_memory_mb}): a diff's sandbox call "
                                  "holds the engines' model memory beside its captured tensors")

    @property
    def diff_budget_mb(self) -> int:
        """The diff's memory budget in MiB: the setting, or half of a sandbox call's memory."""
        return self.diff_memory_mb if self.diff_memory_mb is not None else self.sandbox_memory_mb // 2

    @classmethod
    def from_env(cls) -> "Settings":
        host = _raw("CLIPBRIDGE_HOST")
        return cls(
            host=cls.host if host is None else host,
            port=_int("CLIPBRIDGE_PORT", cls.port),
            workers=_int("CLIPBRIDGE_WORKERS", cls.workers),
            max_body_bytes=_int("CLIPBRIDGE_MAX_BODY_BYTES", cls.max_body_bytes),
            max_npy_bytes=_int("CLIPBRIDGE_MAX_NPY_BYTES", cls.max_npy_bytes),
            max_json_elements=_int("CLIPBRIDGE_MAX_JSON_ELEMENTS", cls.max_json_elements),
            max_npy_elements=_int("CLIPBRIDGE_MAX_NPY_ELEMENTS", cls.max_npy_elements),
            max_concurrent_executions=_int("CLIPBRIDGE_MAX_CONCURRENT_EXECUTIONS", cls.max_concurrent_executions),
            max_execution_seconds=_float("CLIPBRIDGE_MAX_EXECUTION_SECONDS", cls.max_execution_seconds),
            max_model_bytes=_int("CLIPBRIDGE_MAX_MODEL_BYTES", cls.max_model_bytes),
            api_key=_raw("CLIPBRIDGE_API_KEY"),  # set but blank raises in _raw: never silently no auth
            cors_origins=_list("CLIPBRIDGE_CORS_ORIGINS"),
            access_log=_bool("CLIPBRIDGE_ACCESS_LOG", cls.access_log),
            graceful_shutdown_seconds=_int("CLIPBRIDGE_GRACEFUL_SHUTDOWN_SECONDS", cls.graceful_shutdown_seconds),
            header_timeout_seconds=_float("CLIPBRIDGE_HEADER_TIMEOUT_SECONDS", cls.header_timeout_seconds),
            min_body_bytes_per_second=_float("CLIPBRIDGE_MIN_BODY_BYTES_PER_SECOND", cls.min_body_bytes_per_second),
            body_grace_seconds=_float("CLIPBRIDGE_BODY_GRACE_SECONDS", cls.body_grace_seconds),
            memo_bytes=_int("CLIPBRIDGE_MEMO_BYTES", cls.memo_bytes),
            memo_entries=_int("CLIPBRIDGE_MEMO_ENTRIES", cls.memo_entries),
            sandbox_workers=_int("CLIPBRIDGE_SANDBOX_WORKERS", cls.sandbox_workers),
            sandbox_memory_mb=_int("CLIPBRIDGE_SANDBOX_MEMORY_MB", cls.sandbox_memory_mb),
            sandbox_timeout_seconds=_float("CLIPBRIDGE_SANDBOX_TIMEOUT_SECONDS", cls.sandbox_timeout_seconds),
            sandbox_max_result_bytes=_int("CLIPBRIDGE_SANDBOX_MAX_RESULT_BYTES", cls.sandbox_max_result_bytes),
            diff_memory_mb=None if _raw("CLIPBRIDGE_DIFF_MEMORY_MB") is None else _int("CLIPBRIDGE_DIFF_MEMORY_MB", 0),
        )
