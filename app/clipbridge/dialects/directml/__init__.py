"""DirectML ELEMENT_WISE_CLIP / ELEMENT_WISE_CLIP1 as one dialect package (no engine on Linux: the meaning kernels
compute it; a repro bundle carries a DxDispatch model for Windows).

spec.py the wire models, dtypes.py DirectML's data-type names, tensor.py feature levels and tensor-desc rules,
meaning.py desc -> Meaning, emit.py Meaning -> desc, cpp.py the C++ artifact, engine.py the repro bundle,
catalogue.py rule texts, examples, readings and the capability row. This module builds `DIALECT`.

Imported by app/clipbridge/dialects/registry.py (and by scan/lint/diff/fix and tests above it); never by clipbridge.core, clipbridge.kernels
or clipbridge.engines. It imports only clipbridge.core, clipbridge.dialects.kit and itself."""

from __future__ import annotations

# Modules, not their functions: `emit` and `meaning` stay the submodules (a function imported under the same
# name would shadow them as package attributes).
from clipbridge.dialects.directml import catalogue, emit, engine, meaning
from clipbridge.dialects.directml.meaning import NAME
from clipbridge.dialects.directml.spec import DirectMLSpec, DirectMLTarget
from clipbridge.dialects.directml.tensor import feature_level_directml
from clipbridge.dialects.kit.base import Dialect, Resolved
from clipbridge.dialects.kit.tensor_bounds import with_tensor_bounds

__all__ = ["DIALECT", "NAME"]


def _packed_strides(sizes: list[int]) -> list[int]:
    out, acc = [], 1
    for s in reversed(sizes):
        out.append(acc)
        acc *= s
    return list(reversed(out))


def resolve(spec: DirectMLSpec) -> Resolved:
    """The desc validated, resolved and normalized; `strided` when its Strides are not the packed ones."""
    d = meaning.parse(spec)
    t = spec.desc.InputTensor
    strided = t.Strides is not None and t.Strides != _packed_strides(t.Sizes)
    return Resolved(NAME, meaning.resolve(d), meaning.normalize(d), list(t.Sizes), strided)


def target(version: str | None) -> DirectMLTarget:
    return DirectMLTarget(dialect="directml", feature_level=version)  # checked when emitting, located there


# Per-element bounds: ELEMENT_WISE_CLIP takes scalar Min/Max.
EMIT = with_tensor_bounds(emit.emit, None, "DirectML ELEMENT_WISE_CLIP")


DIALECT = Dialect(
    name=NAME, spec_model=DirectMLSpec, target_model=DirectMLTarget, resolve=resolve, emit=EMIT,
    target=target, check_version=feature_level_directml, capability=catalogue.capability,
    version_example="directml:5_0", strided_tensors=True, bundle=engine.bundle,
    artifacts={"cpp": "C++ filling the DirectML desc structs"}, rule_texts=catalogue.RULE_TEXTS,
    examples=catalogue.EXAMPLES, readings=catalogue.READINGS)
