"""app/clipbridge/diff/plain.py: the plain runs beside the marked ones give the same diff as every run one after the other (the oracle: the same diff through an executor that may not
be called from two threads), and a failure is raised as it was when the runs were serial."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from clipbridge.core.errors import ClipBridgeError
from clipbridge.diff import engines, plain, report, run
from clipbridge.engines import threads
from tests.diff import models as M
from tests.diff import models_subgraphs as S

pytestmark = pytest.mark.engines


def serial(stage: str, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
    """run.direct without the `concurrent` flag: every run on the calling thread, in order."""
    return fn(*args, **kwargs)


def wide(width: int = 1040) -> bytes:
    """MatMul + Clip(0, 6) with a width x width float32 weight (4 MB: reading the weights is part of each run)."""
    rng = np.random.default_rng(5)
    inits = [numpy_helper.from_array((rng.standard_normal((width, width)) / 32).astype(np.float32), "w"),
             numpy_helper.from_array(np.float32(0), "lo"), numpy_helper.from_array(np.float32(6), "hi")]
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["h"], name="fc"),
                           helper.make_node("Clip", ["h", "lo", "hi"], ["y"], name="relu6")], "wide",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, width])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, width])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()


MODELS = {
    "relu chain (plain runs beside)": M.relu_chain,
    "mobilenet_v2 (plain runs beside)": lambda: M.mobilenet_v2(32),
    "clip inside an If (walked bodies)": S.if_clip,
    "clip inside a Loop (walked bodies)": S.loop_clip,
    "wide MatMul (4 MB of weights)": wide,
}


@pytest.fixture
def split_threads():
    """The serial oracle's engines on the thread count each side of a threaded diff gets (plain.side_threads),
    set for the process: then the two bodies, engine settings included, can be compared whole."""
    threads.set_engine_threads(plain.side_threads(run.direct))
    try:
        yield
    finally:
        threads.set_engine_threads(None)


@pytest.mark.parametrize("make", MODELS.values(), ids=MODELS.keys())
def test_threads_give_the_serial_diff(make, split_threads):
    model = make()
    alone, _ = report.diff(serial, model, None, run.Options())
    threads.set_engine_threads(None)  # the threaded diff scopes its own count
    threaded, _ = report.diff(run.direct, model, None, run.Options())
    assert threaded == alone


def _without_settings(body: dict) -> dict:
    return {**body, "engines": [{k: v for k, v in e.items() if k != "settings"} for e in body["engines"]]}


@pytest.mark.parametrize("make", MODELS.values(), ids=MODELS.keys())
def test_the_split_threads_give_the_defaults_answer(make):
    """Each side on half the cores gives what the engines' defaults give, but the settings that say so."""
    model = make()
    threaded, _ = report.diff(run.direct, model, None, run.Options())
    defaults, _ = report.diff(serial, model, None, run.Options())
    assert _without_settings(threaded) == _without_settings(defaults)
    n = plain.side_threads(run.direct)
    ort, ov = (e["settings"] for e in threaded["engines"])
    assert ort["intra_op_num_threads"] == n and ov["inference_num_threads"] == n and ov["cpu_pinning"] is False
    assert defaults["engines"][0]["settings"]["intra_op_num_threads"] == 0  # onnxruntime's own default


def test_side_threads_split_the_cores_only_for_a_concurrent_executor():
    assert plain.side_threads(serial) is None and plain.side_threads(run.serial) is None
    assert plain.side_threads(run.direct) == max(1, len(os.sched_getaffinity(0)) // 2)


def test_only_a_concurrent_executor_gets_threads():
    assert run.concurrent(run.direct) and not run.concurrent(serial) and not run.concurrent(run.serial)
    assert plain.Plain(run.direct, b"", {}, ("onnxruntime",), "model").pool is not None
    assert plain.Plain(run.serial, b"", {}, ("onnxruntime",), "model").pool is None


class Refused(ClipBridgeError):
    pass


@pytest.mark.parametrize("execute", [run.direct, serial], ids=["threads", "serial"])
def test_a_plain_runs_failure_is_raised_before_its_marked_runs(execute, monkeypatch):
    """Both runs fail: the plain run's error is the one raised (the model's fault, not the marks')."""
    def failing(engine: str, model: bytes, feeds: dict, marks: list, precision: str = "model",
                kernels: bool = True) -> dict:
        raise Refused(f"{'plain' if kernels is False else 'marked'} run refused", "model")
    monkeypatch.setattr(engines, "run", failing)
    with pytest.raises(Refused, match="plain run refused"):
        report.diff(execute, M.relu_chain(), None, run.Options())
