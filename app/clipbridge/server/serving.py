"""The HTTP/1.1 protocol `clipbridge serve` runs: uvicorn's h11 protocol plus two connection timeouts.

uvicorn closes a connection idle *between* requests (timeout_keep_alive), but not one that never finishes a
request head (its keep-alive timer is cancelled by any byte), nor one that trickles a body: a handful of
such connections would hold a worker's sockets and buffers for ever. This subclass adds, per connection:

- a head timeout: from the connection's start (and from the end of each response) the request head must be
  complete within CLIPBRIDGE_HEADER_TIMEOUT_SECONDS, else the connection is closed;
- a minimum body rate: once a head is in, the body must arrive at CLIPBRIDGE_MIN_BODY_BYTES_PER_SECOND at
  least, averaged from the head's end, once CLIPBRIDGE_BODY_GRACE_SECONDS have passed; time during which
  the server itself stopped reading (flow control: the app is not consuming the body) does not count.

A request h11 refuses (malformed, or a head too large) gets its 400 and a lingering close: the server stops
writing (FIN) and discards what the client still sends for up to LINGER_SECONDS before closing, so that the
kernel does not answer the rest of a large head with a reset, which would discard the 400 on the client's side.

One timer per connection ticks a few times per timeout; it reads h11's own state (their_state IDLE: waiting
for a head; SEND_BODY: receiving a body), so no parser callback is copied from uvicorn.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import json
import socket
import uuid
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import DEFAULT_MAX_INCOMPLETE_EVENT_SIZE, H11Protocol

from clipbridge.core.settings import Settings

PROTOCOL = "clipbridge.server.serving:TimedH11Protocol"  # what `clipbridge serve` passes to uvicorn (an import string: workers)
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc mallopt parameters
MMAP_THRESHOLD = 1 << 20
TRIM_THRESHOLD = 8 << 20
LINGER_SECONDS = 2.0  # a refused request's connection drains the client's bytes this long at most


def tune_allocator() -> bool:
    """Fix glibc's mmap threshold at 1 MiB (mallopt). Request bodies grow as their bytes arrive; with glibc's
    default *dynamic* threshold (raised up to 32 MiB by earlier frees) a growing buffer below it is realloc'ed
    inside the heap, copied, and the holes stay resident: a 64 MiB .npy peaked at +2.8x its size. Above a fixed
    threshold every large block is its own mapping, grown by mremap without a copy and unmapped when freed:
    +1x. Fixing it also fixes the trim threshold, at glibc's 128 KiB: the heap's top was then given back and
    faulted in again for every socket read of a body (~1,900 brk calls and +30 ms for a 21 MB upload), so it is
    set to TRIM_THRESHOLD (at most that much free heap stays resident). Returns False where the C library is not
    glibc (nothing changes there)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return bool(libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(libc.mallopt(M_TRIM_THRESHOLD,
                                                                                           TRIM_THRESHOLD))
    except (OSError, AttributeError):
        return False


def _no_delay(transport: asyncio.Transport) -> None:
    """TCP_NODELAY on the connection. asyncio sets it only on sockets that report IPPROTO_TCP, and the listening
    socket a worker inherits from the supervisor reports proto 0; uvicorn's h11 writes a response's head and body
    apart, so with Nagle on, the client's delayed ACK held every keep-alive response ~40 ms."""
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass  # not a TCP socket after all: nothing to tune


class TimedH11Protocol(H11Protocol):
    settings: Settings | None = None  # read from the environment once per worker process

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        s = type(self).settings
        if s is None:  # the first connection of this worker process
            s = type(self).settings = Settings.from_env()
            tune_allocator()
        self.head_timeout = s.header_timeout_seconds
        self.min_rate = s.min_body_bytes_per_second
        self.grace = s.body_grace_seconds
        self.tick = max(0.05, min(1.0, self.head_timeout / 4, self.grace / 4 if self.grace else 1.0))
        self._timer: asyncio.TimerHandle | None = None
        self._head_since = 0.0  # when the wait for the current head began
        self._body_bytes = 0  # body bytes received for the current request
        self._body_time = 0.0  # seconds spent receiving it while the server was reading
        self._last = 0.0
        self.head_limit = self.config.h11_max_incomplete_event_size or DEFAULT_MAX_INCOMPLETE_EVENT_SIZE
        self.closed_for: str | None = None  # "head" or "body" once a timeout closed the connection
        self.lingering = False  # a 400 was sent: what arrives now is discarded until the close

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        _no_delay(transport)
        super().connection_made(transport)
        self._head_since = self._last = self.loop.time()
        self._timer = self.loop.call_later(self.tick, self._check)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self.lingering:  # the rest of a refused request: read so that the close is a FIN, not a reset
            return
        receiving_body = self.conn.their_state is h11.SEND_BODY
        super().data_received(data)
        if receiving_body:
            self._body_bytes += len(data)  # framing included (chunk sizes): a floor on a rate needs no more

    def handle_events(self) -> None:
        before = self.conn.their_state
        super().handle_events()
        if before is not h11.SEND_BODY and self.conn.their_state is h11.SEND_BODY:
            self._body_bytes, self._body_time = 0, 0.0  # a new head is complete: its body's clock starts

    def on_response_complete(self) -> None:
        self._head_since = self.loop.time()  # the next head's clock starts when this response is done
        super().on_response_complete()

    def send_400_response(self, msg: str) -> None:
        """h11 refused the request (malformed, or a head past h11_max_incomplete_event_size): answer like every
        other error, problem+json with an X-Request-ID, instead of uvicorn's text/plain; then close."""
        if self.conn.our_state not in (h11.IDLE, h11.SEND_RESPONSE):  # a response is already under way
            self.transport.close()
            return
        body = json.dumps({"type": "about:blank", "title": "Bad request", "status": 400,
                           "detail": f"{msg.rstrip('.')}: malformed HTTP, or a request head (request line and "
                                     f"headers) over {self.head_limit} bytes"}).encode()
        headers = [(b"content-type", b"application/problem+json"), (b"content-length", str(len(body)).encode()),
                   (b"connection", b"close"), (b"x-request-id", uuid.uuid4().hex.encode())]
        for event in (h11.Response(status_code=400, headers=headers, reason=b"Bad Request"), h11.Data(data=body),
                      h11.EndOfMessage()):
            self.transport.write(self.conn.send(event))
        self._linger()

    def _linger(self) -> None:
        """Half-close after the 400 and drain the client's bytes until it closes or LINGER_SECONDS pass:
        closing with its head still arriving would make the kernel send a reset that can discard the 400."""
        if not self.transport.can_write_eof():
            self.transport.close()
            return
        self.lingering = True
        self.transport.write_eof()  # flushed first, then FIN
        self.transport.resume_reading()  # flow control may have paused reading; draining needs it
        self.loop.call_later(LINGER_SECONDS, self.transport.close)

    def _check(self) -> None:
        self._timer = None
        if self.transport.is_closing():
            return
        now = self.loop.time()
        elapsed, self._last = now - self._last, now
        state = self.conn.their_state
        if state is h11.IDLE and (self.cycle is None or self.cycle.response_complete):
            if now - self._head_since > self.head_timeout:
                return self._close("head")
        elif state is h11.SEND_BODY and self.min_rate > 0:
            waiting = self.cycle is not None and self.cycle.waiting_for_100_continue  # the client waits for us
            if not self.flow.read_paused and not waiting:  # paused: the app has not taken what arrived
                self._body_time += elapsed
            if self._body_time > self.grace and self._body_bytes < self.min_rate * self._body_time:
                return self._close("body")
        self._timer = self.loop.call_later(self.tick, self._check)

    def _close(self, why: str) -> None:
        self.closed_for = why
        self.logger.info("closing connection from %s: %s", self.client,
                         "no complete request head in time" if why == "head" else "request body too slow")
        if self.cycle is not None and not self.cycle.response_complete:
            self.cycle.disconnected = True  # the app sees http.disconnect on its next receive()
            self.cycle.message_event.set()
        self.transport.close()
