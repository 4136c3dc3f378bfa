"""The fix's proof checked once more by the independent oracle (tests/engines_direct.py): the original model on
the reference engine and the written model on the target, each run directly through the engine's own API on the
same inputs, compared without clipbridge. The oracle agrees exactly where the proof says `equal`, and for every
hand-built model the fix is documented to prove (docs/diff.md, Proven on) it agrees."""

from __future__ import annotations

import io

import numpy as np
import onnx
import pytest

from clipbridge.diff.run import direct
from clipbridge.fix.service import fix
from tests import engines_direct
from tests.fix import chains, models

pytest.importorskip("onnxruntime")
pytest.importorskip("openvino")
pytestmark = pytest.mark.engines

PAIRS = [pytest.param(("onnxruntime", "openvino"), id="ort->ov"), pytest.param(("openvino", "onnxruntime"), id="ov->ort")]
# NaN, both infinities, both zeros, values below, between and above every bound the models use.
SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, -7.0, -1.0, -0.5, 0.5, 1.0, 2.0, 3.0, 5.999, 6.0, 6.5, 1e4]


def _feeds(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    inp = model.graph.input[0]
    dtype = onnx.helper.tensor_dtype_to_np_dtype(inp.type.tensor_type.elem_type)
    shape = [d.dim_value for d in inp.type.tensor_type.shape.dim]
    x = np.random.default_rng(11).uniform(-8, 8, size=shape)
    x.reshape(-1)[: len(SPECIAL)] = SPECIAL
    return {inp.name: x.astype(dtype)}


def _npz(feeds: dict[str, np.ndarray]) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **feeds)
    return buf.getvalue()


def _check(model: onnx.ModelProto, pair: tuple[str, str]) -> tuple[bool, str]:
    """(the oracle's agreement, the proof's verdict) for the fix of `model` from pair[0] to pair[1]."""
    data, feeds = model.SerializeToString(), _feeds(model)
    out = fix(data, _npz(feeds), pair[0], pair[1], "model", rounds=1, execute=direct)
    reference = engines_direct.run(pair[0], data, feeds)
    target = engines_direct.run(pair[1], out.model, feeds)
    return engines_direct.agree(reference, target), out.body["proof"]["verdict"]


@pytest.mark.parametrize("pair", PAIRS)
@pytest.mark.parametrize("case", list(models.CASES), ids=list(models.CASES))
def test_the_written_model_computes_the_reference_on_the_engines_themselves(case, pair):
    agrees, proof = _check(models.CASES[case](), pair)
    assert agrees and proof == "equal", (agrees, proof)


CHAINS = [
    pytest.param([("max", -1.0, True), ("neg",), ("min", 2.0, True)], id="max-first,neg,min-first"),
    pytest.param([("min", 2.0, False), ("max", -1.0, True), ("clip",)], id="min,max-first,clip"),
    pytest.param([("max", -1.0, True), ("min", 2.0, True)], id="fused-pair(known gap)"),
    pytest.param([("clip",), ("min", 2.0, True), ("max", -1.0, True)], id="clip,fused-pair(known gap)"),
    pytest.param([("max", -1.0, True), ("min", 2.0, True), ("clip",)], id="fused-pair(known gap),clip"),
]


@pytest.mark.parametrize("pair", PAIRS)
@pytest.mark.parametrize("ops", CHAINS)
def test_the_proof_says_equal_exactly_where_the_engines_agree(ops, pair):
    """Also on the known gap (docs/testing.md), where the proof differs: so does the oracle, the proof is honest."""
    agrees, proof = _check(chains.chain(ops, shape=(4, 4)), pair)
    assert agrees == (proof == "equal"), (agrees, proof)
