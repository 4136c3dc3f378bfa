"""The ONNX backend node tests for Clip (shipped in the onnx wheel), evaluated through clipbridge.

Every `test_clip*` case of onnx.backend.test.case.node: the model is read by clipbridge's ONNX dialect
(parse_model), its bounds (graph inputs there, so run-time values) are supplied from the case's input arrays
in a compact OnnxSpec, the spec is resolved to a Meaning and evaluated on the case's input, and the result must
equal the expected output exactly (same dtype, NaN == NaN). `*_expanded` cases carry the function-expanded graph
(Less/Where/Identity, no Clip node): clipbridge is checked to refuse them as "no Clip node", and their data is
evaluated through the non-expanded counterpart's model.
"""

from __future__ import annotations

import base64
import functools
import warnings

import numpy as np
import onnx
import pytest

from clipbridge.dialects.onnx.dtypes import BY_ONNX_NAME
from clipbridge.dialects.onnx.meaning import resolve
from clipbridge.dialects.onnx.model import parse_model
from clipbridge.dialects.onnx.versions import CLIP_VERSIONS
from clipbridge.core.errors import ArtifactError
from clipbridge.core.evaluate import evaluate
from clipbridge.core.meaning import same_outputs
from clipbridge.dialects.onnx.spec import OnnxSpec


@functools.lru_cache(maxsize=1)
def clip_cases() -> dict:
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # other operators' generators overflow on purpose
        cases = collect_testcases("Clip")
    return {c.name: c for c in cases if c.name.startswith("test_clip")}


PLAIN = sorted(n for n in clip_cases() if not n.endswith("_expanded"))
EXPANDED = sorted(n for n in clip_cases() if n.endswith("_expanded"))


def test_the_wheel_ships_the_clip_cases() -> None:
    """onnx 1.23 ships 12 Clip cases, each with its _expanded twin (min > max among them)."""
    assert len(PLAIN) >= 12 and "test_clip_min_greater_than_max" in PLAIN
    assert {n[: -len("_expanded")] for n in EXPANDED} <= set(PLAIN)


def _b64(model: onnx.ModelProto) -> str:
    return base64.b64encode(model.SerializeToString()).decode()


def _spec_and_input(case, model: onnx.ModelProto | None = None) -> tuple[OnnxSpec, np.ndarray, np.ndarray]:
    """Parse the (Clip) model with clipbridge; its dynamic bounds get the case's input values."""
    model = model if model is not None else case.model
    parsed = parse_model(_b64(model), None)
    clip = next(n for n in model.graph.node if n.op_type == "Clip")
    inputs, outputs = case.data_sets[0]
    by_name = {vi.name: arr for vi, arr in zip(model.graph.input, inputs)}
    bounds = {}
    for pos, side in ((1, "min"), (2, "max")):
        name = clip.input[pos] if len(clip.input) > pos else ""
        bounds[side] = None
        if name:
            assert side in parsed.dynamic, f"{side} is a graph input, so clipbridge must call it dynamic"
            bounds[side] = BY_ONNX_NAME[parsed.spec.elem_type].to_python(by_name[name].reshape(())[()])
    assert set(parsed.dynamic) == {s for s, v in bounds.items() if v is not None}
    assert parsed.spec.opset == model.opset_import[0].version
    spec = OnnxSpec(dialect="onnx", opset=parsed.spec.opset, elem_type=parsed.spec.elem_type,
                    min=bounds["min"], max=bounds["max"])
    x = by_name[clip.input[0]]
    return spec, x, outputs[0]


@pytest.mark.parametrize("name", PLAIN)
def test_clip_backend_case(name: str) -> None:
    case = clip_cases()[name]
    spec, x, expected = _spec_and_input(case)
    meaning = resolve(spec)
    assert meaning.dtype.np_dtype == x.dtype
    got = evaluate(meaning, x)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    ok = same_outputs(got, expected)
    assert ok.all(), f"{meaning.describe()}: first differences at {np.argwhere(~ok)[:5].tolist()}"
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("name", EXPANDED)
def test_clip_backend_case_expanded(name: str) -> None:
    """The expanded graph has no Clip node: clipbridge says so; its data matches the Clip counterpart's."""
    case = clip_cases()[name]
    assert not any(n.op_type == "Clip" for n in case.model.graph.node)
    with pytest.raises(ArtifactError, match="no Clip node"):
        parse_model(_b64(case.model), None)
    base = clip_cases()[name[: -len("_expanded")]]
    assert [i.name for i in case.model.graph.input] == [i.name for i in base.model.graph.input]
    spec, x, expected = _spec_and_input(case, base.model)  # the expanded case's data, the Clip model's node
    got = evaluate(resolve(spec), x)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


def test_registered_clip_versions_match_onnx_schemas() -> None:
    shipped = {s.since_version for s in onnx.defs.get_all_schemas_with_history() if s.name == "Clip"}
    assert {s.since for s in CLIP_VERSIONS} == shipped
