"""The one parser of engine names, as the CLI's --engine, the API's `engine` and fleet's pins write them.

    NAME[:DEVICE][==VERSION][@f16]      onnxruntime, onnxruntime:cuda, openvino==2025.4.0, onnxruntime@f16

NAME and NAME:DEVICE are registry entries (clipbridge.engines.runtimes.registry); `==VERSION` runs that release in
an environment of its own (fleet, clipbridge.engines.venvs), so it is for a CPU engine with a distribution of its
own (onnx-reference is the core's onnx); `@f16` runs a float16 copy of the model (the precision trace,
clipbridge.diff.trace). Every refusal is a ClipBridgeError (422 / exit 2) naming `loc` and what is accepted.
"""

from __future__ import annotations

from dataclasses import dataclass

from clipbridge.core.errors import ClipBridgeError
from clipbridge.core.suggest import did_you_mean
from clipbridge.engines.runtimes import registry

PRECISIONS = ("f16",)
SYNTAX = "NAME, NAME:DEVICE, NAME==VERSION or NAME@f16 (e.g. onnxruntime:cuda, openvino==2025.4.0, onnxruntime@f16)"


@dataclass(frozen=True)
class EngineSpec:
    """An engine name taken apart: `key` is its registry entry, `label` how reports spell it back."""

    name: str  # the engine without device, pin or precision: onnxruntime
    device: str | None = None  # cuda, tensorrt, GPU
    pinned: str | None = None  # a release, run in its own environment
    precision: str | None = None  # f16: a float16 copy of the model

    @property
    def key(self) -> str:
        return f"{self.name}:{self.device}" if self.device else self.name

    @property
    def label(self) -> str:
        pin = f"=={self.pinned}" if self.pinned else ""
        return f"{self.key}{pin}" + (f"@{self.precision}" if self.precision else "")


def parse_engine_name(text: str, loc: str = "engine", role: str | None = "diff") -> EngineSpec:
    """`text` as an EngineSpec whose entry has `role`; a refusal names `loc` and the accepted values."""
    text = text.strip()
    rest, at, precision = text.partition("@")
    rest, eq, pinned = (p.strip() for p in rest.partition("=="))
    name, colon, device = (p.strip() for p in rest.partition(":"))
    choices = registry.names(role)
    if not name:
        raise ClipBridgeError(f"an engine name is empty: write {SYNTAX}", loc)
    if not any(c.partition(":")[0] == name for c in choices):
        hint = did_you_mean(name, [c.partition(":")[0] for c in choices])
        raise ClipBridgeError(f"unknown engine {name[:40]!r}; choose from {', '.join(choices)}"
                              + (f" (did you mean {hint!r}?)" if hint else ""), loc)
    if at and precision not in PRECISIONS:
        raise ClipBridgeError(f"engine {text[:60]!r}: the precision after @ is one of {', '.join(PRECISIONS)}", loc)
    if eq and not pinned:
        raise ClipBridgeError(f"engine {text[:60]!r}: write NAME==VERSION, e.g. openvino==2025.4.0", loc)
    spec = EngineSpec(name, _device(name, device, choices, loc) if colon else None, pinned or None,
                      precision or None)
    _check_pin(spec, loc)
    return spec


def _device(name: str, device: str, choices: tuple[str, ...], loc: str) -> str:
    """The registered spelling of NAME:DEVICE (devices compared case-insensitively: OpenVINO writes GPU)."""
    devices = [c.partition(":")[2] for c in choices if c.partition(":")[0] == name and ":" in c]
    found = next((d for d in devices if d.lower() == device.lower()), None)
    if found is None:
        have = f"its devices are {', '.join(f'{name}:{d}' for d in devices)}" if devices else "it runs on the CPU only"
        raise ClipBridgeError(f"engine {name!r} has no device {device[:40]!r}: {have}", loc)
    return found


def _check_pin(spec: EngineSpec, loc: str) -> None:
    if not spec.pinned:
        return
    if spec.device:
        raise ClipBridgeError(f"engine {spec.label!r}: a pinned release runs in an environment of its own, on the CPU "
                              "only; write NAME==VERSION or NAME:DEVICE", loc)
    rt = registry.get(spec.name)
    if rt is not None and rt.module == "onnx":  # the core's own onnx: its version is clipbridge's dependency
        raise ClipBridgeError(f"{spec.name} is onnx itself and is not pinned separately", loc)
