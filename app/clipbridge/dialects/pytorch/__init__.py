"""PyTorch `torch.clamp` / `clamp_min` / `clamp_max` / `F.hardtanh` / `F.relu6` (torch 2.13.0) as a clipbridge
dialect: `DIALECT`, its registry entry.

spec.py (models, dtypes, ops, sources), bounds.py (Scalar::to<T>, hardtanh limits, tensor bounds), meaning.py (the
rules; spec -> Meaning), emit.py (a Meaning -> a torch.clamp call, its Python line), export.py (what
torch.onnx.export writes, predicted), engine.py (torch as the "torch" engine; the real exporters), catalogue.py
(rule texts, examples, capability). app/clipbridge/dialects/registry.py imports this package, and scan/lint/diff/fix and tests
may import its modules; clipbridge.core, clipbridge.kernels and clipbridge.engines never do.
"""

from __future__ import annotations

from clipbridge.dialects.kit.base import Dialect
from clipbridge.dialects.pytorch import catalogue, emit, engine, meaning, spec

# Modules imported whole: `from .emit import emit` would shadow the submodule `emit` with the function.
DIALECT = Dialect(
    name=spec.NAME, spec_model=spec.PyTorchSpec, target_model=spec.PyTorchTarget, resolve=meaning.resolve_source,
    emit=emit.emit, target=emit.target, check_version=meaning.version_pytorch, capability=catalogue.capability,
    version_example="pytorch:2.13", engines={"torch": engine.run_torch}, artifacts=catalogue.ARTIFACTS,
    in_defaults=False, rule_texts=catalogue.RULE_TEXTS, examples=catalogue.EXAMPLES)

__all__ = ["DIALECT"]
