"""app/clipbridge/scan/wire.py: the lazy protobuf walk. Large tensors become header-only stubs, external data is never
followed, and any malformed input (a cut, a flipped bit, a huge declared size, garbage, deep nesting) is an
ArtifactError, never another exception."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import helper, numpy_helper

from clipbridge.core.errors import ArtifactError, ClipBridgeError
from clipbridge.scan.report import scan
from clipbridge.scan.wire import MAX_DEPTH, STUB_OVER, Malformed, load_light
from tests.scan.models import (F32, IR_FOR_ORT, external_tensor, field, init, model, nested_if_model, relu6_f32,
                               varint, vi)

BIG = 4096  # float32 elements: 16 KiB, far over STUB_OVER


def big_weights_model() -> onnx.ModelProto:
    """Clip bounds (scalars) beside a large initializer, a large Constant node, and an If whose branch holds
    another large initializer; plus a model-local function with a large Constant inside."""
    w = numpy_helper.from_array(np.arange(BIG, dtype=np.float32).reshape(64, 64), "w")
    const_big = helper.make_node("Constant", [], ["cbig"], name="cbig",
                                 value=numpy_helper.from_array(np.ones(BIG, np.float32), "cbig_value"))
    branch_w = numpy_helper.from_array(np.full(BIG, 2, np.float32), "branch_w")
    then_g = helper.make_graph([helper.make_node("Identity", ["x"], ["t"])], "then", [], [vi("t")], [branch_w])
    else_g = helper.make_graph([helper.make_node("Identity", ["x"], ["t"])], "else", [], [vi("t")])
    fconst = helper.make_node("Constant", [], ["fbig"], value=numpy_helper.from_array(np.zeros(BIG, np.float32),
                                                                                     "fbig_value"))
    fn = helper.make_function("local", "f", ["X"], ["Y"], [fconst, helper.make_node("Identity", ["X"], ["Y"])],
                              [helper.make_opsetid("", 13)])
    nodes = [const_big,
             helper.make_node("If", ["cond"], ["t"], name="if", then_branch=then_g, else_branch=else_g),
             helper.make_node("f", ["t"], ["u"], domain="local", name="call"),
             helper.make_node("Clip", ["u", "lo", "hi"], ["y"], name="clip")]
    return model(nodes, [w, init("lo", 0, np.float32), init("hi", 6, np.float32)],
                 inputs=[vi("x"), vi("cond", onnx.TensorProto.BOOL, [])],
                 extra_opsets=[helper.make_opsetid("local", 1)], functions=[fn])


def test_small_model_comes_back_unchanged():
    m = relu6_f32()
    light = load_light(m.SerializeToString())
    assert light.model == m
    assert light.stubbed == set() and light.external == set()


@pytest.mark.parametrize("buffer", [
    pytest.param(bytes, id="bytes"),
    pytest.param(lambda b: memoryview(b), id="memoryview"),
    pytest.param(bytearray, id="bytearray"),
])
def test_buffer_kinds(buffer):
    data = big_weights_model().SerializeToString()
    assert load_light(buffer(data)).model.graph.node[-1].op_type == "Clip"


def test_large_tensors_become_header_only_stubs():
    m = big_weights_model()
    data = m.SerializeToString()
    light = load_light(data)
    lm = light.model
    assert light.stubbed == {"w", "cbig_value", "branch_w", "fbig_value"}
    assert light.external == set()
    w = next(t for t in lm.graph.initializer if t.name == "w")
    assert list(w.dims) == [64, 64] and w.data_type == F32
    assert not w.raw_data and not w.float_data
    # The scalars the clip needs are kept with their values.
    got = {t.name: numpy_helper.to_array(t) for t in lm.graph.initializer if t.name in ("lo", "hi")}
    assert got == {"lo": 0.0, "hi": 6.0}
    # Stubbed in nested places too: a Constant's value, an If branch's initializer, a function's Constant.
    assert not lm.graph.node[0].attribute[0].t.raw_data
    assert list(lm.graph.node[0].attribute[0].t.dims) == [BIG]
    then_g = next(a.g for a in lm.graph.node[1].attribute if a.name == "then_branch")
    assert then_g.initializer[0].name == "branch_w" and not then_g.initializer[0].raw_data
    assert not lm.functions[0].node[0].attribute[0].t.raw_data
    # Everything but the tensor data survives: the light model is much smaller, same structure otherwise.
    assert len(lm.SerializeToString()) < len(data) // 10
    full = onnx.load_from_string(data)
    for g in (full.graph, lm.graph):
        for t in g.initializer:
            t.ClearField("raw_data")
        g.node[0].attribute[0].t.ClearField("raw_data")
        next(a.g for a in g.node[1].attribute if a.name == "then_branch").initializer[0].ClearField("raw_data")
    full.functions[0].node[0].attribute[0].t.ClearField("raw_data")
    lm.functions[0].node[0].attribute[0].t.ClearField("raw_data")
    for g in (full.graph, lm.graph):
        for t in g.initializer:
            t.ClearField("float_data")
    assert lm.graph == full.graph and lm.functions == full.functions


def test_scan_of_a_stubbed_model_finds_the_clip_and_counts_what_it_did_not_read():
    body = scan(big_weights_model().SerializeToString(), targets=["onnx"]).to_json()
    assert body["model"]["tensors_not_read"] == 4
    (clip,) = body["clips"]
    assert clip["error"] is None and clip["dtype"] == "float32"
    assert clip["spec"]["min"] == 0.0 and clip["spec"]["max"] == 6.0


def test_a_large_bound_is_not_read_and_says_so():
    """A bound big enough to be stubbed (not a scalar, so not a valid Clip bound anyway) is never decoded."""
    m = model([helper.make_node("Clip", ["x", "lo"], ["y"], name="clip")],
              [init("lo", np.zeros(BIG), np.float32)])
    light = load_light(m.SerializeToString())
    assert light.stubbed == {"lo"}
    (clip,) = scan(m.SerializeToString(), targets=["onnx"]).to_json()["clips"]
    assert [f["code"] for f in clip["findings"]] == ["dynamic-bounds"]
    assert "large tensor whose values the scan does not read" in clip["findings"][0]["message"]


def _external_model(location: str) -> onnx.ModelProto:
    return model([helper.make_node("Clip", ["x", "lo", "hi"], ["y"], name="clip")],
                 [external_tensor("lo", location), external_tensor("big", location, dims=[BIG]),
                  init("hi", 6, np.float32)])


@pytest.mark.parametrize("location", [
    pytest.param("weights.bin", id="plain-name"),
    pytest.param("sub/dir/w.bin", id="subdirectory"),
])
def test_external_data_is_recorded_never_followed(location):
    light = load_light(_external_model(location).SerializeToString())
    assert light.external == {"lo", "big"}
    lo = next(t for t in light.model.graph.initializer if t.name == "lo")
    assert lo.data_location == onnx.TensorProto.EXTERNAL and not lo.raw_data
    assert {e.key: e.value for e in lo.external_data}["location"] == location  # kept as text, never opened


@pytest.mark.parametrize("location", [
    pytest.param("../../etc/passwd", id="relative-escape"),
    pytest.param("/etc/passwd", id="absolute"),
    pytest.param("a/../../b", id="escape-inside"),
    pytest.param("C:\\Windows\\win.ini", id="drive"),
    pytest.param("..\\..\\secret", id="backslash-escape"),
    pytest.param("", id="empty"),
])
def test_external_data_outside_the_model_directory_is_refused(location):
    with pytest.raises(ArtifactError, match="outside the model's directory"):
        load_light(_external_model(location).SerializeToString())


def test_hostile_external_data_in_a_subgraph_or_function_is_refused_too():
    branch = helper.make_graph([helper.make_node("Identity", ["e"], ["o"])], "b", [], [vi("o")],
                               [external_tensor("e", "/etc/shadow")])
    m = model([helper.make_node("If", ["c"], ["y"], then_branch=branch, else_branch=branch)],
              inputs=[vi("x"), vi("c", onnx.TensorProto.BOOL, [])])
    with pytest.raises(ArtifactError, match="/etc/shadow"):
        load_light(m.SerializeToString())
    const = helper.make_node("Constant", [], ["k"], value=external_tensor("k", "../k.bin"))
    fn = helper.make_function("local", "f", ["X"], ["Y"], [const, helper.make_node("Add", ["X", "k"], ["Y"])],
                              [helper.make_opsetid("", 13)])
    m = model([helper.make_node("f", ["x"], ["y"], domain="local")], functions=[fn],
              extra_opsets=[helper.make_opsetid("local", 1)])
    with pytest.raises(ArtifactError, match="k.bin"):
        load_light(m.SerializeToString())


# --- malformed bytes ---------------------------------------------------------------------------------------

def _model_field_7_prefix() -> bytes:
    """The bytes of a valid model up to (and including) the graph field's key."""
    data = relu6_f32().SerializeToString()
    return data[:data.index(b"\x3a") + 1]  # field 7, wire type 2


@pytest.mark.parametrize("data,message", [
    pytest.param(b"", "empty", id="empty"),
    pytest.param(b"hello, this is not a model", None, id="text"),
    pytest.param(b'{"ir_version": 8}', None, id="json"),
    pytest.param(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", None, id="png-magic"),
    pytest.param(b"\x00\x01\x02", "field number 0", id="field-zero"),
    pytest.param(b"\x0b\x0c", "wire type", id="group-wire-type"),
    pytest.param(b"\x08" + b"\xff" * 11 + b"\x01", "varint longer", id="overlong-varint"),
    pytest.param(b"\x08\xff\xff", "truncated", id="varint-past-end"),
    pytest.param(_model_field_7_prefix() + varint(1 << 40), "declares a size past its end", id="huge-graph-size"),
    pytest.param(_model_field_7_prefix() + varint((1 << 63) - 1) + b"\x00" * 16, "declares a size past its end",
                 id="max-varint-size"),
    pytest.param(field(7, field(5, varint(1 << 3 | 2) + varint(1 << 50))), "past its end",
                 id="huge-size-inside-initializer"),
    pytest.param(varint(8 << 3) + varint(8), "no ONNX graph", id="protobuf-without-graph"),
    pytest.param(field(7, field(1, b"\xff\xff\xff")), None, id="garbage-node"),
])
def test_not_a_model_is_malformed(data, message):
    with pytest.raises(Malformed, match=message):
        load_light(data)


def test_malformed_is_an_artifact_error_a_400():
    assert issubclass(Malformed, ArtifactError) and Malformed("x").status == 400


def test_every_cut_of_a_model_is_an_artifact_error_or_a_prefix_model():
    """Cutting a model anywhere gives an ArtifactError, except at a field boundary of the top message, where
    the prefix is itself a valid (smaller) message; then the walk must still answer, not crash."""
    data = big_weights_model().SerializeToString()
    step = max(1, len(data) // 400)
    for cut in list(range(64)) + list(range(64, len(data), step)):
        try:
            light = load_light(data[:cut])
        except ArtifactError:
            continue
        assert light.model.HasField("graph")


@pytest.mark.parametrize("levels,pad,message", [
    pytest.param(40, 0, "protobuf decoding failed", id="past-protobuf-recursion-limit"),
    pytest.param(MAX_DEPTH + 5, STUB_OVER + 100, f"deeper than {MAX_DEPTH}", id="walk-depth-limit"),
    pytest.param(5000, 0, None, id="five-thousand-levels"),
])
def test_deep_nesting_is_refused(levels, pad, message):
    with pytest.raises(Malformed, match=message):
        load_light(nested_if_model(levels, pad))


def test_nesting_within_limits_is_read_and_scanned():
    data = nested_if_model(12, STUB_OVER + 100)
    light = load_light(data)
    g, depth = light.model.graph, 0
    while g.node and g.node[0].op_type == "If":
        g, depth = g.node[0].attribute[0].g, depth + 1
    assert depth == 12 and g.node[0].name == "deep"


# --- property: no cut or bit flip of a valid model escapes as anything but ArtifactError --------------------

SEEDS = [relu6_f32().SerializeToString(), big_weights_model().SerializeToString()]


def _mutate(data: bytes, cut: int, flips: list[tuple[int, int]]) -> bytes:
    out = bytearray(data[:cut])
    for pos, bit in flips:
        if out:
            out[pos % len(out)] ^= 1 << bit
    return bytes(out)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.sampled_from(range(len(SEEDS))), cut=st.floats(0, 1),
       flips=st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(0, 7)), max_size=4))
def test_property_mutated_models_raise_only_artifact_errors(seed, cut, flips):
    data = SEEDS[seed]
    mutated = _mutate(data, int(len(data) * cut) if cut < 1 else len(data), flips)
    try:
        load_light(mutated)
    except ArtifactError:
        pass


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cut=st.integers(0, len(SEEDS[0])),
       flips=st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(0, 7)), min_size=1, max_size=3))
def test_property_mutated_models_scan_or_raise_clipbridge_errors(cut, flips):
    """The whole scan (walk, scope building, shape inference, translation) on a damaged model: a result or a
    ClipBridgeError (a 4xx), never another exception (a 500)."""
    try:
        scan(_mutate(SEEDS[0], cut, flips), targets=["onnx", "openvino"])
    except ClipBridgeError:
        pass


def test_ir_version_and_opsets_survive_the_walk():
    m = relu6_f32()
    m.ir_version = IR_FOR_ORT
    light = load_light(m.SerializeToString())
    assert light.model.ir_version == IR_FOR_ORT
    assert [(o.domain, o.version) for o in light.model.opset_import] == [("", 13)]
