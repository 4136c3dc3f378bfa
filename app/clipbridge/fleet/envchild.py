"""The child interpreter of a pinned engine's environment (envs.EnvWorker): runs calls until the socket closes."""

from __future__ import annotations

from multiprocessing.connection import Connection


def main(fd: int) -> None:
    conn = Connection(fd)
    while True:
        try:
            fn, args, kwargs = conn.recv()
        except (EOFError, OSError):
            return
        try:
            conn.send(("ok", fn(*args, **kwargs)))
        except Exception as exc:  # the engine's own error goes back to the parent as the same exception
            conn.send(("raise", exc))
