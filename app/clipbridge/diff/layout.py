"""One layout for a Loop's or Scan's scan outputs on every engine, before they are compared.

ONNX Loop-16/Scan-16 stack each iteration's scan output on a new axis 0 (`[iterations, *per_iteration]`);
onnx.reference (onnx 1.21) concatenates them on the existing axis 0 instead (`[iterations * d0, *rest]`,
measured: a Loop of 3 iterations emitting `[1, 16]` gives `(3, 1, 16)` on onnxruntime and `(3, 16)` on
onnx.reference). Compared as they come, every element differs and the witness is NaN/NaN (issue 44). The same
elements in the same order are in both, so the concatenated one is reshaped to the stacked layout and the report
says so (`layout`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

LOOPING = ("Loop", "Scan")


def concatenated(shape: tuple[int, ...], stacked: tuple[int, ...]) -> bool:
    """Whether `shape` is `stacked` with its first two axes merged (ONNX Loop/Scan scan outputs, concatenated)."""
    return (len(stacked) == len(shape) + 1 and len(shape) >= 1 and shape[0] == stacked[0] * stacked[1]
            and tuple(shape[1:]) == tuple(stacked[2:]))


def align(plan: Any, values: dict[str, dict[str, np.ndarray]], engines: tuple[str, ...]) -> list[dict[str, Any]]:
    """Reshape every engine's concatenated Loop/Scan output to the stacked layout another engine gave (in place),
    and return one note per tensor and engine reshaped."""
    notes: list[dict[str, Any]] = []
    for node in plan.nodes:
        if node.op not in LOOPING:
            continue
        for tensor in (o for o in node.outputs if o):
            arrays = {e: values[e][tensor] for e in engines if tensor in values.get(e, {})}
            stacked = max((a.shape for a in arrays.values()), key=len, default=())
            for engine, a in arrays.items():
                if a.shape != stacked and concatenated(a.shape, stacked):
                    values[engine][tensor] = a.reshape(stacked)
                    notes.append({"tensor": tensor, "node": node.name, "engine": engine, "shape": list(a.shape),
                                  "as": list(stacked), "note": f"{engine} concatenated the {node.op}'s scan "
                                  "outputs on axis 0; compared stacked, as ONNX specifies"})
    return notes
