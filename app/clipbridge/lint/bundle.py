"""Repro bundles: a zip that lets anyone confirm a prediction on a real engine or device.

spec.json, manifest.json, inputs.npy, expected/<semantics>.npy, per semantics the op it runs (an ONNX model,
an OpenVINO IR, or a DxDispatch model of the DirectML operator), run_bundle.py (app/clipbridge/lint/bundle_runner.py)
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

from clipbridge import __version__
from clipbridge.engines import config as engine_config
from clipbridge.dialects import registry
from clipbridge.dialects.kit.common import Mode
from clipbridge.lint.probe import Probe, ProbeSemantics, probe
from clipbridge.reports import markdown
from clipbridge.reports.view import Heading, Paragraph, Table
from clipbridge.service.specs import AnySpec, AnyTarget

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


def _artifacts(s: ProbeSemantics, x: np.ndarray, name: str) -> tuple[dict[str, bytes], dict[str, Any]]:
    """The files that run this semantics elsewhere (its dialect's bundle hook), and its manifest entry's fields."""
    assert s.sem is not None
    hook = registry.DIALECTS[s.dialect].bundle
    return hook(s.sem, x, name) if hook is not None else ({}, {})


def build(spec: AnySpec, source: dict[str, Any], semantics: list[str | AnyTarget] | None = None,
          mode: Mode = Mode.LITERAL, precision: str = "model") -> bytes:
    """The zip's bytes; `precision` ("model" or "deployed") is how run_bundle.py configures the engines."""
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
                "mode": mode.value, "precision": precision, "host": engine_config.host_facts(),
                "probes": p.to_json()["inputs"], "differing": p.differing(),
                "semantics": entries}
    files["manifest.json"] = (json.dumps(manifest, indent=2, allow_nan=False) + "\n").encode()
    files["README.md"] = _readme(manifest).encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in sorted(files.items()):
            z.writestr(path, data)
    return buf.getvalue()


def _readme(manifest: dict[str, Any]) -> str:
    return markdown.render([
        Heading(1, "clipbridge repro bundle"),
        Paragraph((f"{len(manifest['probes'])} probe inputs of {manifest['dtype']} (`inputs.npy`), the output each "
                   "dialect's", "specification gives (`expected/<dialect>.npy`), and the op under each dialect:")),
        Table(("semantics", "meaning", "model"), tuple(
            (e["label"], str(e.get("meaning") or e.get("error")), e.get("model") or "-")
            for e in manifest["semantics"])),
        Paragraph(README_RUN)])


README_RUN = (
    "Run `python run_bundle.py` (needs numpy; runs onnxruntime and openvino when installed) for a per-dialect",
    "diff against the expectations; exit 0 when everything that ran matches, 1 on a mismatch, 2 when no engine",
    "could run. For DirectML, run `dxdispatch <label>.dxdispatch.json > <label>.dxdispatch.txt` on a Windows machine",
    "(DxDispatch from microsoft/DirectML) and copy the .txt here: `run_bundle.py` reads the printed output from it.",
    "A mismatch listed beside an engine note is a known engine deviation from its specification.")
