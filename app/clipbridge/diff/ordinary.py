"""The default generated sample (issue 44, item 2): ordinary values, what a model sees in use.

- float types: standard normal (mean 0, standard deviation 1: inside every float type's range, float16
  included, and the scale of normalised images, embeddings and activations);
- an integer input that indexes a Gather whose data is a constant (token ids into an embedding table): in
  [0, rows of the table);
- 8-bit integers (images, quantized data): the type's whole range;
- any other integer (attention masks, token types, flags): 0 or 1;
- bool: either.
Seeded (`--seed`, written in the report), so a sample can be reproduced. NaN, the infinities and the bounds are
the edge probe's (clipbridge.diff.probe), never in this sample.
"""

from __future__ import annotations

import numpy as np
import onnx


def index_rows(model: onnx.ModelProto) -> dict[str, int]:
    """Graph input -> the rows of the constant table a Gather reads with it (its valid indices: [0, rows))."""
    tables = {t.name: list(t.dims) for t in model.graph.initializer}
    rows: dict[str, int] = {}
    for n in model.graph.node:
        if n.op_type != "Gather" or len(n.input) < 2 or n.input[0] not in tables:
            continue
        axis = next((a.i for a in n.attribute if a.name == "axis"), 0)
        dims = tables[n.input[0]]
        if dims and -len(dims) <= axis < len(dims) and dims[axis] > 0:
            rows[n.input[1]] = min(rows.get(n.input[1], dims[axis]), dims[axis])
    return rows


def values(rng: np.random.Generator, count: int, dtype: np.dtype, rows: int | None = None) -> np.ndarray:
    """`count` ordinary values of `dtype` (the module's docstring says which)."""
    if dtype.kind == "f":
        return rng.standard_normal(count).astype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if rows is not None:
            return rng.integers(0, min(rows, int(info.max) + 1), count).astype(dtype)
        if dtype.itemsize == 1:
            return rng.integers(info.min, info.max, count, endpoint=True).astype(dtype)
        return rng.integers(0, 1, count, endpoint=True).astype(dtype)
    return rng.integers(0, 1, count, endpoint=True).astype(bool)
