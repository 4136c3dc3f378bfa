"""app/clipbridge/engines/sandbox.py: results and exceptions travel back; a crash, a hang or a limit costs one answer, never the
parent, and the broken worker is replaced."""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest

from clipbridge.engines import sandbox
from clipbridge.core.errors import ArtifactError
from clipbridge.engines.sandbox import SandboxError, run_isolated
from clipbridge.core.settings import Settings
from tests import sandbox_tasks as tasks


pytestmark = pytest.mark.usefixtures("small_pool")  # tests/engines/conftest.py


def test_result_and_arguments_round_trip():
    assert run_isolated("echo", tasks.echo, 1, b"\x00", k={"a": [1]}) == ((1, b"\x00"), {"k": {"a": [1]}})
    out = run_isolated("double", tasks.double, np.arange(5, dtype=np.float16))
    assert out.dtype == np.float16 and out.tolist() == [0, 2, 4, 6, 8]


def test_runs_in_another_process_and_reuses_it():
    first = run_isolated("pid", tasks.pid)
    assert first != os.getpid()
    assert run_isolated("pid", tasks.pid) == first  # a warm worker, not one process per call


def test_domain_error_keeps_type_and_loc():
    with pytest.raises(ArtifactError) as info:
        run_isolated("refuse", tasks.refuse, "model.graph")
    assert info.value.loc == "model.graph" and info.value.message == "refused on purpose"


def test_plain_exception_keeps_type():
    with pytest.raises(ValueError, match="plain"):
        run_isolated("plain", tasks.value_error)


@pytest.mark.parametrize("task,sig", [
    pytest.param(tasks.segfault, signal.SIGSEGV, id="segfault"),
    pytest.param(tasks.abort, signal.SIGABRT, id="abort"),
    pytest.param(tasks.exit_quietly, None, id="exit-without-answer"),
])
def test_crash_names_stage_and_signal_and_worker_is_replaced(task, sig):
    before = run_isolated("pid", tasks.pid)
    with pytest.raises(SandboxError) as info:
        run_isolated("test stage", task)
    err = info.value
    assert (err.stage, err.reason, err.signal, err.status) == ("test stage", "crashed", sig, 422)
    assert err.message.startswith("test stage crashed on this model")
    if sig is not None:
        assert f"(signal {int(sig)})" in err.message
    after = run_isolated("pid", tasks.pid)
    assert after != before  # a fresh worker answers the next call


def test_timeout_kills_the_worker():
    before = run_isolated("pid", tasks.pid)
    with pytest.raises(SandboxError) as info:
        run_isolated("sleeper", tasks.hang, 30, timeout_s=0.5)
    err = info.value
    assert (err.reason, err.status, err.retry_after, err.signal) == ("timeout", 503, 1, None)
    assert run_isolated("pid", tasks.pid) != before


def test_memory_limit():
    with pytest.raises(SandboxError) as info:
        run_isolated("hog", tasks.allocate, 512, memory_mb=128)
    assert info.value.reason == "memory" and info.value.status == 422
    assert run_isolated("hog", tasks.allocate, 16, memory_mb=128) == 16 * 2**20  # within the limit: fine


def test_result_size_limit():
    with pytest.raises(SandboxError) as info:
        run_isolated("big", tasks.big_result, 2 << 20)
    assert info.value.reason == "output-too-large"
    assert run_isolated("big", tasks.big_result, 10) == b"x" * 10  # the worker is still good


def test_sandbox_error_round_trips_through_pickle():
    import pickle
    err = SandboxError("onnx version converter", "crashed", 11)
    back = pickle.loads(pickle.dumps(err))
    assert (back.stage, back.reason, back.signal, back.status, back.message) == \
        ("onnx version converter", "crashed", 11, 422, "onnx version converter crashed on this model (signal 11)")


def test_settings_defaults_and_fail_closed(monkeypatch):
    from clipbridge.core.errors import ClipBridgeError
    s = Settings.from_env()
    assert s.sandbox_workers >= 1 and s.sandbox_timeout_seconds < s.max_execution_seconds
    monkeypatch.setenv("CLIPBRIDGE_SANDBOX_MEMORY_MB", "lots")
    with pytest.raises(ClipBridgeError, match="CLIPBRIDGE_SANDBOX_MEMORY_MB"):
        Settings.from_env()
    monkeypatch.setenv("CLIPBRIDGE_SANDBOX_MEMORY_MB", "1")
    with pytest.raises(ClipBridgeError, match="CLIPBRIDGE_SANDBOX_MEMORY_MB"):
        Settings.from_env()


def test_a_result_that_would_run_code_in_the_parent_is_refused():
    """A worker taken over by a hostile model could send any pickle: the parent reads data, never callables."""
    with pytest.raises(SandboxError) as info:
        run_isolated("evil", tasks.evil_result)
    assert info.value.reason == "crashed" and "refused" in info.value.message
    assert run_isolated("echo", tasks.echo, 1) == ((1,), {})  # a fresh worker answers


def test_safe_loads_takes_arrays_and_exceptions():
    import pickle
    import ml_dtypes
    from clipbridge.engines.sandbox_child import safe_loads
    for value in (np.arange(3, dtype=np.float16), np.zeros(2, ml_dtypes.bfloat16), np.float32(1.5),
                  {"a": [1, b"x", (2.5, None)]}, ArtifactError):
        back = safe_loads(pickle.dumps(value, protocol=5))
        assert type(back) is type(value) and (back is value or np.array_equal(np.asarray(back), np.asarray(value))
                                              if not isinstance(value, dict) else back == value)


def test_a_closed_pool_is_replaced_on_next_use():
    old = sandbox.pool()
    old.close()
    assert run_isolated("echo", tasks.echo, 2) == ((2,), {})
    assert sandbox.pool() is not old


def test_an_exception_of_a_loaded_library_type_comes_back_as_itself():
    from google.protobuf.message import DecodeError
    with pytest.raises(DecodeError, match="bad bytes"):
        run_isolated("protobuf", tasks.raise_protobuf_error)
