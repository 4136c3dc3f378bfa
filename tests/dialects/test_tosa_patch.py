"""The TOSA flatbuffer artifact from a cached graph of the same layout with its values written in place
(patch.graph) is flatbuffer.flatbuffer's output (tosa-tools' serializer) byte for byte: named cases over every
dtype, ranks 0 to 4, unknown sizes, both nan_modes and special bounds; a property over random layouts and values;
a layout whose check fails is never patched; and without tosa-tools there is no artifact."""

from __future__ import annotations

import base64
import math
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clipbridge.dialects.tosa import patch
from clipbridge.dialects.tosa.flatbuffer import flatbuffer
from clipbridge.dialects.tosa.meaning import resolve
from clipbridge.dialects.tosa.spec import TosaSpec

ts = pytest.importorskip("tosa_serializer")
ml_dtypes = pytest.importorskip("ml_dtypes")

INF, NAN = math.inf, math.nan
# Per dtype: the bounds a graph of it may carry (the serializer writes NaN and infinities as it is given them).
BOUNDS = {
    "int8": [(-128, 127), (0, 0), (-1, 1), (127, -128)],
    "int16": [(-32768, 32767), (0, 6), (-300, 300), (255, 256)],
    "fp16": [(0.0, 6.0), (-0.0, 0.0), (-INF, INF), (NAN, 1.0), (-65504.0, 65504.0), (2.0**-24, 0.5)],
    "bf16": [(0.0, 6.0), (-0.0, -0.0), (-INF, NAN), (-3.3895313892515355e38, 3.3895313892515355e38),
             (2.0**-133, 1.5)],
    "fp32": [(0.0, 6.0), (-0.0, 0.0), (NAN, NAN), (-INF, INF), (-3.4028234663852886e38, 2.0**-149), (0.1, 0.2)],
}
SHAPES = [[], [None], [3], ["N"], [1, 224], [None, 7], [1, 3, 224, 224], [1, 3, 225, 224], [None, 3, None, 224],
          [0, 2**31 - 1, 1], ["batch", None, "h", "w"], [None, None, None, None]]


def _modes(dtype: str) -> list[str]:
    return ["PROPAGATE", "IGNORE"] if dtype.startswith(("fp", "bf")) else ["PROPAGATE"]  # integers: PROPAGATE


def _cases() -> list:
    """Every dtype's special bounds on two shapes each, and every shape with each dtype and nan_mode."""
    out = []
    for dtype, bounds in BOUNDS.items():
        for i, (lo, hi) in enumerate(bounds):
            for shape in (SHAPES[i % len(SHAPES)], SHAPES[(i + 6) % len(SHAPES)]):
                mode = _modes(dtype)[i % len(_modes(dtype))]
                out.append(pytest.param(dtype, shape, lo, hi, mode, id=f"{dtype}-{lo}-{hi}-{shape}-{mode}"))
        for mode in _modes(dtype):
            for shape in SHAPES:
                lo, hi = bounds[1]
                out.append(pytest.param(dtype, shape, lo, hi, mode, id=f"layout-{dtype}-{shape}-{mode}"))
    return out


def _warm(dtype: str, shape: list, mode: str) -> None:
    """Caches the layout from a graph with other values (its sizes and bounds differ from every case's)."""
    other = [d ^ 4 if isinstance(d, int) else d for d in shape]
    lo, hi = (-3, 9) if dtype.startswith("int") else (-2.5, 3.0)
    assert patch.graph(ts, dtype, other, lo, hi, mode) == flatbuffer(dtype, other, lo, hi, mode)


@pytest.mark.parametrize("dtype,shape,lo,hi,mode", _cases())
def test_patched_graph_is_the_serializers(dtype, shape, lo, hi, mode):
    patch._CACHE.clear()
    _warm(dtype, shape, mode)
    assert patch._CACHE[patch.layout_of(dtype, shape, mode)] is not None  # the layout is patched
    assert patch.graph(ts, dtype, shape, lo, hi, mode) == flatbuffer(dtype, shape, lo, hi, mode)


def test_sizes_are_written_not_shared():
    """[1,3,224,224] and [1,3,225,224] share a layout, not bytes."""
    patch._CACHE.clear()
    a = patch.graph(ts, "fp32", [1, 3, 224, 224], 0.0, 6.0, "PROPAGATE")
    b = patch.graph(ts, "fp32", [1, 3, 225, 224], 0.0, 6.0, "PROPAGATE")
    assert a != b and b == flatbuffer("fp32", [1, 3, 225, 224], 0.0, 6.0, "PROPAGATE")
    assert len(patch._CACHE) == 1


def _bound(dtype: str) -> st.SearchStrategy:
    if dtype == "int8":
        return st.integers(-128, 127)
    if dtype == "int16":
        return st.integers(-32768, 32767)
    if dtype == "fp16":
        return st.floats(width=16)
    if dtype == "bf16":
        return st.floats(width=32).map(lambda x: float(ml_dtypes.bfloat16(x)))
    return st.floats(width=32)


@st.composite
def _graphs(draw: st.DrawFn) -> tuple:
    dtype = draw(st.sampled_from(sorted(BOUNDS)))
    mode = draw(st.sampled_from(_modes(dtype)))
    shape = draw(st.lists(st.one_of(st.integers(0, 2**31 - 1), st.sampled_from([None, "N", 1, 3, 224])), max_size=4))
    # a second graph of the same layout: the same unknown sizes, other known sizes and other bounds
    other = [d if not isinstance(d, int) else draw(st.integers(0, 2**31 - 1)) for d in shape]
    values = [draw(_bound(dtype)) for _ in range(4)]
    return dtype, mode, shape, other, values


@settings(derandomize=True, max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_graphs())
def test_patched_graphs_are_the_serializers(g):
    dtype, mode, shape, other, (lo, hi, lo2, hi2) = g
    patch._CACHE.clear()
    assert patch.graph(ts, dtype, shape, lo, hi, mode) == flatbuffer(dtype, shape, lo, hi, mode)
    assert patch._CACHE[patch.layout_of(dtype, shape, mode)] is not None
    assert patch.graph(ts, dtype, other, lo2, hi2, mode) == flatbuffer(dtype, other, lo2, hi2, mode)


def test_a_layout_failing_its_check_is_not_patched(monkeypatch):
    """A wrong position (one byte off) fails the check: the layout is cached as None and every later graph of it
    comes from the serializer."""
    real = patch._positions

    def one_byte_off(data: bytes, rank: int) -> tuple[tuple[int, ...], int]:
        positions, tensors = real(data, rank)
        return (positions[0] + 1,) + positions[1:], tensors

    monkeypatch.setattr(patch, "_positions", one_byte_off)
    built = []
    monkeypatch.setattr(patch, "flatbuffer", lambda *a: built.append(a) or flatbuffer(*a))
    patch._CACHE.clear()
    shape = [1, 3, 224, 224]
    for hi in (6.0, 7.0, 8.0):
        assert patch.graph(ts, "fp32", shape, 0.0, hi, "PROPAGATE") == flatbuffer("fp32", shape, 0.0, hi, "PROPAGATE")
    assert patch._CACHE == {patch.layout_of("fp32", shape, "PROPAGATE"): None}
    assert [a[3] for a in built if a[1] == shape] == [6.0, 7.0, 8.0]  # each one built, none patched


def test_the_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(patch, "_CACHE_SIZE", 3)
    patch._CACHE.clear()
    for rank in range(6):
        shape = [2] * rank
        assert patch.graph(ts, "int8", shape, 1, 2, "PROPAGATE") == flatbuffer("int8", shape, 1, 2, "PROPAGATE")
    assert len(patch._CACHE) == 3


def _spec(shape: list | None) -> TosaSpec:
    return TosaSpec(dialect="tosa", dtype="fp16", shape=shape, min_val=-1.0, max_val=6.0, nan_mode="IGNORE")


@pytest.mark.parametrize("shape", [None, [2, "N"], []])
def test_artifact_is_the_serializers_graph(shape):
    patch._CACHE.clear()
    for _ in range(2):  # built, then patched
        got = base64.b64decode(patch.flatbuffer_b64(_spec(shape), resolve(_spec(shape))))
        assert got == flatbuffer("fp16", shape if shape is not None else [None], -1.0, 6.0, "IGNORE")


def test_no_artifact_without_tosa_tools(monkeypatch):
    monkeypatch.setitem(sys.modules, "tosa_serializer", None)  # import raises ImportError
    assert patch.flatbuffer_b64(_spec([3]), resolve(_spec([3]))) is None
