"""What every model route runs on an upload before anything native sees it, and how engine text is logged.

`embedded_only` refuses a model that keeps any tensor's data in a file (clipbridge.scan.wire.refuse_external: one walk
over every place a tensor can live); the service never opens a file an upload names, whatever the location
says. `logged_engine_text` keeps an engine's full message in the server log, under the request id, while the
client gets only its reduced form (clipbridge.engines.errors).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

from fastapi import Request

from clipbridge.core.errors import ClipBridgeError
from clipbridge.scan.report import sniff
from clipbridge.scan.wire import Malformed, refuse_external

T = TypeVar("T")
log = logging.getLogger("clipbridge.engines")


def embedded_only(data, reader_walks_it: bool = False) -> None:
    """400 naming the first tensor whose data lives in an external file (an OpenVINO IR has none to refuse).

    Bytes the wire walk cannot read are refused too (fail closed: an engine's parser may accept what the walk
    does not, a group field say, and then find external tensors) unless `reader_walks_it`: the route's own
    reader is this same walk (inspect, rewrite), and refuses them in its own, more helpful words."""
    if sniff(data) != "onnx":
        return
    try:
        refuse_external(data)
    except Malformed:
        if not reader_walks_it:
            raise


def logged_engine_text(request: Request, work: Callable[[], T]) -> Callable[[], T]:
    """`work`, with the full text of an engine's failure written to the server log under the request id."""
    rid = request.scope.get("state", {}).get("request_id")

    def wrapped() -> T:
        try:
            return work()
        except ClipBridgeError as exc:
            text = getattr(exc, "engine_text", None)
            if text:
                log.warning("request %s: %s (engine text: %s)", rid, exc.message, text)
            raise
    return wrapped
