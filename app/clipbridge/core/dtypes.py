"""The element types clipbridge knows and exact value arithmetic on them (each dialect names them in its own
package: app/clipbridge/dialects/<name>/dtypes.py or spec.py)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import ml_dtypes
import numpy as np

from clipbridge.core import exact
from clipbridge.core.errors import SpecError
from clipbridge.core.exact import Number


@dataclass(frozen=True)
class DType:
    """One element type; values of float types are held as Python floats (exact: every one is a double)."""

    name: str
    np_dtype: np.dtype
    is_float: bool
    bits: int

    def __hash__(self) -> int:
        # The name alone (equal dtypes share it): the generated hash also hashed the np.dtype, and the bound-rule
        # caches key on a dtype several times per translated target.
        return hash(self.name)

    @property
    def itemsize(self) -> int:
        return self.bits // 8

    @cached_property
    def uint_view(self) -> np.dtype:
        return np.dtype(f"uint{self.bits}")

    def lowest(self) -> Number:
        """numeric_limits<T>::lowest()."""
        if self.is_float:
            return float(_finfo(self).min)
        return int(np.iinfo(self.np_dtype).min)

    def highest(self) -> Number:
        """numeric_limits<T>::max()."""
        if self.is_float:
            return float(_finfo(self).max)
        return int(np.iinfo(self.np_dtype).max)

    def unbounded(self, lower: bool) -> Number:
        """An absent side of a clip: -inf/+inf for float types, the type's extreme for integer types (the one
        place; every dialect's open bound reads it)."""
        if self.is_float:
            return -math.inf if lower else math.inf
        return self.lowest() if lower else self.highest()

    @property
    def format(self) -> exact.FloatFormat:
        assert self.is_float
        return exact.FORMATS[self.name]

    def contains(self, value: Number) -> bool:
        """True when `value` is exactly a value of this type."""
        if self.is_float:
            if exact.is_nan(value):
                return True
            return self.round(value) == value
        if not exact.is_integral(value):
            return False
        return self.lowest() <= int(value) <= self.highest()

    def round(self, value: Number) -> float:
        """The exact value rounded once to this float type: nearest even, IEEE overflow (clipbridge.core.exact)."""
        return exact.round_to_format(value, self.format)

    def saturate(self, value: int) -> int:
        return max(self.lowest(), min(self.highest(), value))  # type: ignore[type-var]

    def array(self, values: list[Number]) -> np.ndarray:
        """An array of exact values of this type."""
        if self.is_float:
            return exact.exact_array(values, self.format, self.np_dtype)
        return np.asarray([int(v) for v in values], dtype=self.np_dtype)

    def to_python(self, value: object) -> Number:
        if self.is_float:
            return float(value)  # type: ignore[arg-type]
        return int(value)  # type: ignore[call-overload]

    def next_up(self, value: Number) -> Number:
        """The next value of this type above `value` (itself at the top)."""
        return self._step(value, +1)

    def next_down(self, value: Number) -> Number:
        return self._step(value, -1)

    def _step(self, value: Number, direction: int) -> Number:
        if not self.is_float:
            return self.saturate(int(value) + direction)
        v = value if type(value) is float else self.round(value)
        if math.isnan(v) or (math.isinf(v) and (v > 0) == (direction > 0)):
            return v
        # Walk the bit pattern: exact for every IEEE-like type including bfloat16.
        arr = np.asarray(v, dtype=np.float64).astype(self.np_dtype)
        if float(arr) != v:  # not a value of this type: start from its rounding
            v = self.round(v)
            arr = np.asarray(v, dtype=np.float64).astype(self.np_dtype)
        bits = int(arr.view(self.uint_view))
        sign = 1 << (self.bits - 1)
        if v == 0:
            bits = 1 if direction > 0 else sign | 1
        elif (v > 0) == (direction > 0):
            bits += 1
        else:
            bits -= 1
        return float(np.asarray(bits, dtype=self.uint_view).view(self.np_dtype))

    def all_values(self) -> np.ndarray:
        """Every bit pattern of an 8- or 16-bit type (NaNs included)."""
        assert self.bits <= 16
        return np.arange(2**self.bits, dtype=self.uint_view).view(self.np_dtype)


def _finfo(dt: DType) -> ml_dtypes.finfo | np.finfo:
    return ml_dtypes.finfo(dt.np_dtype)


BFLOAT16_NP = np.dtype(ml_dtypes.bfloat16)


def _d(name: str, npd: object, is_float: bool, bits: int) -> DType:
    return DType(name, np.dtype(npd), is_float, bits)


FLOAT32 = _d("float32", np.float32, True, 32)
FLOAT16 = _d("float16", np.float16, True, 16)
BFLOAT16 = _d("bfloat16", ml_dtypes.bfloat16, True, 16)
FLOAT64 = _d("float64", np.float64, True, 64)
INT8 = _d("int8", np.int8, False, 8)
INT16 = _d("int16", np.int16, False, 16)
INT32 = _d("int32", np.int32, False, 32)
INT64 = _d("int64", np.int64, False, 64)
UINT8 = _d("uint8", np.uint8, False, 8)
UINT16 = _d("uint16", np.uint16, False, 16)
UINT32 = _d("uint32", np.uint32, False, 32)
UINT64 = _d("uint64", np.uint64, False, 64)

ALL: tuple[DType, ...] = (FLOAT32, FLOAT16, BFLOAT16, FLOAT64, INT8, INT16, INT32, INT64,
                          UINT8, UINT16, UINT32, UINT64)
BY_NAME = {d.name: d for d in ALL}
BY_NUMPY = {d.np_dtype: d for d in ALL}


def by_name(name: str, loc: str | None = None) -> DType:
    """Look a dtype up by its canonical name (float32, int8, ...)."""
    if name not in BY_NAME:
        raise SpecError(f"Unknown dtype {name!r}. Known: {', '.join(BY_NAME)}", loc)
    return BY_NAME[name]
