"""What the sandbox costs (docs/isolation.md): request latency with native code in the child pool (as served)
and in-process (the way it ran before issue 23), interleaved in one run, through the ASGI app.

Cases, each a request whose handler reaches native code on the upload, plus an anchor that reaches none:
- translate-spec: POST /v1/translate of a compact spec (no native code: the anchor, same in both modes);
- translate-model: a model-form spec whose Clip input type needs onnx shape inference;
- inspect: POST /v1/models/inspect of a model whose Clip input needs shape inference;
- rewrite: POST /v1/models/rewrite of an opset-6 model to opset 13 (checker, converter, checker).
Prints the median milliseconds per mode and the ratio pooled/in-process. Run: python bench/isolation.py
[--rounds 40]. The pool is warmed first: the first call after start-up is not what a request pays.
"""

from __future__ import annotations

import argparse
import base64
import dataclasses
import os
import statistics
import time

from fastapi.testclient import TestClient
from onnx import TensorProto, helper

from clipbridge.engines import native
from clipbridge.main import create_app
from clipbridge.core.settings import Settings

OCTET = {"content-type": "application/octet-stream"}


def _model(opset: int, clip_attrs: bool, y_shape: list[int] | None = None) -> bytes:
    """x -> MatMul -> Clip -> y with no value_info for the MatMul output: the Clip's type needs inference."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)  # no shape: the scan asks inference
    if clip_attrs:
        clip = helper.make_node("Clip", ["r"], ["y"], min=0.0, max=6.0, name="clip")
        inits = []
    else:
        clip = helper.make_node("Clip", ["r", "lo", "hi"], ["y"], name="clip")
        inits = [helper.make_tensor("lo", TensorProto.FLOAT, [], [0.0]),
                 helper.make_tensor("hi", TensorProto.FLOAT, [], [6.0])]
    w = helper.make_tensor("w", TensorProto.FLOAT, [64, 64], [0.5] * 64 * 64)
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["r"]), clip], "g", [x], [y], inits + [w])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]).SerializeToString()


def cases(client: TestClient):
    m13, m6 = _model(13, False), _model(6, True, [1, 64])
    b64 = base64.b64encode(m13).decode()
    return {
        "translate-spec": lambda: client.post("/v1/translate", json={
            "source": {"dialect": "onnx", "opset": 13, "elem_type": "float", "min": 0, "max": 6},
            "targets": ["openvino", "directml"]}),
        "translate-model": lambda: client.post("/v1/translate", json={
            "source": {"dialect": "onnx", "model": b64}, "targets": ["openvino", "directml"]}),
        "inspect": lambda: client.post("/v1/models/inspect", content=m13, headers=OCTET),
        "rewrite": lambda: client.post("/v1/models/rewrite", content=m6, headers=OCTET,
                                       params={"target": "directml:5_0", "opset": 13}),
    }


def in_process(stage, fn, /, *args, timeout_s=None, memory_mb=None, **kwargs):
    """The pre-sandbox path: the native call in the server process."""
    return fn(*args, **kwargs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=40)
    args = ap.parse_args()
    pooled = native.run_isolated
    settings = dataclasses.replace(Settings.from_env(), memo_bytes=0)  # no memo: every request does the work
    with TestClient(create_app(settings)) as client:
        todo = cases(client)
        for call in todo.values():  # warm both paths (imports, pool start, memo) before timing
            for mode in (pooled, in_process):
                native.run_isolated = mode
                assert call().status_code == 200
        times: dict[tuple[str, str], list[float]] = {}
        for _ in range(args.rounds):
            for name, call in todo.items():
                for label, mode in (("pool", pooled), ("in-process", in_process)):
                    native.run_isolated = mode
                    t = time.perf_counter()
                    r = call()
                    times.setdefault((name, label), []).append(time.perf_counter() - t)
                    assert r.status_code == 200, r.text[:200]
        native.run_isolated = pooled
    print(f"load average {os.getloadavg()[0]:.1f}; median ms over {args.rounds} interleaved rounds")
    for name in todo:
        a = statistics.median(times[(name, "pool")]) * 1e3
        b = statistics.median(times[(name, "in-process")]) * 1e3
        print(f"{name:16s} pool {a:8.2f}  in-process {b:8.2f}  ratio {a / b:5.2f}x  (+{a - b:.2f} ms)")


if __name__ == "__main__":
    main()
