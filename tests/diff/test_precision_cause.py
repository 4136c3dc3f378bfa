"""Precision as a cause at any node: a non-clip node (a Conv) whose inputs agree and whose output differs, on an
engine that reports a narrower precision than the model's, is `inference-precision` with both precisions named,
and the verdict is `explained`. This host's CPU may have no bf16 (then OpenVINO runs f32 and nothing differs),
so the narrower run is simulated around the real one: OpenVINO's reported precision and the Conv's output are
replaced by what a bf16 run gives (the Conv's output rounded to bfloat16), never assumed from this CPU."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from clipbridge.diff import engines, report, run
from tests.diff.conftest import npz

pytestmark = pytest.mark.engines


def _conv_relu() -> bytes:
    rng = np.random.default_rng(3)
    w = numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32), "w")
    g = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
                           helper.make_node("Relu", ["c"], ["y"], name="relu")], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 8, 8])], [w])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()


def _as_bf16(execute_run):
    def wrapped(engine, model, feeds, marks, precision="model", *rest, **kw):
        r = execute_run(engine, model, feeds, marks, precision, *rest, **kw)
        if engine == "openvino":
            r["precision"] = "bf16"
            r["kernels"] = {"relu": {"precision": "bf16", "type": "Eltwise", "layers": ["relu"]}}  # conv: folded
            for k in ("c", "y"):
                if k in r["values"]:
                    r["values"][k] = r["values"][k].astype(ml_dtypes.bfloat16).astype(np.float32)
        return r
    return wrapped


def test_a_conv_run_narrower_is_inference_precision(monkeypatch):
    monkeypatch.setattr(engines, "run", _as_bf16(engines.run))
    x = np.random.default_rng(1).standard_normal((1, 3, 8, 8)).astype(np.float32)
    body = report.diff(run.direct, _conv_relu(), npz(x=x), run.Options(precision="deployed"))[0]
    row = next(n for n in body["nodes"] if n["node"] == "conv")
    assert (row["origin"], row["cause"]) == ("introduced", "inference-precision")
    assert "bf16" in row["detail"] and "float32" in row["detail"] and "onnxruntime ran f32" in row["detail"]
    assert body["verdict"] == "explained"
