"""Every connection a worker accepts has TCP_NODELAY, also on the listening socket it inherits (proto 0).

uvicorn's h11 protocol writes a response's head and body in two writes; with Nagle's algorithm on, the second
waits for the client's delayed ACK, and each keep-alive response took ~40 ms (bench/translate.py measured
healthz at ~170 req/s on one worker, ~1,300 with the option set).
"""

from __future__ import annotations

import socket

import pytest

from clipbridge.server.serving import _no_delay


class _Transport:
    def __init__(self, sock: socket.socket | None) -> None:
        self.sock = sock

    def get_extra_info(self, name: str) -> socket.socket | None:
        return self.sock if name == "socket" else None


@pytest.fixture
def accepted():
    """A connection accepted on a listening socket rebuilt from its descriptor, as a worker process gets it."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    inherited = socket.fromfd(listener.fileno(), socket.AF_INET, socket.SOCK_STREAM)  # dup'ed, proto 0
    client = socket.create_connection(listener.getsockname())
    conn, _ = inherited.accept()
    yield conn
    for s in (conn, client, inherited, listener):
        s.close()


def test_inherited_socket_is_what_asyncio_skips(accepted):
    """The premise: asyncio's own TCP_NODELAY is set only on sockets that report IPPROTO_TCP."""
    assert accepted.proto != socket.IPPROTO_TCP
    assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 0


def test_connection_gets_no_delay(accepted):
    _no_delay(_Transport(accepted))  # type: ignore[arg-type]
    assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0


def test_other_transports_are_left_alone():
    """No socket (a test transport) or a Unix socket: nothing to set, and no error."""
    _no_delay(_Transport(None))  # type: ignore[arg-type]
    a, b = socket.socketpair()
    with a, b:
        _no_delay(_Transport(a))  # type: ignore[arg-type]
        assert a.family == socket.AF_UNIX
