"""How a call's large byte arguments reach a sandbox worker: in a memory file, not through the socket.

An uploaded model of 21 MB pickled into the call and sent through the worker's socket is copied five or six times
(pickle, the kernel's socket buffers in small pieces, multiprocessing's read buffer, unpickling) and cost ~40-60 ms
a call on the project's 2-core hosts (docs/isolation.md). Here each top-level `bytes` argument of at least
MIN_SHARED bytes is written once into an anonymous memory file (Linux memfd_create), sealed against change, and
its descriptor passed with the call (SCM_RIGHTS); the worker reads it back with one read. What the worker gets is
the same bytes object it got before, so no called function changes. Where memfd_create is missing, every
argument travels in the pickle as before. An upload can be written into a MemoryFile as it arrives (the diff
route's form reader): that argument is then passed by its descriptor as is, never copied in this process.

Every call starts with one marker byte sent with sendmsg, carrying the call's descriptors (none for most calls),
then the pickled call itself: send_call in clipbridge.engines.sandbox (the parent), receive_call in
clipbridge.engines.sandbox_child (the worker).
"""

from __future__ import annotations

import fcntl
import mmap
import os
import socket
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

MIN_SHARED = 1 << 20  # below this the pickle is as cheap as a memory file
MAX_FDS = 8  # a call passes at most this many memory files (a model and its inputs)
MARKER = b"\x01"
SEALS = getattr(fcntl, "F_SEAL_SEAL", 0) | getattr(fcntl, "F_SEAL_SHRINK", 0) | getattr(fcntl, "F_SEAL_GROW", 0) \
    | getattr(fcntl, "F_SEAL_WRITE", 0)


@dataclass(frozen=True)
class Shared:
    """In a pickled call, the k-th descriptor passed with it holds this argument's `size` bytes."""

    index: int
    size: int


def _memory_file(data: bytes) -> int:
    """A sealed anonymous memory file holding `data` (its descriptor: the caller closes it)."""
    f = MemoryFile("clipbridge-call")
    try:
        f.write(data)
        f.seal()  # the worker reads what was sent, never a later change
        return f.detach()
    except BaseException:
        f.close()
        raise


class MemoryFile:
    """Bytes written once, as they arrive, into a memory file, then sealed: a sandbox call passes its descriptor
    (the worker reads bytes, as for any large argument) and this process reads it through a read-only mapping.

    Why: an upload collected in a growing bytearray, copied into `bytes`, then written into a memory file for the
    call was three passes over a 21 MB model, each faulting in fresh pages (~15-20 ms a diff, docs/isolation.md).
    Only where memfd_create exists (available()); never pickled."""

    def __init__(self, name: str = "clipbridge-upload") -> None:
        self.fd = os.memfd_create(name, os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        self.size = 0
        self._map: mmap.mmap | None = None
        self._sealed = False

    @staticmethod
    def available() -> bool:
        return hasattr(os, "memfd_create")

    def __len__(self) -> int:
        return self.size

    def __reduce__(self) -> Any:
        raise TypeError("a MemoryFile travels by its descriptor (sandbox_wire.split), never in a pickle")

    def write(self, data: Any) -> None:
        view = memoryview(data)
        while view:
            n = os.write(self.fd, view)
            self.size, view = self.size + n, view[n:]

    def seal(self) -> None:
        """Nothing more can change the file (its size or its bytes), here or in a worker."""
        if not self._sealed:
            if SEALS and hasattr(fcntl, "F_ADD_SEALS"):
                fcntl.fcntl(self.fd, fcntl.F_ADD_SEALS, SEALS)
            self._sealed = True

    def detach(self) -> int:
        """The descriptor, now the caller's to close (this object no longer owns it)."""
        fd, self.fd = self.fd, -1
        return fd

    def sealed(self) -> memoryview:
        """Seal the file and map it read-only: the bytes, without a copy."""
        self.seal()
        if self.size == 0:
            return memoryview(b"")
        if self._map is None:
            # MAP_POPULATE: the pages are the file's own, mapped in one call instead of one fault each
            self._map = mmap.mmap(self.fd, self.size, flags=mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0),
                                  prot=mmap.PROT_READ)
        return memoryview(self._map)

    def close(self) -> None:
        """Unmap (once no view of it is left; else the mapping goes with the last view) and close the file."""
        if self._map is not None:
            try:
                self._map.close()
            except BufferError:  # a view is still held somewhere: it is unmapped when that view goes
                pass
            self._map = None
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def split(args: tuple) -> tuple[tuple, list[int]]:
    """(args with each large bytes argument and each MemoryFile replaced by a Shared placeholder, the memory
    files' descriptors: new ones, closed by the caller)."""
    if not hasattr(os, "memfd_create"):
        return args, []
    out, fds = [], []
    try:
        for a in args:
            if isinstance(a, MemoryFile) and len(fds) < MAX_FDS:
                a.seal()
                fds.append(os.dup(a.fd))
                out.append(Shared(len(fds) - 1, a.size))
            elif type(a) is bytes and len(a) >= MIN_SHARED and len(fds) < MAX_FDS:
                fds.append(_memory_file(a))
                out.append(Shared(len(fds) - 1, len(a)))
            else:
                out.append(a)
    except BaseException:
        close(fds)
        raise
    return tuple(out), fds


def send_marker(sock_fd: int, fds: list[int]) -> None:
    """The call's marker byte, carrying `fds` (the socket is the worker's; the descriptors stay ours to close)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM, fileno=os.dup(sock_fd)) as s:
        socket.send_fds(s, [MARKER], fds)


def receive_marker(sock_fd: int) -> list[int] | None:
    """The descriptors sent with the next call's marker, or None when the parent has closed the socket."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM, fileno=os.dup(sock_fd)) as s:
        data, fds, _flags, _addr = socket.recv_fds(s, 1, MAX_FDS)
    if data != MARKER:
        close(fds)
        return None
    return fds


def join(args: tuple, fds: list[int]) -> tuple:
    """The call's arguments with each Shared placeholder read back from its memory file (one read each)."""
    try:
        return tuple(_read(fds[a.index], a.size) if isinstance(a, Shared) else a for a in args)
    finally:
        close(fds)


def _read(fd: int, size: int) -> bytes:
    data = os.pread(fd, size, 0)
    if len(data) != size:  # a sealed file cannot shrink: only a broken parent sends a short one
        raise OSError(f"a call's memory file holds {len(data)} bytes, {size} were sent")
    return data


def close(fds: list[int]) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


def send_call(conn: Connection, message: tuple) -> None:
    """Send the call (fn, args, *rest): the marker with the memory files of args' large bytes, then the pickle.
    Our descriptors are closed once sent, whatever the worker does with its copies."""
    args, fds = split(message[1])
    try:
        send_marker(conn.fileno(), fds)
        conn.send((message[0], args, *message[2:]))
    finally:
        close(fds)


def receive_call(conn: Connection) -> tuple | None:
    """The next call (fn, args, *rest) with its large arguments read back, or None when the parent has gone."""
    fds = receive_marker(conn.fileno())
    if fds is None:
        return None
    try:
        message = conn.recv()
    except BaseException:
        close(fds)
        raise
    return (message[0], join(message[1], fds), *message[2:])
