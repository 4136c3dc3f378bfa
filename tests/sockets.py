"""Ports for servers the tests start: the kernel picks one (bind to port 0), and the server serves on that very
socket (`clipbridge serve --fd N`, uvicorn `--fd N`), so no other process can take the port in between."""

from __future__ import annotations

import socket


def listening_socket() -> socket.socket:
    """A TCP socket on 127.0.0.1, bound to a port the kernel chose and listening, inheritable by a child."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    s.listen(128)
    s.set_inheritable(True)
    return s


def port_of(s: socket.socket) -> int:
    return s.getsockname()[1]
