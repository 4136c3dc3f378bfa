"""DirectML has no engine on Linux: a repro bundle carries a DxDispatch model to run on a Windows machine."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from clipbridge.core.numbers import wire_number


def _dxdispatch(sem: Any, x: np.ndarray) -> dict[str, Any]:
    """A DxDispatch JSON model (the documented format: array initializer, dispatch, print): the operator's desc
    on a [1, 1, 1, n] tensor of the probes; `print` writes "Resource 'output': ..." for run_bundle.py to read."""
    assert sem.spec is not None
    spec = sem.spec
    desc = json.loads(json.dumps(spec["desc"]))
    dtype = desc["InputTensor"]["DataType"]
    for t in ("InputTensor", "OutputTensor"):
        desc[t] = {"DataType": desc[t]["DataType"], "Sizes": [1, 1, 1, len(x)]}
    dt = sem.meaning.dtype
    values = [wire_number(dt.to_python(v)) for v in x]  # "nan", "inf", "-inf" as DxDispatch reads them
    return {
        "resources": {
            "input": {"initialValuesDataType": dtype, "initialValues": values},
            "output": {"initialValuesDataType": dtype, "initialValues": {"valueCount": len(x), "value": 0}},
        },
        "dispatchables": {"clip": {"type": "DML_OPERATOR_" + spec.get("operator", "ELEMENT_WISE_CLIP"),
                                   "desc": desc}},
        "commands": [
            {"type": "dispatch", "dispatchable": "clip", "bindings": {"InputTensor": "input", "OutputTensor": "output"}},
            {"type": "print", "resource": "output"},
        ],
    }


def bundle(sem: Any, x: np.ndarray, name: str) -> tuple[dict[str, bytes], dict[str, Any]]:
    """A repro bundle's DxDispatch model, run on a Windows machine (no DirectML on Linux)."""
    model = _dxdispatch(sem, x)
    return ({f"{name}.dxdispatch.json": (json.dumps(model, indent=2, allow_nan=False) + "\n").encode()},
            {"engine": "directml (DxDispatch, Windows)", "model": f"{name}.dxdispatch.json",
             "device_output": f"{name}.dxdispatch.txt"})
