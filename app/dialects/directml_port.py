"""DirectML ELEMENT_WISE_CLIP(1) on the dialect interface: the adapter over app/dialects/directml.py (no engine
on Linux: the meaning kernels compute it)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from app.dialects import directml
from app.dialects.kit.base import Dialect, Resolved
from app.dialects.kit.spec_base import DirectMLSpec, DirectMLTarget
from app.dialects.kit.tensor_bounds import with_tensor_bounds
from app.core.meaning import READING_2022, READING_CURRENT
from app.core.numbers import wire_number


def _packed_strides(sizes: list[int]) -> list[int]:
    out, acc = [], 1
    for s in reversed(sizes):
        out.append(acc)
        acc *= s
    return list(reversed(out))


def resolve(spec: DirectMLSpec) -> Resolved:
    d = directml.parse(spec)
    t = spec.desc.InputTensor
    strided = t.Strides is not None and t.Strides != _packed_strides(t.Sizes)
    return Resolved("directml", directml.resolve(d), directml.normalize(d), list(t.Sizes), strided)


def target(version: str | None) -> DirectMLTarget:
    return DirectMLTarget(dialect="directml", feature_level=version)  # checked when emitting, located there


def capability() -> dict[str, Any]:
    versions = []
    for lv in directml.FEATURE_LEVELS:
        dts, (rmin, rmax) = directml.tensor_support_directml(lv)
        ops = [directml.CLIP] + ([directml.CLIP1] if lv >= "5_0" else [])
        versions.append({
            "version": lv, "selects": f"feature_level {lv}", "dtypes": [d.directml for d in dts],
            "ranks": f"{rmin}" if rmin == rmax else f"{rmin}-{rmax}", "operators": ops,
            "rules": ["CLIP: FLOAT Min/Max cast to T (integers truncate toward zero, float16 nearest even)",
                      "CLIP: min > max ambiguous (2022 doc gives Max, current doc gives Min)",
                      *(["CLIP1: MinMaxDataType == OutputTensor.DataType; min > max gives Min"] if lv >= "5_0"
                        else []),
                      "ScaleBias x*Scale+Bias before clipping", "NaN undocumented",
                      "input and output: same DataType, DimensionCount, Sizes"]})
    return {"dialect": "directml", "default_target": {"dialect": "directml", "feature_level": directml.NEWEST_LEVEL},
            "versions": versions}


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


# Per-element bounds: ELEMENT_WISE_CLIP takes scalar Min/Max.
EMIT = with_tensor_bounds(directml.emit, None, "DirectML ELEMENT_WISE_CLIP")


DIALECT = Dialect(
    name="directml", spec_model=DirectMLSpec, target_model=DirectMLTarget, resolve=resolve, emit=EMIT,
    target=target, check_version=directml.feature_level_directml, capability=capability,
    version_example="directml:5_0", strided_tensors=True, bundle=bundle,
    artifacts={"cpp": "C++ filling the DirectML desc structs"},
    readings={"current-doc": READING_CURRENT, "2022-doc": READING_2022})  # an ambiguous min > max only
