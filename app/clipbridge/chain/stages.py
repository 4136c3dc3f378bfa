"""The stages a chain may name, what each is converted from, and what converts and runs it."""

from __future__ import annotations

from dataclasses import dataclass
from importlib.util import find_spec

from clipbridge.chain import converter_env
from clipbridge.core.errors import ClipBridgeError

STAGES = ("torch", "onnx", "openvino", "tflite", "tflite:builtin", "coreml")
INSTALL_CHAIN = 'pip install "clipbridge[chain]"'
LITERT_STAGES = ("tflite", "tflite:builtin")
ENV = converter_env.NAME
LITERT_VERSION = converter_env.NAME.rpartition("-")[2]


@dataclass(frozen=True)
class Converter:
    name: str  # the distribution, as `pip show` names it
    module: str  # the module that proves it is installed
    options: dict[str, str]
    version: str | None = None  # pinned in an environment of its own (else the installed distribution's)


CONVERTERS: dict[str, Converter] = {
    "onnx": Converter("torch", "torch", {"api": "torch.onnx.export", "dynamo": "True"}),
    "openvino": Converter("openvino", "openvino", {"api": "openvino.convert_model"}),
    # litert-torch runs in an environment of its own (converter_env.py): `module` is not looked up here.
    "tflite": Converter("litert-torch", "litert_torch", {"api": "litert_torch.convert", "environment": ENV},
                        LITERT_VERSION),
    "tflite:builtin": Converter("litert-torch", "litert_torch", {"api": "litert_torch.convert", "environment": ENV},
                        LITERT_VERSION),
    "coreml": Converter("coremltools", "coremltools", {"api": "coremltools.convert", "convert_to": "mlprogram"}),
}
# stage -> (engine, delegate) it runs on; coreml only predicts on Apple hardware.
ENGINES: dict[str, tuple[str, str | None]] = {
    "torch": ("torch", "eager"), "onnx": ("onnxruntime", "CPUExecutionProvider"), "openvino": ("openvino", "CPU"),
    "tflite": ("ai-edge-litert", "xnnpack (default)"),
    "tflite:builtin": ("ai-edge-litert", "none (BUILTIN_WITHOUT_DEFAULT_DELEGATES)"),
    "coreml": ("coremltools", None),
}


def source_kind(model: bytes) -> str:
    """A .pt2 is a zip archive (torch.export.save); anything else is read as an ONNX model."""
    return "torch" if model[:4] == b"PK\x03\x04" else "onnx"


def installed(module: str) -> bool:
    """Whether a converter's module can be imported (found on the path, not imported: torch costs seconds)."""
    try:
        return find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def missing_converter(stage: str) -> str | None:
    """The install hint for a stage whose converter is not installed here, else None (LiteRT: the converter
    environment is not built, and the command that builds it)."""
    if stage in LITERT_STAGES:
        return None if converter_env.python() else converter_env.missing_hint()
    conv = CONVERTERS.get(stage)
    if conv is None or installed(conv.module):
        return None
    return f"{conv.name} is not installed: {INSTALL_CHAIN}"


def parse(spec: str, source: str, loc: str = "chain") -> list[str]:
    """The comma list of stages, checked: known names, no repeats, starting at the model's own kind
    (`torch` for a .pt2, `onnx` for an ONNX model; the source is added in front when the list omits it)."""
    items = [s.strip() for s in spec.split(",") if s.strip()]
    if not items:
        raise ClipBridgeError(f"the chain is empty; name stages from {', '.join(STAGES)}", loc)
    for s in items:
        if s not in STAGES:
            raise ClipBridgeError(f"unknown stage {s[:40]!r}; choose from {', '.join(STAGES)}", loc)
    if len(set(items)) != len(items):
        raise ClipBridgeError("a stage is named twice", loc)
    if source == "onnx" and any(s in ("torch", "tflite", "tflite:builtin", "coreml") for s in items):
        bad = next(s for s in items if s in ("torch", "tflite", "tflite:builtin", "coreml"))
        raise ClipBridgeError(f"an ONNX model starts the chain at onnx; {bad!r} needs a .pt2 (torch.export.save)",
                              loc)
    if items[0] != source:
        items = [source, *[s for s in items if s != source]]
    return items


def converted_from(stage: str, chain: list[str]) -> str:
    """The stage a stage is converted from: openvino from onnx when the chain has it (else the ExportedProgram);
    tflite:builtin runs the tflite file when there is one; everything else from torch."""
    if stage == "openvino":
        return "onnx" if "onnx" in chain else "torch"
    if stage == "tflite:builtin" and "tflite" in chain:
        return "tflite"
    return chain[0] if chain[0] == "onnx" else "torch"
