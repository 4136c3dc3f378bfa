"""The TOSA flatbuffer artifact: a one-operator CLAMP graph written with the `tosa-tools` wheel's own serialization
library (`tosa_serializer`, Arm's C++ serialization_lib bindings). tosa-tools is optional: imported inside functions.
flatbuffer() is the reference builder; the artifact itself comes from patch.py (a cached graph of the same layout
with its values written in place, byte for byte flatbuffer()'s output).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from clipbridge.core.errors import BackendUnavailable
from clipbridge.core.numbers import Number
from clipbridge.dialects.kit.common import number_key
from clipbridge.engines import extras as engines

# TOSA type names (the serializer's DType members) for the names the TOSA dialect takes.
SERIALIZER_DTYPE = {"int8": "INT8", "int16": "INT16", "fp16": "FP16", "bf16": "BF16", "fp32": "FP32"}
INPUT = "input"


def install_hint() -> str:
    return str(engines.missing("tosa-reference", "the tosa-tools wheel"))


def serializer() -> Any:
    try:
        import tosa_serializer
    except ImportError:
        raise BackendUnavailable(install_hint(), "backend") from None
    return tosa_serializer


def attribute_bytes(ts: Any, dtype: str, value: Number) -> list[int]:
    """An in_out_t attribute as the serializer stores it: the value's little-endian bytes, padded to 8 (as the
    wheel's own test generator does)."""
    return list(_attribute_bytes(ts, dtype, number_key(value)))


@lru_cache(maxsize=4096)  # the same bounds (0, 6, 1, ...) come back in every request
def _attribute_bytes(ts: Any, dtype: str, key: tuple[type, Number, bool]) -> tuple[int, ...]:
    value = key[1]
    import ml_dtypes
    np_type = {"int8": np.int8, "int16": np.int16, "fp16": np.float16, "bf16": ml_dtypes.bfloat16,
               "fp32": np.float32}[dtype]
    # The value is already exactly a value of the type (the dialect checked it): no rounding happens here.
    data = np.asarray([float(value) if dtype.startswith(("fp", "bf")) else int(value)], dtype=np.float64)
    raw = list(ts.TosaSerializer.convertDataToUint8Vec(getattr(ts.DType, SERIALIZER_DTYPE[dtype]),
                                                       data.astype(np_type)))
    return tuple(raw + [0] * (-len(raw) % 8))


def flatbuffer(dtype: str, shape: list, min_val: Number, max_val: Number, nan_mode: str) -> bytes:
    """A TOSA 1.0 graph: input -> CLAMP(min_val, max_val, nan_mode) -> output, serialized by the wheel's library.

    Unknown sizes (None or a name) are written as the serializer's UNKNOWN_DIM (-1)."""
    ts = serializer()
    dt = getattr(ts.DType, SERIALIZER_DTYPE[dtype])
    dims = [d if isinstance(d, int) else ts.UNKNOWN_DIM for d in shape]
    ser = ts.TosaSerializer("", targetMajor=1, targetMinor=0, targetPatch=0, targetDraft=False)
    ser.addInputTensor(ts.TosaSerializerTensor(INPUT, dims, dt))
    out = ser.addOutput(dims, dt)
    attr = ts.TosaSerializerAttribute()
    attr.ClampAttribute(attribute_bytes(ts, dtype, min_val), attribute_bytes(ts, dtype, max_val),
                        getattr(ts.NanPropagationMode, nan_mode))
    ser.addOperator(ts.Op.CLAMP, [INPUT], [out.name], attr)
    return bytes(ser.serialize())
