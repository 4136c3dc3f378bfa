"""Issue 34: a sandbox worker finds nothing of the server's files, and an engine's text reaches a client only
reduced (app/clipbridge/engines/sandbox.py, app/clipbridge/engines/errors.py)."""

from __future__ import annotations

import os
import stat

import numpy as np
import pytest

from clipbridge.core.settings import Settings
from clipbridge.diff import engines as diff_engines
from clipbridge.engines import sandbox
from clipbridge.engines.errors import kind_of, reduce
from clipbridge.engines.sandbox import run_isolated
from tests.hostile.places import external_model

CANARY = b"CANARY34" + bytes(range(100, 130))


@pytest.fixture(scope="module", autouse=True)
def small_pool():
    pool = sandbox.configure(Settings(sandbox_workers=1, sandbox_timeout_seconds=20))
    yield pool
    pool.close()


@pytest.fixture
def server_dir(tmp_path, monkeypatch):
    (tmp_path / "canary.bin").write_bytes(CANARY)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_worker_starts_in_an_empty_private_directory(server_dir):
    sandbox.pool().close()  # a worker started now, while the server sits next to the canary
    cwd = run_isolated("cwd", os.getcwd)
    assert os.path.realpath(cwd) != os.path.realpath(server_dir)
    assert run_isolated("ls", os.listdir, ".") == []
    assert stat.S_IMODE(os.stat(cwd).st_mode) == 0o700


@pytest.mark.parametrize("engine,place", [
    pytest.param("onnxruntime", "initializer", id="onnxruntime-initializer"),
    pytest.param("openvino", "initializer", id="openvino-initializer"),
    pytest.param("onnx-reference", "constant", id="reference-constant"),
    pytest.param("onnxruntime", "if-initializer", id="onnxruntime-if-branch"),
])
def test_an_engine_behind_the_guard_resolves_nothing_of_the_servers(server_dir, engine, place):
    """Past the route's guard (called directly here), a relative location still finds no file: the worker's
    directory is empty, so the engine fails, and its reduced text names no byte of anything."""
    model = external_model(place, "canary.bin")
    with pytest.raises(Exception) as info:
        run_isolated(f"diff:{engine}", diff_engines.run, engine, model, {"x": np.zeros(4, np.float32)}, [])
    text = str(info.value)
    assert "CANARY" not in text and "67,65,78" not in text and "server log" in text, text


AUDIT_TEXT = ("[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Non-zero status code returned while running Reshape node. "
              "Name:'r' Status Message: requested shape:{67,65,78,65,82,89,51,52}")


@pytest.mark.parametrize("text,nodes,ops,want,never", [
    pytest.param(AUDIT_TEXT, {"r"}, {"Reshape"}, "shape mismatch, op Reshape, node 'r'", "67,65", id="audit-reshape"),
    pytest.param(AUDIT_TEXT, set(), set(), "shape mismatch (", "requested", id="names-not-the-models"),
    pytest.param("External data offset 0 exceeds file size (4522)", set(), set(), "engine failure", "4522",
                 id="file-size"),
    pytest.param("Fatal error: custom.x:Foo(-1) is not a registered function/op", set(), {"custom.x:Foo"},
                 "unsupported operator, op custom.x:Foo", "Fatal", id="unregistered-op"),
    pytest.param("std::bad_alloc", set(), set(), "out of memory", "std::", id="bad-alloc"),
])
def test_engine_text_is_reduced(text, nodes, ops, want, never):
    public, full = reduce("onnxruntime", "failed running the model", RuntimeError(text), nodes, ops)
    assert want in public and never not in public, public
    assert text in full


def test_kinds_are_a_fixed_vocabulary():
    assert kind_of("") == "engine failure"
    assert kind_of("Invalid rank for input") == "shape mismatch"


def test_the_diff_route_answers_the_reduced_text_and_logs_the_full_one(caplog):
    """The audit's side channel, with the 'file' inline: Reshape(x, W) fails on onnxruntime printing W's values.
    The client gets the kind, op and node; the server log has the engine's text under the request id."""
    import logging

    from fastapi.testclient import TestClient
    from onnx import TensorProto, helper

    from clipbridge.main import create_app
    w = [67, 65, 78, 65, 82, 89, 51, 52]  # "CANARY34" as int64 values
    g = helper.make_graph([helper.make_node("Reshape", ["x", "w"], ["y"], name="r")], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])],
                          [helper.make_tensor("w", TensorProto.INT64, [8], w)])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()
    with TestClient(create_app(Settings(sandbox_workers=1)), raise_server_exceptions=False) as c, \
            caplog.at_level(logging.WARNING, logger="clipbridge.engines"):
        r = c.post("/v1/models/diff", files={"model": ("m.onnx", model)}, headers={"x-request-id": "req-34-reduced"})
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    assert "op Reshape" in detail and "node 'r'" in detail and "server log" in detail, detail
    assert "67" not in detail and "65,78" not in detail, detail
    logged = [rec.getMessage() for rec in caplog.records if "req-34-reduced" in rec.getMessage()]
    assert logged and any("67" in m for m in logged), caplog.text[-2000:]
