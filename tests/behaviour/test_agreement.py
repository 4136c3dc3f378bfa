"""Scan and diff agree on every engine reading (issue 45 item 1): for each clip-like node of the project's example
models, what the scan says each engine gives for a NaN input (clipbridge.scan.patterns, read from the behaviour
table) is what the diff measures on the engines. A node the scan says the engines compute differently for NaN is
a `nan-input` node of the diff, its witness the values the scan names; a node the scan says they agree on is no
node the diff finds a NaN difference introduced at. A node whose input already differs between the engines (below
a node the diff lists) is no witness of its own reading and is left out."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import onnx
import pytest

from clipbridge.diff import report, run
from clipbridge.scan.patterns import ClipLike, find, nan_value
from clipbridge.scan.report import scan
from tests.diff import models as M
from tests.fix import models as F

pytest.importorskip("onnxruntime")
pytest.importorskip("openvino")
pytestmark = pytest.mark.engines

ROOT = Path(__file__).resolve().parents[2]
ENGINES = ("onnxruntime", "openvino")
MODELS = {
    "docs-example": lambda: (ROOT / "docs" / "example.onnx").read_bytes(),
    "docs-relu6": lambda: (ROOT / "docs" / "relu6.onnx").read_bytes(),
    "tests-relu-chain": M.relu_chain,
    "tests-hardsigmoid-chain": M.hardsigmoid_chain,
    "tests-clip-chain": M.clip_chain,
    "tests-clip-chain-open-max": lambda: M.clip_chain(0.0, None),
    **{f"tests-fix-{k}": (lambda k=k: F.CASES[k]().SerializeToString()) for k in F.CASES},
}


def _scanned(model: onnx.ModelProto) -> dict[str, ClipLike]:
    """The scan's clip-like nodes by the diff's full path: the main graph's, and each If branch's (its outer
    constants visible), as `gate/then_branch/relu6_then`."""
    out = dict(find(model))
    for n in model.graph.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                m = onnx.ModelProto()
                m.CopyFrom(model)
                m.graph.CopyFrom(a.g)
                m.graph.initializer.extend(model.graph.initializer)
                out.update({f"{n.name}/{a.name}/{k}": c for k, c in find(m).items()})
    return out


def _dtypes(model: onnx.ModelProto) -> dict[str, np.dtype]:
    inferred = onnx.shape_inference.infer_shapes(model)
    vis = [*inferred.graph.input, *inferred.graph.value_info, *inferred.graph.output]
    return {v.name: np.dtype(onnx.helper.tensor_dtype_to_np_dtype(v.type.tensor_type.elem_type)) for v in vis}


def _said(data: bytes) -> dict[tuple[str, str], str]:
    """(node, engine) -> the reading the scan's report gives: engine_readings of its clips, nan_input of its
    clip-like ops."""
    body = scan(data).to_json()
    out = {(r["node"], r["engine"]): r["nan_input"] for c in body["clips"] for r in c["engine_readings"]}
    out.update({(c["node"], e): v for c in body["clip_like"] for e, v in c["nan_input"].items()})
    return out


def _value(reading: str, c: ClipLike, dtype: np.dtype) -> float:
    """A reading as the value it names, for this node's bounds (NaN for propagate), in the tensor's type."""
    lowest, highest = float(np.finfo(dtype).min), float(np.finfo(dtype).max)
    lo = lowest if c.lo is None or "min" in c.omitted else c.lo
    hi = highest if c.hi is None or "max" in c.omitted else c.hi
    v = {"lower": lo, "upper": hi, "zero": 0.0, "one": 1.0}.get(reading, math.nan)
    with np.errstate(over="ignore"):
        return float(dtype.type(v))


def _claim(c: ClipLike, engine: str, dtype: np.dtype, said: dict[tuple[str, str], str]) -> float:
    """The scan's reading for `engine` at c: its report's where it lists the node, else (a node inside an If
    branch, which the report gives no readings for) the pattern's, as the diff's nan-input cause reads it."""
    if (c.node, engine) in said:
        return _value(said[(c.node, engine)], c, dtype)
    lowest, highest = float(np.finfo(dtype).min), float(np.finfo(dtype).max)
    v = nan_value(c, engine, lowest, highest)
    return math.nan if v is None else float(dtype.type(v))


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


def _wire(v: object) -> float:
    return float(v) if not isinstance(v, str) else {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}[v]


@pytest.mark.parametrize("name", sorted(MODELS), ids=sorted(MODELS))
def test_scan_and_diff_agree_on_nan(name):
    data = MODELS[name]()
    model = onnx.load_from_string(data)
    body, _ = report.diff(run.direct, data, None, run.Options(ENGINES, "model", sample="edge"))
    rows = {r["node"]: r for r in body["nodes"] + body["masked"]["nodes"]}
    types, said = _dtypes(model), _said(data)
    producer = {o: n.name or n.output[0] for n in model.graph.node for o in n.output}
    disagree = []
    for path, c in _scanned(model).items():
        dtype = types.get(c.x, np.dtype(np.float32))
        claim = {e: _claim(c, e, dtype, said if "/" not in path else {}) for e in ENGINES}
        differs = not _same(*claim.values())
        r = rows.get(path)
        if producer.get(c.x) in rows or (r is not None and r["witness"]["input"] != "nan"):
            continue  # the engines' inputs already differ here: a NaN on one is a number on the other
        seen = r is not None and r["cause"] == "nan-input"
        if differs != seen:
            disagree.append(f"{path}: scan says {claim}, diff says {r and (r['cause'], r['witness'])}")
        elif seen:  # introduced here, NaN in on every engine: the witness is the scan's reading
            got = {e: _wire(v) for e, v in r["witness"]["outputs"].items()}
            if not all(_same(got[e], claim[e]) for e in ENGINES):
                disagree.append(f"{path}: scan says {claim}, the engines gave {got}")
    assert disagree == []
