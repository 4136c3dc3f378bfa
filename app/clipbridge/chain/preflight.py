"""What a chain needs, checked before any environment is built, any model is read or any converter runs (issue 47).

Three things, in this order, each from the model's first bytes and the installed distributions only (no torch
import: the check answers in well under a second):
1. the stages: known names, no repeats, and the model kind each needs (`tflite` needs a `.pt2`): stages.parse;
2. the `[chain]` extra: each stage's converter and engine, and torch for a `.pt2` source (which only torch reads);
3. on the server, the LiteRT converter environment (the server never builds it). The CLI builds it after this
   check passes (cli/chain.py), and with `CLIPBRIDGE_CHAIN_BUILD=0` its hops say `not-installed` with the command.
   A `static` chain needs no environment: where it is not built, the LiteRT lowering is predicted from the source
   (chain/litert_static.py), so neither the server refuses nor the CLI builds for `--static`.

Every missing piece is named at once, each with its install command, in one error (`BackendUnavailable`: a 422
on the API, exit 2 on the CLI). A stage whose converter is missing is therefore never a surprise half-empty
chain; the library's `not-installed` hops (stagerun.convert) remain for a caller that skips this check."""

from __future__ import annotations

from clipbridge.chain import converter_env, stages
from clipbridge.core.errors import BackendUnavailable

# stage -> the modules of the [chain] extra it needs here: what reads or converts into it, and what runs it.
NEEDS: dict[str, tuple[str, ...]] = {
    "torch": ("torch",),  # torch.export.load reads the .pt2, and runs it eagerly
    "onnx": ("torch", "onnxscript", "onnxruntime"),  # torch.onnx.export(dynamo=True) needs onnxscript
    "openvino": ("openvino",),
    "tflite": ("ai_edge_litert",),  # converted in the converter environment, run here
    "tflite:builtin": ("ai_edge_litert",),
    "coreml": ("coremltools",),
}
ONNX_SOURCE = ("onnxruntime",)  # an ONNX source is read by onnx (core) and run on onnxruntime
DISTRIBUTIONS = {"ai_edge_litert": "ai-edge-litert"}  # module -> the distribution pip names


def needs(stage: str, source: str) -> tuple[str, ...]:
    """The modules a stage needs when the chain starts at `source`."""
    return ONNX_SOURCE if stage == source == "onnx" else NEEDS[stage]


def missing(names: list[str], source: str, server: bool, static: bool = False) -> list[str]:
    """Each missing piece with its install command, in chain order; [] when everything is here."""
    modules = [m for s in names for m in needs(s, source) if not stages.installed(m)]
    gaps = []
    if modules:
        dists = ", ".join(DISTRIBUTIONS.get(m, m) for m in dict.fromkeys(modules))
        gaps.append(f"{dists} {'is' if len(set(modules)) == 1 else 'are'} not installed: {stages.INSTALL_CHAIN}")
    if server and not static and any(s in stages.LITERT_STAGES for s in names) and converter_env.python() is None:
        gaps.append(converter_env.missing_hint())
    return gaps


def check(spec: str, model: bytes, loc: str, server: bool = False, static: bool = False) -> list[str]:
    """The chain's stages, or BackendUnavailable naming every missing piece with its command (module docstring);
    a wrong chain is the ClipBridgeError stages.parse raises. `model`: its bytes, or only the first four (the kind
    is all the check reads). `server`: the converter environment must be built, unless the chain is `static`."""
    source = stages.source_kind(model)
    names = stages.parse(spec, source, loc)
    gaps = missing(names, source, server, static)
    if gaps:
        raise BackendUnavailable(f"the chain {' -> '.join(names)} needs what is not installed here: "
                                 + "; ".join(gaps), loc)
    return names
