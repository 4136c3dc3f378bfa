"""app/diff/plain.py: the plain runs beside the marked ones give the same diff as every run one after the other (the oracle: the same diff through an executor that may not
be called from two threads), and a failure is raised as it was when the runs were serial."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from app.core.errors import ClipBridgeError
from app.diff import engines, plain, report, run
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


@pytest.mark.parametrize("make", MODELS.values(), ids=MODELS.keys())
def test_threads_give_the_serial_diff(make):
    model = make()
    threaded, _ = report.diff(run.direct, model, None, run.Options())
    alone, _ = report.diff(serial, model, None, run.Options())
    assert threaded == alone


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
