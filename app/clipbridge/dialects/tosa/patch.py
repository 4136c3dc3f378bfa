"""The TOSA flatbuffer artifact from a cached graph of the same layout, its values written in place.

A one-CLAMP graph's layout (every table, vtable, string and vector, their order, sizes and alignment) depends on
the dtype, the rank, which sizes are unknown and the nan_mode; never on the values. The values all sit in vectors
whose length the layout fixes: each tensor's `shape` is an [int32] of the rank's length, and CLAMP's `min_val` /
`max_val` are [ubyte] vectors of 8 bytes (attribute_bytes pads every type's 1 to 4 bytes to 8). flatbuffers writes
a vector's elements whatever their value (only table scalars equal to their default are left out, and the scalars
written, the tensor type and nan_mode, are in the layout key), and the serializer shares no vectors (two tensors of
one shape, or equal bounds, still get a vector each: the tests' equal bounds show it). So the first graph of each
layout is built by flatbuffer.flatbuffer (tosa-tools' serializer); later ones copy its bytes and write their sizes
(little-endian int32, as flatbuffers stores [int32]) and their attribute bytes (flatbuffer._attribute_bytes: the
serializer's own conversion) at the vectors' positions.

The positions are read, not guessed: the wheel's generated readers (the `tosa` package built from tosa.fbs) follow
the graph's offsets to each tensor's shape vector and to the ClampAttribute's two vectors, and each vector's
length is checked against the rank or 8. Each layout is then checked once when cached: the cached bytes
rewritten with their own values must be unchanged, and rewritten with a second graph's values (every known size
and both bounds changed) must equal the serializer's bytes for that graph; else that layout always goes through
the serializer. tests/dialects/test_tosa_patch.py compares many graphs byte for byte.
"""

from __future__ import annotations

import base64
import struct
from typing import Any

from clipbridge.core.meaning import Meaning
from clipbridge.core.numbers import Number
from clipbridge.dialects.kit.common import number_key
from clipbridge.dialects.tosa.flatbuffer import _attribute_bytes, attribute_bytes, flatbuffer
from clipbridge.dialects.tosa.meaning import nan_mode_of
from clipbridge.dialects.tosa.spec import NAME_OF, TosaSpec

Layout = tuple[str, tuple[bool, ...], str]  # dtype, which sizes are unknown (its length is the rank), nan_mode
# A cached graph: its bytes around the value vectors (one piece more than vectors), which of _values' vectors
# fills each gap, and how many tensors it has.
Template = tuple[tuple[bytes, ...], tuple[int, ...], int]
# Per layout; None: this layout is not patched. Bounded: past _CACHE_SIZE layouts (ranks up to 64, any pattern of
# unknown sizes) new layouts are built each time.
_CACHE: dict[Layout, Template | None] = {}
_CACHE_SIZE = 256
# Vtable offsets of the fields read (tosa.fbs field index i is at 4 + 2 * i; the generated readers' numbers).
_TENSOR_SHAPE, _CLAMP_MIN, _CLAMP_MAX = 6, 4, 6
_ATTRIBUTE_SIZE = 8
# Bounds for the check of a newly cached layout, per dtype kind: the first two that differ from the graph's are used.
_OTHER_BOUNDS: dict[bool, tuple[Number, ...]] = {True: (0.25, 1.5, -2.0), False: (1, 2, 3)}


def layout_of(dtype: str, shape: list, nan_mode: str) -> Layout:
    return dtype, tuple(not isinstance(d, int) for d in shape), nan_mode


def _dims(ts: Any, shape: list) -> list[int]:
    """The sizes as flatbuffer() writes them: a size that is None or a name is the serializer's UNKNOWN_DIM."""
    return [d if isinstance(d, int) else ts.UNKNOWN_DIM for d in shape]


def _values(ts: Any, dtype: str, shape: list, lo: Number, hi: Number, tensors: int) -> list[bytes]:
    """The bytes of each value vector: every tensor's sizes, then min_val and max_val. struct.error where a size
    is not an int32 (graph() then builds, and raises, as flatbuffer() does)."""
    dims = _dims(ts, shape)
    sizes = struct.pack(f"<{len(dims)}i", *dims)
    # _attribute_bytes directly (attribute_bytes' list is one copy more): the serializer's conversion, cached.
    return [sizes] * tensors + [bytes(_attribute_bytes(ts, dtype, number_key(v))) for v in (lo, hi)]


def _vector(tab: Any, field: int, length: int) -> int:
    """Where a vector field's elements start; ValueError where it is absent or not `length` long."""
    o = tab.Offset(field)
    if o == 0 or tab.VectorLen(o) != length:
        raise ValueError("not the expected vector")
    return int(tab.Vector(o))


def _positions(data: bytes, rank: int) -> tuple[tuple[int, ...], int]:
    """Where each value vector starts, in _values' order, found with the wheel's generated readers, and how
    many tensors the graph has. ValueError where the graph is not the one-CLAMP graph expected."""
    from tosa.ClampAttribute import ClampAttribute
    from tosa.TosaGraph import TosaGraph
    block = TosaGraph.GetRootAs(data, 0).Regions(0).Blocks(0)
    out = [_vector(block.Tensors(i)._tab, _TENSOR_SHAPE, rank) for i in range(block.TensorsLength())]
    if block.OperatorsLength() != 1:
        raise ValueError("not one operator")
    union = block.Operators(0).Attribute()
    attr = ClampAttribute()
    attr.Init(union.Bytes, union.Pos)
    out += [_vector(attr._tab, f, _ATTRIBUTE_SIZE) for f in (_CLAMP_MIN, _CLAMP_MAX)]
    return tuple(out), block.TensorsLength()


def _template(data: bytes, positions: tuple[int, ...], rank: int, tensors: int) -> Template:
    """The graph cut around its value vectors (sizes: 4 bytes per dimension; attributes: 8 bytes). ValueError
    where two vectors overlap."""
    lengths = [4 * rank] * tensors + [_ATTRIBUTE_SIZE] * 2
    order = tuple(sorted(range(len(positions)), key=positions.__getitem__))
    pieces, at = [], 0
    for i in order:
        if positions[i] < at:
            raise ValueError("overlapping vectors")
        pieces.append(data[at:positions[i]])
        at = positions[i] + lengths[i]
    pieces.append(data[at:])
    return tuple(pieces), order, tensors


def _patched(t: Template, values: list[bytes]) -> bytes:
    """The template's bytes with `values` in its gaps (joining is much cheaper than bytearray slice writes)."""
    pieces, order, _ = t
    out = [pieces[0]]
    for piece, i in zip(pieces[1:], order):
        out += (values[i], piece)
    return b"".join(out)


def _other_bounds(ts: Any, dtype: str, lo: Number, hi: Number) -> tuple[Number, Number]:
    """Bounds whose bytes differ from lo's and hi's (the check of a newly cached layout)."""
    cands = _OTHER_BOUNDS[dtype.startswith(("fp", "bf"))]
    lo_raw, hi_raw = attribute_bytes(ts, dtype, lo), attribute_bytes(ts, dtype, hi)
    other_lo = next(c for c in cands if attribute_bytes(ts, dtype, c) != lo_raw)
    other_hi = next(c for c in cands if attribute_bytes(ts, dtype, c) != hi_raw)
    return other_lo, other_hi


def _checked(ts: Any, data: bytes, dtype: str, shape: list, lo: Number, hi: Number,
             nan_mode: str) -> Template | None:
    """data's template where this layout's graphs come out of patching exactly as the serializer writes them."""
    try:
        positions, tensors = _positions(data, len(shape))
        t = _template(data, positions, len(shape), tensors)
    except (ImportError, ValueError, IndexError, AttributeError, TypeError):
        return None
    if _patched(t, _values(ts, dtype, shape, lo, hi, tensors)) != data:
        return None
    other_shape = [d ^ 1 if isinstance(d, int) else d for d in shape]
    other_lo, other_hi = _other_bounds(ts, dtype, lo, hi)
    other = _values(ts, dtype, other_shape, other_lo, other_hi, tensors)
    if _patched(t, other) != flatbuffer(dtype, other_shape, other_lo, other_hi, nan_mode):
        return None
    return t


def graph(ts: Any, dtype: str, shape: list, lo: Number, hi: Number, nan_mode: str) -> bytes:
    """flatbuffer(dtype, shape, lo, hi, nan_mode)'s bytes (ts: the tosa_serializer module)."""
    key = layout_of(dtype, shape, nan_mode)
    cached = _CACHE.get(key, False)
    if cached is None:
        return flatbuffer(dtype, shape, lo, hi, nan_mode)
    if cached is not False:
        try:
            return _patched(cached, _values(ts, dtype, shape, lo, hi, cached[2]))
        except struct.error:
            return flatbuffer(dtype, shape, lo, hi, nan_mode)
    data = flatbuffer(dtype, shape, lo, hi, nan_mode)
    if len(_CACHE) < _CACHE_SIZE:
        _CACHE[key] = _checked(ts, data, dtype, shape, lo, hi, nan_mode)
    return data


def flatbuffer_b64(spec: TosaSpec, m: Meaning) -> str | None:
    """The one-CLAMP graph as base64 flatbuffer bytes, flatbuffer()'s bytes (None without tosa-tools)."""
    try:
        import tosa_serializer
    except ImportError:
        return None
    shape = spec.shape if spec.shape is not None else [None]
    data = graph(tosa_serializer, NAME_OF[m.dtype.name], shape, m.lo, m.hi,
                 nan_mode_of(m) if m.dtype.is_float else "PROPAGATE")
    return base64.b64encode(data).decode()
