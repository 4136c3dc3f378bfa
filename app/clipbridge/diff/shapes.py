"""Shapes to run at (issue 44, item 5): `--shape INPUT=1x3x224x224` (repeatable; `shape=` on HTTP) for the
generated inputs, and every symbolic dimension listed with the value it ran with.

A given shape sets every dimension of that input: a symbolic or unknown one takes the value given (a model
exported with a dynamic batch diffs at batch 8 when asked), a fixed one must equal what the model declares. An
input without a given shape gets 1 for each symbolic dimension (clipbridge.diff.inputs.DYNAMIC_DIM). With an
`.npz`, its arrays' shapes are the shapes: a `--shape` beside it is refused (one of the two would be ignored).
"""

from __future__ import annotations

from typing import Any

import onnx

from clipbridge.core.errors import ClipBridgeError

Shapes = tuple[tuple[str, tuple[int, ...]], ...]
MAX_DIM = 1 << 24  # one dimension; the generated input's elements are bounded too (inputs.MAX_GENERATED)


def parse(items: list[str] | tuple[str, ...] | None, loc: str = "--shape") -> Shapes:
    """'NAME=1x3x224x224' items -> ((name, (1, 3, 224, 224)), ...); a scalar input is 'NAME=' (no dims)."""
    out: dict[str, tuple[int, ...]] = {}
    for item in items or ():
        name, eq, dims = item.rpartition("=")
        if not eq or not name:
            raise ClipBridgeError(f"{item[:80]!r} is not INPUT=DIMS (e.g. image=8x3x224x224)", loc)
        try:
            shape = tuple(int(d) for d in dims.lower().split("x")) if dims else ()
        except ValueError:
            raise ClipBridgeError(f"{item[:80]!r}: each dimension is a whole number, joined by x", loc) from None
        if any(not 1 <= d <= MAX_DIM for d in shape):
            raise ClipBridgeError(f"{item[:80]!r}: each dimension is between 1 and {MAX_DIM}", loc)
        if name in out:
            raise ClipBridgeError(f"a shape for {name[:60]!r} is given twice", loc)
        out[name] = shape
    return tuple(out.items())


def declared(vi: onnx.ValueInfoProto) -> list[tuple[int | None, str | None]]:
    """Each dimension of a graph input: (its fixed size or None, its symbolic name or None)."""
    return [(d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else None,
             d.dim_param if d.HasField("dim_param") and d.dim_param else None) for d in vi.type.tensor_type.shape.dim]


def resolve(vi: onnx.ValueInfoProto, given: tuple[int, ...] | None, default: int, loc: str = "shape") -> list[int]:
    """The dims to generate `vi` at: the given shape (checked against the declared rank and fixed dims), else the
    declared ones with `default` for each symbolic or unknown dimension."""
    dims = declared(vi)
    if given is None:
        return [fixed if fixed is not None else default for fixed, _ in dims]
    if len(given) != len(dims):
        raise ClipBridgeError(f"shape of {vi.name!r} has rank {len(given)}; the graph input has rank {len(dims)}",
                              loc)
    for k, ((fixed, _), want) in enumerate(zip(dims, given)):
        if fixed is not None and fixed != want:
            raise ClipBridgeError(f"shape of {vi.name!r}: dimension {k} is fixed at {fixed} in the model, not {want}",
                                  loc)
    return list(given)


def check_names(shapes: Shapes, inputs: list[str], given_npz: bool, loc: str = "shape") -> None:
    """Refuse a shape for a name that is no graph input, or beside an .npz (whose arrays set the shapes)."""
    if shapes and given_npz:
        raise ClipBridgeError("shape applies to generated inputs; an .npz's arrays give their own shapes", loc)
    unknown = [n for n, _ in shapes if n not in inputs]
    if unknown:
        raise ClipBridgeError(f"shape for {unknown[0][:60]!r}, which is not a graph input (inputs: "
                              f"{', '.join(inputs)[:200]})", loc)


def symbolic(vis: list[onnx.ValueInfoProto], feeds: dict[str, Any]) -> list[dict[str, Any]]:
    """Every symbolic or unknown dimension of the graph inputs, with the value it ran with."""
    out = []
    for vi in vis:
        if vi.name not in feeds:
            continue
        for axis, (fixed, name) in enumerate(declared(vi)):
            if fixed is None and axis < feeds[vi.name].ndim:
                out.append({"input": vi.name, "axis": axis, "dim": name, "value": int(feeds[vi.name].shape[axis])})
    return out
