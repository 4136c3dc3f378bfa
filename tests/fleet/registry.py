"""A generated model registry for the fleet tests and bench/fleet.py: five kinds of small ONNX models, each
copy made distinct by its scale constant (so every model has its own sha256).

clean: Mul -> Add (no clip-like op); nan: Mul -> Clip(0, 6) (the generated inputs carry NaN, which the engines'
clip kernels treat differently); minmax: Clip with min > max; float16: a float16 Clip with a bound beyond
float16's range; subgraph: an If whose branches hold a Clip."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

KINDS = ("clean", "nan", "minmax", "float16", "subgraph")
IR = 8


def _const(name: str, value: float, dtype: type = np.float32) -> onnx.TensorProto:
    with np.errstate(over="ignore"):  # the float16 kind's bound overflows on purpose (to inf)
        return numpy_helper.from_array(np.array(value, dtype=dtype), name)


def _model(nodes: list, inits: list, elem: int = TensorProto.FLOAT, shape: tuple = (16,)) -> bytes:
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", elem, list(shape))],
                          [helper.make_tensor_value_info("y", elem, list(shape))], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=IR)
    onnx.checker.check_model(m)
    return m.SerializeToString()


def clean(scale: float) -> bytes:
    return _model([helper.make_node("Mul", ["x", "s"], ["a"], name="scale"),
                   helper.make_node("Add", ["a", "s"], ["y"], name="shift")], [_const("s", scale)])


def _clip(scale: float, lo: float, hi: float, dtype: type = np.float32, elem: int = TensorProto.FLOAT) -> bytes:
    return _model([helper.make_node("Mul", ["x", "s"], ["a"], name="scale"),
                   helper.make_node("Clip", ["a", "lo", "hi"], ["y"], name="clip_1")],
                  [_const("s", scale, dtype), _const("lo", lo, dtype), _const("hi", hi, dtype)], elem)


def nan(scale: float) -> bytes:
    return _clip(scale, 0.0, 6.0)


def minmax(scale: float) -> bytes:
    return _clip(scale, 6.0, 0.0)


def float16(scale: float) -> bytes:
    """A float16 Clip whose upper bound was written as 1e5 (float16's largest finite value is 65504)."""
    return _clip(scale, -1.0e5, 1.0e5, np.float16, TensorProto.FLOAT16)


def subgraph(scale: float) -> bytes:
    """If(cond) with a Clip(0, 6) in the then-branch and a Relu in the else-branch."""
    out = helper.make_tensor_value_info("b", TensorProto.FLOAT, [16])
    then = helper.make_graph([helper.make_node("Clip", ["a", "lo", "hi"], ["b"], name="clip_then")], "then", [],
                             [out])
    other = helper.make_graph([helper.make_node("Relu", ["a"], ["b"], name="relu_else")], "else", [],
                              [helper.make_tensor_value_info("b", TensorProto.FLOAT, [16])])
    return _model([helper.make_node("Mul", ["x", "s"], ["a"], name="scale"),
                   helper.make_node("If", ["cond"], ["y"], name="branch", then_branch=then, else_branch=other)],
                  [_const("s", scale), _const("lo", 0.0), _const("hi", 6.0),
                   numpy_helper.from_array(np.array(True), "cond")])


BUILDERS = {"clean": clean, "nan": nan, "minmax": minmax, "float16": float16, "subgraph": subgraph}


def write(root: Path, count: int) -> list[Path]:
    """`count` models under root/KIND/, kinds in turn, each with its own scale (1 + i/1000)."""
    paths = []
    for i in range(count):
        kind = KINDS[i % len(KINDS)]
        path = root / kind / f"{kind}_{i:04d}.onnx"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(BUILDERS[kind](1.0 + i / 1000))
        paths.append(path)
    return paths
