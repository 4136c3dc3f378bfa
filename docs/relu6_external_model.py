"""Build docs/relu6_external.onnx and docs/relu6_external.onnx.data, what the API page's upload examples send
(python docs/relu6_external_model.py): docs/relu6.onnx with every tensor's data in a file beside it, as torch's
exporter writes `MODEL.onnx.data`."""

from __future__ import annotations

import importlib.util
import tempfile
from pathlib import Path

import onnx

HERE = Path(__file__).resolve().parent
NAME = "relu6_external.onnx"


def build() -> tuple[bytes, bytes]:
    """(the .onnx, its .onnx.data): every tensor external, whatever its size, in one file."""
    spec = importlib.util.spec_from_file_location("docs_relu6_model", HERE / "relu6_model.py")
    relu6 = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(relu6)
    with tempfile.TemporaryDirectory() as d:
        onnx.save(relu6.build(), str(Path(d, NAME)), save_as_external_data=True, all_tensors_to_one_file=True,
                  location=f"{NAME}.data", size_threshold=0)
        return Path(d, NAME).read_bytes(), Path(d, f"{NAME}.data").read_bytes()


if __name__ == "__main__":
    model, data = build()
    (HERE / NAME).write_bytes(model)
    (HERE / f"{NAME}.data").write_bytes(data)
