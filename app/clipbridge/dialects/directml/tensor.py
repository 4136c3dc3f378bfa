"""DirectML's feature levels and DML_BUFFER_TENSOR_DESC rules: which data types and ranks a level takes, the
buffer size a desc needs, and the checks a desc must pass (DirectML refuses the rest: a SpecError)."""

from __future__ import annotations

from functools import cache

from clipbridge.core.dtypes import FLOAT16, FLOAT32, INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64, DType
from clipbridge.core.errors import SpecError
from clipbridge.core.suggest import one_of
from clipbridge.dialects.directml.dtypes import by_dml_name, dml_name
from clipbridge.dialects.directml.spec import DmlTensorDesc

FEATURE_LEVELS = ("1_0", "2_0", "2_1", "3_0", "3_1", "4_0", "4_1", "5_0", "5_1", "5_2", "6_0", "6_1", "6_2",
                  "6_3", "6_4")
NEWEST_LEVEL = FEATURE_LEVELS[-1]
CLIP = "ELEMENT_WISE_CLIP"
CLIP1 = "ELEMENT_WISE_CLIP1"
ALL_DML_DTYPE_NAMES = ("FLOAT32", "FLOAT16", "UINT32", "UINT16", "UINT8", "INT32", "INT16", "INT8", "FLOAT64",
                       "UINT64", "INT64")


def feature_level_directml(text: str, loc: str = "feature_level") -> str:
    """A feature level as 'M_m' (accepts '5_0', '5.0', 'DML_FEATURE_LEVEL_5_0')."""
    key = text.strip().upper().replace(".", "_")
    if key.startswith("DML_FEATURE_LEVEL_"):
        key = key[len("DML_FEATURE_LEVEL_"):]
    if key not in FEATURE_LEVELS:
        raise SpecError(one_of("Unknown DirectML feature level", text, FEATURE_LEVELS), loc)
    return key


def level_tuple(level: str) -> tuple[int, int]:
    """'5_0' -> (5, 0), to compare feature levels."""
    major, minor = level.split("_")
    return int(major), int(minor)


@cache  # per feature level (15 of them)
def tensor_support_directml(level: str) -> tuple[tuple[DType, ...], tuple[int, int]]:
    """'Tensor support' tables: FL1.0 FLOAT32/16, 4 dims; 2.1 adds 8-32-bit ints; 3.0 1-8 dims; 5.0 adds 64-bit."""
    fl = level_tuple(level)
    dtypes: tuple[DType, ...] = (FLOAT32, FLOAT16)
    if fl >= (2, 1):
        dtypes += (INT32, INT16, INT8, UINT32, UINT16, UINT8)
    if fl >= (5, 0):
        dtypes += (INT64, UINT64)
    ranks = (1, 8) if fl >= (3, 0) else (4, 4)
    return dtypes, ranks


def first_level_for(dt: DType) -> str | None:
    return next((lv for lv in FEATURE_LEVELS if dt in tensor_support_directml(lv)[0]), None)


def data_type_directml(name: str, loc: str) -> DType:
    key = name.strip().upper()
    if key not in ALL_DML_DTYPE_NAMES:
        raise SpecError(one_of("Unknown DML_TENSOR_DATA_TYPE", name, ALL_DML_DTYPE_NAMES), loc)
    return by_dml_name(key)


def total_tensor_size_directml(dt: DType, sizes: list[int], strides: list[int] | None) -> int:
    """DMLCalcBufferTensorSize: (sum((Sizes[i]-1)*Strides[i]) + 1) * elementSize, rounded up to 4 bytes."""
    if strides is None:
        count = 1
        for s in sizes:
            count *= s
        index_span = count
    else:
        index_span = sum((s - 1) * st for s, st in zip(sizes, strides, strict=True)) + 1
    size = index_span * dt.itemsize
    return (size + 3) & ~3


def check_tensor_directml(t: DmlTensorDesc, level: str, loc: str) -> DType:
    """DML_BUFFER_TENSOR_DESC rules: sizes >= 1, counts agree, strides non-negative, size big enough."""
    dt = data_type_directml(t.DataType, f"{loc}.DataType")
    flags = t.Flags.strip().upper()
    if flags not in ("NONE", "OWNED_BY_DML"):
        raise SpecError(f"Unknown DML_TENSOR_FLAGS {t.Flags!r}: expected NONE or OWNED_BY_DML", f"{loc}.Flags")
    n = len(t.Sizes)
    if t.DimensionCount is not None and t.DimensionCount != n:
        raise SpecError(f"DimensionCount is {t.DimensionCount} but Sizes has {n} entries", f"{loc}.DimensionCount")
    dtypes, (rmin, rmax) = tensor_support_directml(level)
    if not rmin <= n <= rmax:
        need = "exactly 4 dimensions" if rmin == rmax else f"{rmin} to {rmax} dimensions"
        raise SpecError(f"DirectML FL {level.replace('_', '.')} needs {need}. Got: {n}", f"{loc}.Sizes")
    for i, s in enumerate(t.Sizes):
        if s < 1 or s > 2**32 - 1:
            raise SpecError(f"Sizes[{i}] = {s}: DirectML sizes are UINT from 1 to 2^32-1", f"{loc}.Sizes[{i}]")
    if t.Strides is not None:
        if len(t.Strides) != n:
            raise SpecError(f"Strides has {len(t.Strides)} entries, Sizes has {n}", f"{loc}.Strides")
        for i, s in enumerate(t.Strides):
            if s < 0 or s > 2**32 - 1:
                raise SpecError(f"Strides[{i}] = {s}: DirectML strides are UINT element counts",
                                f"{loc}.Strides[{i}]")
    need = total_tensor_size_directml(dt, t.Sizes, t.Strides)
    if need > 2**64 - 1:
        raise SpecError(f"the tensor needs {need} bytes, beyond UINT64", f"{loc}.Sizes")
    if t.TotalTensorSizeInBytes is not None and t.TotalTensorSizeInBytes < need:
        raise SpecError(f"TotalTensorSizeInBytes is {t.TotalTensorSizeInBytes}; these Sizes/Strides need at least "
                        f"{need}", f"{loc}.TotalTensorSizeInBytes")
    a = t.GuaranteedBaseOffsetAlignment
    if a != 0 and (a < 16 or a & (a - 1)):
        raise SpecError(f"GuaranteedBaseOffsetAlignment {a} must be 0 or a power of two >= 16",
                        f"{loc}.GuaranteedBaseOffsetAlignment")
    if dt not in dtypes:
        first = first_level_for(dt)
        hint = f"; FL {first.replace('_', '.')} and later take it" if first else "; no feature level takes it"
        raise SpecError(f"ELEMENT_WISE_CLIP at FL {level.replace('_', '.')} does not take {dml_name(dt)}{hint}",
                        f"{loc}.DataType")
    return dt
