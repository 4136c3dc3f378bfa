"""Random JSON bodies built from the API's own field names: every answer is < 500 and problem+json when 4xx."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

KEYS = ["source", "spec", "input", "targets", "mode", "semantics", "backend", "reading", "dialect", "opset",
        "elem_type", "shape", "min", "max", "model", "node", "version", "element_type", "ir_xml", "layer",
        "feature_level", "operator", "desc", "InputTensor", "OutputTensor", "DataType", "Sizes", "Strides",
        "TotalTensorSizeInBytes", "ScaleBias", "Scale", "Bias", "Min", "Max", "MinMaxDataType", "dtype", "data",
        "Flags", "DimensionCount", "GuaranteedBaseOffsetAlignment"]
WORDS = ["onnx", "openvino", "directml", "FLOAT", "FLOAT16", "INT8", "UINT64", "f32", "i8", "bf16", "FLOAT32",
         "INT32", "5_0", "2_1", "ELEMENT_WISE_CLIP", "ELEMENT_WISE_CLIP1", "preserve", "literal", "numpy",
         "onnxruntime", "openvino", "nan", "-inf", "inf", "9223372036854775807", "0x1.8p+1", "float32", "int8",
         "opset13", "current-doc", ""]
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False,
                    allow_infinity=False), st.sampled_from(WORDS), st.text(max_size=8))
JSON = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=5), st.dictionaries(st.sampled_from(KEYS), inner, max_size=6)), max_leaves=25)


@st.composite
def bodies(draw):
    """Mostly well-shaped skeletons with random leaves, sometimes anything at all."""
    dialect = draw(st.sampled_from(["onnx", "openvino", "directml"]))
    spec = draw(st.dictionaries(st.sampled_from(KEYS), JSON, max_size=6))
    spec["dialect"] = dialect
    path = draw(st.sampled_from(["/v1/translate", "/v1/execute", "/v1/compare"]))
    if path == "/v1/translate":
        body = {"source": spec, **draw(st.dictionaries(st.sampled_from(["targets", "mode"]), JSON, max_size=2))}
    else:
        body = {"spec": spec, "input": draw(st.one_of(JSON, st.fixed_dictionaries({
            "dtype": st.sampled_from(["float32", "int8", "uint64", "bfloat16", "x"]),
            "shape": st.lists(st.integers(-2, 4), max_size=3), "data": st.lists(SCALARS, max_size=6)})))}
    if draw(st.integers(0, 9)) == 0:
        body = draw(JSON)
    return path, body


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(case=bodies())
def test_no_5xx_for_random_bodies(client, case):
    path, body = case
    r = client.post(path, content=json.dumps(body).encode(), headers={"content-type": "application/json"})
    assert r.status_code < 500, (path, body, r.text[:500])
    if r.status_code >= 400:
        assert r.headers["content-type"].startswith("application/problem+json")
