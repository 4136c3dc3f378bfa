"""onnx.reference, the ONNX specification's NumPy evaluator: a diff engine that is the core's own onnx, so it is
always installed and never pinned separately."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from onnx.external_data_helper import load_external_data_for_model

from clipbridge.core.ondisk import folder_of
from clipbridge.engines.runtimes.base import Feeds, Runtime, float_types


class ReferenceSession:
    def __init__(self, model: onnx.ModelProto) -> None:
        from onnx.reference import ReferenceEvaluator
        self.names = [o.name for o in model.graph.output]
        self.evaluator = ReferenceEvaluator(model)

    def run(self, feeds: Feeds, kernels: bool = True) -> tuple[dict[str, Any], dict[str, Any]]:
        with np.errstate(all="ignore"):  # the evaluator computes NaN and inf as NumPy does; they are the answer
            values = self.evaluator.run(self.names, feeds)
        out = {n: np.asarray(v) for n, v in zip(self.names, values)}
        return out, {"precision": float_types(out.values()), "kernels": {}, "settings": {"evaluator": "numpy"}}


def load(model_bytes: bytes, precision: str) -> ReferenceSession:
    m = onnx.load_from_string(model_bytes)
    if (folder := folder_of(model_bytes)) is not None:  # NumPy computes from the proto: an OnDisk model's weights
        load_external_data_for_model(m, folder)  # are read into memory (onnx's reader, with its own checks)
    return ReferenceSession(m)


RUNTIME = Runtime("onnx-reference", "onnx", ("onnx",), "", frozenset({"diff"}), load=load)
