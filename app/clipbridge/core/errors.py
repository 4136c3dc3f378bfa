"""Domain errors. Each maps to one HTTP status in app/clipbridge/api/problems.py; nothing else raises to the user."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


class ClipBridgeError(Exception):
    """Base of every error a user can cause; `loc` names the offending field."""

    status = 400
    title = "Bad request"

    def __init__(self, message: str, loc: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.loc = loc

    def __str__(self) -> str:
        return f"{self.message} ({self.loc})" if self.loc else self.message


@contextmanager
def located(prefix: str) -> Iterator[None]:
    """Errors raised inside name fields under `prefix` (a target's `feature_level` is `targets[0].feature_level`)."""
    try:
        yield
    except ClipBridgeError as exc:
        if not exc.loc:
            exc.loc = prefix
        elif not exc.loc.startswith(prefix):
            exc.loc = prefix + ("" if exc.loc.startswith("[") else ".") + exc.loc
        raise


class SpecError(ClipBridgeError):
    """The spec breaks a rule of its dialect/version (a typed field, a rank, a dtype)."""

    status = 422
    title = "Invalid clip spec"


class RejectedSpec(ClipBridgeError):
    """The framework itself refuses to build this op; `message` carries its reason."""

    status = 422
    title = "Rejected by the framework"


class ArtifactError(ClipBridgeError):
    """A native artifact (ModelProto bytes, IR XML) could not be read safely."""

    status = 400
    title = "Unreadable artifact"


class UnsupportedTarget(ClipBridgeError):
    """A translation target that names an unknown dialect or version."""

    status = 422
    title = "Unknown target"


class PayloadTooLarge(ClipBridgeError):
    status = 413
    title = "Payload too large"


class UnsupportedMediaType(ClipBridgeError):
    """A body sent with a content type the endpoint does not take."""

    status = 415
    title = "Unsupported media type"


class BackendUnavailable(ClipBridgeError):
    """The chosen execution backend is not installed here or cannot run this semantics/dtype."""

    status = 422
    title = "Backend unavailable"


class Busy(ClipBridgeError):
    """Every execution slot is taken; the client should retry (503 with Retry-After)."""

    status = 503
    title = "Busy"
    retry_after = 1


class TimedOut(ClipBridgeError):
    """An execution ran past CLIPBRIDGE_MAX_EXECUTION_SECONDS (503; its slot stays taken until it ends)."""

    status = 503
    title = "Execution timed out"
    retry_after = 1
