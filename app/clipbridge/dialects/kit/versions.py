"""Versions as data: a table of (first version, value) rows, resolved as "the highest at or below the request".

This is how the frameworks themselves pick an operator's schema: ONNX's `since_version`
(onnx.defs.get_schema(name, max_inclusive_version)), onnx/reference/ops/op_clip.py (Clip_6, Clip_11: one class
only where the behaviour changes) and OpenVINO's ONNX frontend (opset_1::clip, opset_11::clip registered at
their first opset). A table holds one row per version that changes behaviour; every request in between selects the row
below it. Anything in app/clipbridge/dialects may import this module; it imports only clipbridge.core.errors."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from clipbridge.core.errors import SpecError


class Ordered(Protocol):
    """A version key: anything ordered (an opset number, a (major, minor) tuple)."""

    def __lt__(self, other: Any, /) -> bool: ...
    def __le__(self, other: Any, /) -> bool: ...


K = TypeVar("K", bound=Ordered)
V = TypeVar("V")


@dataclass(frozen=True)
class VersionTable(Generic[K, V]):
    """Rows (since, value), strictly ascending by `since`; `field` names the request in errors (their `loc`)."""

    field: str
    rows: tuple[tuple[K, V], ...]
    # The error for a request below the first row: {field}, {requested} and {first} are filled in.
    too_old: str = "{field} {requested} is older than the first version, {first}"

    def __post_init__(self) -> None:
        if not self.rows:
            raise ValueError(f"a version table for {self.field!r} needs at least one row")
        for (a, _), (b, _) in zip(self.rows, self.rows[1:]):
            if not a < b:
                raise ValueError(f"the {self.field!r} table is not strictly ascending: {a!r} then {b!r}")

    def resolve(self, requested: K) -> V:
        """The value of the highest row at or below `requested` (SpecError at `field` when none is)."""
        return self.rows[self._index(requested)][1]

    def since(self, requested: K) -> K:
        """The first version of the row `requested` selects."""
        return self.rows[self._index(requested)][0]

    def _index(self, requested: K) -> int:
        found = -1
        for i, (since, _) in enumerate(self.rows):
            if since <= requested:
                found = i
            else:
                break
        if found < 0:
            raise SpecError(self.too_old.format(field=self.field, requested=requested, first=self.first), self.field)
        return found

    @property
    def first(self) -> K:
        return self.rows[0][0]

    @property
    def newest(self) -> V:
        return self.rows[-1][1]

    def versions(self) -> tuple[K, ...]:
        return tuple(since for since, _ in self.rows)

    def values(self) -> tuple[V, ...]:
        return tuple(value for _, value in self.rows)

    def __iter__(self) -> Iterator[V]:
        return iter(self.values())

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, index: int) -> V:
        return self.rows[index][1]
