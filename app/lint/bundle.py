"""Repro bundles: a zip that lets anyone confirm a prediction on a real engine or device.

spec.json, manifest.json, inputs.npy, expected/<semantics>.npy, per semantics the op it runs (an ONNX model,
an OpenVINO IR, or a DxDispatch model of the DirectML operator), run_bundle.py (app/lint/bundle_runner.py)
and a README. The models are the same artifacts /v1/translate emits, built for a 1-D tensor of the probes.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from app import __version__
from app.dialects import onnx as onnx_dialect
from app.dialects import openvino as ov_dialect
from app.dialects.common import Mode
from app.execute import _engine_spec
from app.lint.probe import Probe, ProbeSemantics, probe
from app.numbers import wire_number
from app.specs import AnySpec, AnyTarget, OnnxSpec, OpenVinoSpec

RUNNER = Path(__file__).with_name("bundle_runner.py")


def safe(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", label)


def _npy(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    if arr.dtype.name == "bfloat16":  # .npy has no bfloat16: store the bits (the manifest says so)
        arr = arr.view(np.uint16)
    np.save(buf, arr, allow_pickle=False)
    return buf.getvalue()


def npz(p: Probe) -> bytes:
    """inputs.npy and expected_<semantics>.npy in one .npz (a zip of .npy files, as np.savez writes it)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("inputs.npy", _npy(p.inputs))
        for s in p.semantics:
            if s.outputs is not None:
                z.writestr(f"expected_{safe(s.label)}.npy", _npy(s.outputs))
    return buf.getvalue()


def _dxdispatch(s: ProbeSemantics, x: np.ndarray, name: str) -> dict[str, Any]:
    """A DxDispatch JSON model (the documented format: array initializer, dispatch, print): the operator's desc
    on a [1, 1, 1, n] tensor of the probes; `print` writes "Resource 'output': ..." for run_bundle.py to read."""
    assert s.sem is not None and s.sem.spec is not None
    spec = s.sem.spec
    desc = json.loads(json.dumps(spec["desc"]))
    dtype = desc["InputTensor"]["DataType"]
    for t in ("InputTensor", "OutputTensor"):
        desc[t] = {"DataType": desc[t]["DataType"], "Sizes": [1, 1, 1, len(x)]}
    dt = s.sem.meaning.dtype
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


def _artifacts(s: ProbeSemantics, x: np.ndarray, name: str) -> tuple[dict[str, bytes], dict[str, Any]]:
    """The files that run this semantics, and its manifest entry's engine fields."""
    assert s.sem is not None
    m = s.sem.meaning
    if s.dialect == "onnx":
        spec = _engine_spec(s.sem, x, "onnx")
        assert isinstance(spec, OnnxSpec)
        raw = onnx_dialect.build_model(spec, m.scale_bias).SerializeToString()
        return {f"{name}.onnx": raw}, {"engine": "onnxruntime", "model": f"{name}.onnx"}
    if s.dialect == "openvino":
        spec_ov = _engine_spec(s.sem, x, "openvino")
        assert isinstance(spec_ov, OpenVinoSpec)
        xml, weights = ov_dialect.build_ir(spec_ov, m.scale_bias)
        files = {f"{name}.xml": xml.encode()}
        if weights:
            files[f"{name}.bin"] = weights
        return files, {"engine": "openvino", "model": f"{name}.xml", "weights": f"{name}.bin" if weights else None}
    model = _dxdispatch(s, x, name)
    return ({f"{name}.dxdispatch.json": (json.dumps(model, indent=2, allow_nan=False) + "\n").encode()},
            {"engine": "directml (DxDispatch, Windows)", "model": f"{name}.dxdispatch.json",
             "device_output": f"{name}.dxdispatch.txt"})


def build(spec: AnySpec, source: dict[str, Any], semantics: list[str | AnyTarget] | None = None,
          mode: Mode = Mode.LITERAL) -> bytes:
    """The zip's bytes."""
    p: Probe = probe(spec, semantics, mode)
    files: dict[str, bytes] = {"spec.json": (json.dumps(source, indent=2) + "\n").encode(),
                               "inputs.npy": _npy(p.inputs), "run_bundle.py": RUNNER.read_bytes()}
    entries = []
    for s in p.semantics:
        name = safe(s.label)
        entry: dict[str, Any] = {"label": s.label, "dialect": s.dialect, "error": s.error,
                                 "meaning": s.sem.meaning.describe() if s.sem else None, "reading": s.reading,
                                 "engine_notes": [f"{n.engine}: {n.text}" for n in s.sem.meaning.engine_notes]
                                 if s.sem else []}
        if s.outputs is not None and s.sem is not None:
            files[f"expected/{name}.npy"] = _npy(s.outputs)
            entry["expected"] = f"expected/{name}.npy"
            art, fields = _artifacts(s, p.inputs, name)
            files.update(art)
            entry.update(fields)
        entries.append(entry)
    manifest = {"format": "clipbridge-bundle/1", "tool": f"clipbridge {__version__}", "dtype": p.dtype.name,
                "npy_dtype": "uint16 (bfloat16 bits)" if p.dtype.name == "bfloat16" else p.dtype.name,
                "mode": mode.value, "probes": p.to_json()["inputs"], "differing": p.differing(),
                "semantics": entries}
    files["manifest.json"] = (json.dumps(manifest, indent=2, allow_nan=False) + "\n").encode()
    files["README.md"] = _readme(manifest).encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in sorted(files.items()):
            z.writestr(path, data)
    return buf.getvalue()


def _readme(manifest: dict[str, Any]) -> str:
    rows = "\n".join(f"| {e['label']} | {e.get('meaning') or e.get('error')} | {e.get('model') or '-'} |"
                     for e in manifest["semantics"])
    return f"""# clipbridge repro bundle

{len(manifest['probes'])} probe inputs of {manifest['dtype']} (`inputs.npy`), the output each dialect's
specification gives (`expected/<dialect>.npy`), and the op under each dialect:

| semantics | meaning | model |
|---|---|---|
{rows}

Run `python run_bundle.py` (needs numpy; runs onnxruntime and openvino when installed) for a per-dialect
diff against the expectations; exit 0 when everything that ran matches, 1 on a mismatch, 2 when no engine
could run. For DirectML, run `dxdispatch <label>.dxdispatch.json > <label>.dxdispatch.txt` on a Windows machine
(DxDispatch from microsoft/DirectML) and copy the .txt here: `run_bundle.py` reads the printed output from it.
A mismatch listed beside an engine note is a known engine deviation from its specification.
"""
