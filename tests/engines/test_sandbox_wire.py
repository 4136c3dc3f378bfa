"""app/clipbridge/engines/sandbox_wire.py: a call's large bytes reach the worker through a sealed memory file, byte for byte,
with no descriptor left open in the server, whatever happens to the worker."""

from __future__ import annotations

import fcntl
import os
import random

import pytest

from clipbridge.engines import sandbox_wire
from clipbridge.engines.sandbox import SandboxError, run_isolated
from tests import sandbox_tasks as tasks

MIN = sandbox_wire.MIN_SHARED


pytestmark = pytest.mark.usefixtures("small_pool")  # tests/engines/conftest.py


def _bytes(n: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(n)


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


CASES = {
    "one large": lambda: (_bytes(MIN + 7, 1),),
    "large among small": lambda: (1, _bytes(MIN, 2), b"x", "text", _bytes(3 * MIN, 3)),
    "just below the threshold travels in the pickle": lambda: (_bytes(MIN - 1, 4),),
    "more large arguments than descriptors": lambda: tuple(_bytes(MIN, 10 + k) for k in range(sandbox_wire.MAX_FDS + 2)),
    "a bytearray is not shared (the worker gets its own type)": lambda: (bytearray(_bytes(MIN, 5)),),
    "empty": lambda: (b"",),
}


@pytest.mark.parametrize("make", CASES.values(), ids=CASES.keys())
def test_arguments_arrive_byte_for_byte(make):
    args = make()
    assert run_isolated("digest", tasks.digest, *args) == tasks.digest(*args)


def test_split_replaces_only_large_top_level_bytes():
    big = _bytes(MIN, 6)
    args, fds = sandbox_wire.split((big, [big], b"small"))
    try:
        assert args[0] == sandbox_wire.Shared(0, MIN) and args[1] == [big] and args[2] == b"small" and len(fds) == 1
        assert sandbox_wire.join(args, fds) == (big, [big], b"small")
    finally:
        sandbox_wire.close(fds)


def test_memory_file_is_sealed_against_writes():
    args, fds = sandbox_wire.split((_bytes(MIN, 7),))
    try:
        if not hasattr(fcntl, "F_ADD_SEALS"):
            pytest.skip("this platform has no file seals")
        with pytest.raises(PermissionError):
            os.pwrite(fds[0], b"changed", 0)
    finally:
        sandbox_wire.close(fds)


def test_a_short_memory_file_is_refused():
    args, fds = sandbox_wire.split((_bytes(MIN, 8),))
    with pytest.raises(OSError, match="were sent"):
        sandbox_wire.join((sandbox_wire.Shared(0, MIN + 1),), fds)


def test_no_descriptor_is_left_open_in_the_server():
    big = _bytes(2 * MIN, 9)
    run_isolated("digest", tasks.digest, big)
    before = _open_fds()
    for _ in range(20):
        run_isolated("digest", tasks.digest, big, big)
    assert _open_fds() == before


def test_a_worker_that_dies_with_shared_arguments_costs_one_answer():
    big = _bytes(MIN, 11)
    run_isolated("digest", tasks.digest, big)
    before = _open_fds()
    with pytest.raises(SandboxError) as err:
        run_isolated("crash", tasks.digest_then_crash, big)
    assert err.value.reason == "crashed"
    assert run_isolated("digest", tasks.digest, big) == tasks.digest(big)  # the replacement worker
    assert _open_fds() == before


def test_without_memfd_every_argument_travels_in_the_pickle(monkeypatch):
    monkeypatch.delattr(os, "memfd_create")
    big = _bytes(MIN, 12)
    assert sandbox_wire.split((big,)) == ((big,), [])
    assert run_isolated("digest", tasks.digest, big) == tasks.digest(big)


def test_generated_argument_lists(seed: int = 20261126, budget: int = 12):
    """A seeded generator of argument lists around the threshold (a bounded budget): each arrives intact."""
    rng = random.Random(seed)
    for case in range(budget):
        args = tuple(rng.choice([lambda: _bytes(rng.choice([0, 1, MIN - 1, MIN, MIN + 1, 2 * MIN]), rng.random()),
                                 lambda: rng.randint(-5, 5), lambda: "s" * rng.randint(0, 9)])()
                     for _ in range(rng.randint(0, 5)))
        assert run_isolated("digest", tasks.digest, *args) == tasks.digest(*args), f"case {case}"


def _memory_file(data: bytes, pieces: int = 3) -> sandbox_wire.MemoryFile:
    f = sandbox_wire.MemoryFile()
    step = max(1, len(data) // pieces)
    for k in range(0, len(data), step):
        f.write(memoryview(data)[k:k + step])
    return f


MEMORY_FILES = {
    "large, in pieces": (3 * MIN + 5, 7),
    "small (a memory file whatever its size)": (10, 1),
    "one byte": (1, 1),
    "empty": (0, 1),
}


@pytest.mark.parametrize("size, pieces", MEMORY_FILES.values(), ids=MEMORY_FILES.keys())
def test_an_upload_written_into_a_memory_file_arrives_byte_for_byte(size, pieces):
    data = _bytes(size, size)
    f = _memory_file(data, pieces)
    try:
        assert len(f) == size and bytes(f.sealed()) == data  # read here through the mapping, no copy kept
        assert run_isolated("digest", tasks.digest, f, b"small") == tasks.digest(data, b"small")
    finally:
        f.close()


def test_a_memory_file_is_sealed_once_read_and_never_pickled():
    import pickle
    f = _memory_file(_bytes(MIN, 13))
    try:
        view = f.sealed()
        if hasattr(fcntl, "F_ADD_SEALS"):
            with pytest.raises(PermissionError):
                os.write(f.fd, b"changed")  # what this process checked is what the worker reads
        with pytest.raises(TypeError, match="descriptor"):
            pickle.dumps(f)
        view.release()
    finally:
        f.close()


def test_memory_files_leave_no_descriptor_open():
    data = _bytes(2 * MIN, 14)
    run_isolated("digest", tasks.digest, data)
    before = _open_fds()
    for _ in range(10):
        f = _memory_file(data)
        held = f.sealed()  # a view still held at close: the mapping goes with it, the descriptor at once
        run_isolated("digest", tasks.digest, f)
        f.close()
        del held
    assert _open_fds() == before
