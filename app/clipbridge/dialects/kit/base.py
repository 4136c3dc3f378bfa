"""The dialect interface: what every dialect module provides, so the rest of clipbridge never names one.

A dialect is registered once, in app/clipbridge/dialects/registry.py. translate, execute, capabilities (/v1/dialects),
the CLI's --target parser, scan reports, probes and the pydantic unions of specs and targets all read the
registry; none of them branches on a dialect's name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from clipbridge.dialects.kit.common import Emitted, Mode
from clipbridge.core.meaning import Meaning, NanInput


@dataclass(frozen=True)
class Resolved:
    """A source spec read, validated and resolved."""

    dialect: str
    meaning: Meaning
    normalized: dict[str, Any]
    shape: list | None
    strided: bool = False  # the source's tensor is strided or broadcast (only dialects with strided tensors)


def source_resolver(name: str, resolve: Callable[[Any], Meaning],
                    normalize: Callable[[Any], dict[str, Any]]) -> Callable[[Any], Resolved]:
    """A dialect's `resolve_source` for a spec model with a `shape` field: its meaning, its normalized JSON and its
    shape (the one place; seven dialects had the same three lines)."""
    def resolve_source(spec: Any) -> Resolved:
        return Resolved(name, resolve(spec), normalize(spec), spec.shape)
    return resolve_source


# (meaning, target model, mode, source shape) -> the target spec, its meaning, notes and artifacts
EmitFn = Callable[[Meaning, Any, Mode, "list | None"], Emitted]
# (semantics to run: .dialect, .meaning, .spec as JSON; the input array) -> the engine's output array
EngineFn = Callable[[Any, Any], Any]


@dataclass(frozen=True, eq=False)  # eq=False: hashed by identity, so a registry snapshot can key a cache
class Dialect:
    """One dialect's entry points. Everything dialect-specific stays behind these fields."""

    name: str  # the `dialect` tag of its spec and target models
    spec_model: type[BaseModel]  # the source spec (a pydantic model with `dialect: Literal[name]`)
    target_model: type[BaseModel]  # a target: `dialect` plus an optional version field
    resolve: Callable[[Any], Resolved]  # parse + validate + resolve to a Meaning + normalize
    emit: EmitFn  # a Meaning in this dialect, with findings
    target: Callable[["str | None"], BaseModel]  # the version part of "name:version" (None: newest) -> target
    check_version: Callable[[str], str]  # a version text checked now (ClipBridgeError/ValidationError if bad)
    capability: Callable[[], dict[str, Any]]  # /v1/dialects row: dialect, default_target, versions (dtypes, rules)
    version_example: str  # how a versioned target is written, for help and errors: "onnx:13"
    engines: Mapping[str, EngineFn] = field(default_factory=dict)  # backend name -> runner of this semantics
    # Repro bundles: (semantics, 1-D probe array, file stem) -> files that run it elsewhere, manifest fields
    bundle: "Callable[[Any, Any, str], tuple[dict[str, bytes], dict[str, Any]]] | None" = None
    strided_tensors: bool = False  # its tensors may be strided (others are dense: a note on translation)
    artifacts: Mapping[str, str] = field(default_factory=dict)  # what emit() puts in `artifacts`: key -> description
    # Among the defaults (translate's other dialects, scan columns, compare and probe semantics) or only when named.
    in_defaults: bool = True
    # Finding code (Code.value) -> (this dialect's rule, where it is written): the lint catalogue's per-dialect rows.
    rule_texts: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    # Named example source specs (JSON, valid for spec_model) for the inspector's forms and the docs.
    examples: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    # Readings (name -> one line with its source) when the dialect's documents and implementations disagree;
    # the first is the default. /v1/execute and /v1/compare take `reading` to choose one.
    readings: Mapping[str, str] = field(default_factory=dict)
    # The reading (a key of `readings`) that models this dialect's engine as observed rather than a document
    # (TensorRT: observed; WebNN: chromium): what `basis: engine` runs, and `shows: observed-engine` names. Never the
    # default: every dialect's default reading is its specification (issue 37).
    engine_reading: str | None = None
    # The NaN-input rule this dialect's engine was observed to follow on float tensors where the specification
    # propagates (OpenVINO's CPU plugin: NaN -> min, the engine note diff measures); `basis: engine` applies it.
    engine_nan_input: NanInput | None = None
    # Engine notes that depend on the host: a host fact (clipbridge.engines.config.host_facts key) -> its value -> the notes
    # that hold there. /v1/dialects `host` lists each with the values it holds on and whether it applies here.
    host_notes: Mapping[str, Mapping[str, tuple[Any, ...]]] = field(default_factory=dict)


def missing_interface(d: Any) -> list[str]:
    """The interface fields a registered object lacks or leaves uncallable (empty when it is a full dialect)."""
    out = []
    for name in ("resolve", "emit", "target", "check_version", "capability"):
        if not callable(getattr(d, name, None)):
            out.append(name)
    for name in ("spec_model", "target_model"):
        m = getattr(d, name, None)
        if not (isinstance(m, type) and issubclass(m, BaseModel) and "dialect" in m.model_fields):
            out.append(name)
    if not isinstance(getattr(d, "name", None), str):
        out.append("name")
    return out
