"""What every model route runs on an upload before anything native sees it, and how engine text is logged.

`embedded_only` refuses a model that keeps any tensor's data in a file (clipbridge.scan.wire.refuse_external: one walk
over every place a tensor can live), for the routes whose engines would open it (diff, fix, chain); the
service never opens a file an upload names, whatever the location says. The scan routes need no weights and
scan such a model without them (clipbridge.scan.detach). `logged_engine_text` keeps an engine's full message
in the server log, under the request id, while the client gets only its reduced form (clipbridge.engines.errors).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

from fastapi import Request

from clipbridge.core.errors import ClipBridgeError
from clipbridge.scan.report import sniff
from clipbridge.scan.wire import ExternalDataRefused, load_light, refuse_external

T = TypeVar("T")
log = logging.getLogger("clipbridge.engines")
SEND_HINT = ("or send the data with the model: a zip of the .onnx and the files it names as 'model', or each file "
             "as a form part 'data' whose filename is its location (docs/api.md)")


def embedded_only(data) -> None:
    """400 naming the first tensor whose data lives in an external file (an OpenVINO IR has none to refuse).

    For the routes that run engines (diff, fix, chain): an engine would open the file. Bytes the wire walk
    cannot read are refused too (fail closed: an engine's parser may accept what the walk does not, a group
    field say, and then find external tensors). The scan routes do not call this (issue 46): they need no
    weights, and detach every location before native code runs (clipbridge.scan.detach)."""
    if sniff(data) != "onnx":
        return
    light = load_light(data)  # a location outside the model's directory: its own 400, no hint to send it
    try:
        refuse_external(light)
    except ExternalDataRefused as exc:  # issue 46: the data may come with the model; say how
        raise ExternalDataRefused(f"{exc.message}; {SEND_HINT}", exc.loc) from None


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
