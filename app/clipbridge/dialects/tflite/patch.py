"""The .tflite artifact from a cached model of the same layout, its values written in place.

A model's layout (every table, vtable, string and vector, their order, sizes and alignment) depends on the op,
the tensor type, the rank, which sizes are unknown (shape_signature) and whether tensors are quantized; never
on the values: the sizes in `shape` / `shape_signature`, the quantization's scale and zero point, and the bound
constants' bytes all sit in vectors, which flatbuffers writes whatever their value (only table scalars equal to
their default are left out, and those are fixed by the layout). So the first model of each layout is built by
flatbuffer.build_model (the generated tflite builders); later ones copy it and write their values at the
positions the generated readers find, packed as flatbuffers packs them. Each layout is checked once when cached:
a second model of the layout, with other values, must come out byte-identical to build_model's, else that
layout always goes through build_model (tests/dialects/test_tflite_patch.py compares many graphs).
"""

from __future__ import annotations

import base64
import struct
from dataclasses import replace
from typing import Any

import numpy as np

from clipbridge.core.meaning import Meaning
from clipbridge.dialects.tflite.flatbuffer import Graph, build_model, graph_of
from clipbridge.dialects.tflite.spec import MINMAX

Layout = tuple[str, str, tuple[bool, ...], bool]
# Per layout: the model's bytes and, per value group, where it starts; None: this layout is not patched.
# Bounded: past _CACHE_SIZE layouts (ranks up to 64, any pattern of unknown sizes) new layouts are built each time.
_CACHE: dict[Layout, tuple[bytes, list[int]] | None] = {}
_CACHE_SIZE = 256
# Vtable offsets of the fields read (schema.fbs field index i is at 4 + 2 * i; the generated readers' numbers).
_TENSOR_SHAPE, _TENSOR_QUANT, _TENSOR_SIGNATURE, _QUANT_SCALE, _QUANT_ZP, _BUFFER_DATA = 4, 12, 18, 8, 10, 4


def layout_of(g: Graph) -> Layout:
    return g.op, g.dtype, tuple(d < 0 for d in g.shape), g.quantization is None


def _tensor_shapes(g: Graph) -> list[tuple[int, ...]]:
    """Each tensor's shape, in the order flatbuffer._tensors_and_ops writes them."""
    return [g.shape, (), g.shape, (), g.shape] if g.op == MINMAX else [g.shape, g.shape]


def _positions(data: bytes, g: Graph) -> list[int]:
    """Where each value group starts, in _values' order, found with the generated readers."""
    import tflite
    model = tflite.Model.GetRootAs(data, 0)
    sg = model.Subgraphs(0)
    out = []
    for i, shape in enumerate(_tensor_shapes(g)):
        tensor = sg.Tensors(i)
        tab = tensor._tab
        out.append(tab.Vector(tab.Offset(_TENSOR_SHAPE)))
        if any(d < 0 for d in shape):
            out.append(tab.Vector(tab.Offset(_TENSOR_SIGNATURE)))
        if g.quantization is not None:
            q = tensor.Quantization()._tab
            out += [q.Vector(q.Offset(_QUANT_SCALE)), q.Vector(q.Offset(_QUANT_ZP))]
    if g.op == MINMAX:
        for k in (1, 2):
            tab = model.Buffers(k)._tab
            out.append(tab.Vector(tab.Offset(_BUFFER_DATA)))
    return out


def _values(g: Graph) -> list[bytes]:
    """The bytes of each value group, packed as flatbuffers packs them (little-endian int32 sizes; the scale and
    zero point through its own checks and packers). struct.error where a size is not an int32 (model() then
    builds, and raises, as build_model does)."""
    from flatbuffers import number_types as n
    from flatbuffers.number_types import enforce_number

    def pack(flags: Any, x: Any) -> bytes:
        enforce_number(x, flags)
        return flags.packer_type.pack(x)

    rank = len(g.shape)
    sizes = struct.pack(f"<{rank}i", *[max(d, 1) for d in g.shape])
    per_tensor = [sizes, struct.pack(f"<{rank}i", *g.shape)] if any(d < 0 for d in g.shape) else [sizes]
    scalar: list[bytes] = [b""]  # hi and lo: shape (), an empty vector
    if g.quantization is not None:
        q = [pack(n.Float32Flags, g.quantization[0]), pack(n.Int64Flags, g.quantization[1])]
        per_tensor, scalar = per_tensor + q, scalar + q
    out = []
    for shape in _tensor_shapes(g):
        out += per_tensor if shape is g.shape else scalar
    if g.op == MINMAX:
        np_dtype = np.dtype(g.dtype)
        out += [np.asarray([value], dtype=np_dtype).tobytes() for value in (g.hi, g.lo)]
    return out


def _patched(data: bytes, positions: list[int], values: list[bytes]) -> bytes:
    buf = bytearray(data)
    for pos, raw in zip(positions, values, strict=True):
        buf[pos:pos + len(raw)] = raw
    return bytes(buf)


def _other_values(g: Graph) -> Graph:
    """A graph of the same layout with every value changed (the check of a newly cached layout)."""
    shape = tuple(d if d < 0 else d ^ 1 for d in g.shape)
    q = None if g.quantization is None else (0.5 if g.quantization[0] != 0.5 else 0.25, g.quantization[1] ^ 1)
    lo = hi = None
    if g.op == MINMAX:
        lo, hi = (1, 2) if g.dtype != "float32" else (0.25, 1.5)
    return replace(g, shape=shape, lo=lo, hi=hi, quantization=q)


def model(g: Graph) -> bytes:
    """build_model(g)'s bytes."""
    key = layout_of(g)
    cached = _CACHE.get(key, False)
    if cached is None:
        return build_model(g)
    if cached is not False:
        try:
            return _patched(cached[0], cached[1], _values(g))
        except struct.error:
            return build_model(g)
    data = build_model(g)
    if len(_CACHE) < _CACHE_SIZE:
        positions = _positions(data, g)
        other = _other_values(g)
        ok = _patched(data, positions, _values(other)) == build_model(other)
        _CACHE[key] = (data, positions) if ok else None
    return data


def model_base64(spec: Any, m: Meaning) -> str:
    """The emitted artifact: the flatbuffer (flatbuffer.model_bytes') as base64 (binary artifacts travel as
    base64 strings in JSON)."""
    return base64.b64encode(model(graph_of(spec, m, spec.shape))).decode()
