"""The whole-model oracle itself (tests/engines_direct.py): it imports no clipbridge code, its comparison says
what it claims, and each engine it drives computes a model whose answer NumPy knows."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

from tests import engines_direct

pytest.importorskip("onnxruntime")
pytest.importorskip("openvino")


def test_the_oracle_imports_no_clipbridge_code():
    tree = ast.parse(Path(engines_direct.__file__).read_text())
    names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert names and not [n for n in names if n.split(".")[0] in ("clipbridge", "app", "tests")], names


F = np.float32
PAIRS = [
    pytest.param([np.array([np.nan, 1], F)], [np.array([np.nan, 1], F)], True, id="NaN-equals-NaN"),
    pytest.param([np.array([np.nan], F)], [np.array([0], F)], False, id="NaN-is-not-0"),
    pytest.param([np.array([np.inf], F)], [np.array([-np.inf], F)], False, id="inf-sign"),
    pytest.param([np.array([np.inf], F)], [np.array([3.4e38], F)], False, id="inf-is-not-finite"),
    pytest.param([np.array([1.0], F)], [np.array([1.0 + 1e-6], F)], True, id="within-tolerance"),
    pytest.param([np.array([1.0], F)], [np.array([1.01], F)], False, id="beyond-tolerance"),
    pytest.param([np.array([1.0], F)], [np.array([1.0], np.float64)], False, id="dtype"),
    pytest.param([np.array([1.0], F)], [np.array([[1.0]], F)], False, id="shape"),
    pytest.param([np.array([1], np.int32)], [np.array([2], np.int32)], False, id="integers-exact"),
    pytest.param([np.array([1.0], F)], [], False, id="output-count"),
]


@pytest.mark.parametrize(("a", "b", "same"), PAIRS)
def test_agree(a, b, same):
    assert engines_direct.agree(a, b) is same


@pytest.mark.parametrize("engine", list(engines_direct.RUNNERS))
def test_each_engine_computes_a_known_answer(engine):
    g = helper.make_graph([helper.make_node("Mul", ["x", "two"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
                          [helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8).SerializeToString()
    x = np.array([1.5, -np.inf, np.nan, 3e38], F)
    with np.errstate(over="ignore"):
        assert engines_direct.agree(engines_direct.run(engine, model, {"x": x}), [x * F(2)])
