"""The capability matrix: per dialect and version, the dtypes, ranks and semantic rules in force.

Each row is the dialect's own capability() plus what every surface needs to show a dialect without naming it
(the inspector's forms and examples, the CLI's help, the lint catalogue): all read from the registry.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from pydantic import ValidationError

from clipbridge.engines import config as engine_config, extras as engines
from clipbridge.dialects.kit import runtime_support
from clipbridge.dialects import registry
from clipbridge.dialects.kit.base import Dialect
from clipbridge.core.errors import ClipBridgeError
from clipbridge.core.findings import CODE_DOCS
from clipbridge.core.meaning import EngineNote


def capabilities() -> dict[str, Any]:
    """/v1/dialects: each registered dialect's row, the finding codes, the runtime support table and the host
    facts the engines' answers depend on (with the host-dependent engine notes and where each applies), and which
    engine backends are installed."""
    return {**_capabilities(tuple(registry.DIALECTS.values())), "host": host(), "engines": engines.status()}


def host() -> dict[str, Any]:
    """This host's facts (app/clipbridge/engines/config.py) and each registered dialect's host-dependent engine notes
    (Dialect.host_notes): the host variants each holds on and whether it is attached here
    (docs/host-differences.md)."""
    facts = engine_config.host_facts()
    notes: dict[EngineNote, list[str]] = {}
    here: set[EngineNote] = set()
    for d in registry.DIALECTS.values():
        for fact, by_value in d.host_notes.items():
            for value, attached in by_value.items():
                for n in attached:
                    notes.setdefault(n, [])
                    if value != engine_config.BF16_UNKNOWN:  # "none of the measured variants": not a variant
                        notes[n].append(value)
            here.update(by_value.get(facts.get(fact), ()))
    return {**facts, "host_dependent_notes": [
        {"engine": n.engine, "text": n.text, "variants": variants, "applies_here": n in here}
        for n, variants in notes.items()]}


@lru_cache(maxsize=4)  # keyed on the registry's contents (dialects hash by identity)
def _capabilities(dialects: tuple[Dialect, ...]) -> dict[str, Any]:
    return {
        "dialects": [row(d) for d in dialects],
        "finding_codes": [{"code": c.value, "meaning": text} for c, text in CODE_DOCS.items()],
        "runtime_support": runtime_support.summary(),
    }


def row(d: Dialect) -> dict[str, Any]:
    """One dialect's /v1/dialects row: its capability() and the registry facts the inspector builds from."""
    return {**d.capability(), "in_defaults": d.in_defaults, "version_field": version_field(d),
            "version_example": d.version_example, "target_versions": target_versions(d),
            "examples": {name: dict(spec) for name, spec in d.examples.items()},
            "spec_schema": d.spec_model.model_json_schema(),
            "rule_texts": {code: {"rule": rule, "source": src} for code, (rule, src) in d.rule_texts.items()}}


def version_field(d: Dialect) -> str | None:
    """The target model's version field ('opset', 'version', 'feature_level'): the one beside `dialect`."""
    return next((f for f in d.target_model.model_fields if f != "dialect"), None)


def target_versions(d: Dialect) -> list[str]:
    """The versions a target selector offers: the default and each capability row's version that the dialect
    accepts as a target version (a row may name an op version instead, e.g. 'Clip-13': then only the default)."""
    cap = d.capability()
    field = version_field(d)
    default = cap["default_target"].get(field) if field else None
    out: list[str] = []
    for text in [*(str(v["version"]) for v in cap["versions"]), *([str(default)] if default is not None else [])]:
        try:
            d.check_version(text)
        except (ClipBridgeError, ValidationError, ValueError):
            continue
        if text not in out:
            out.append(text)
    return out


def default_version(d: Dialect) -> str | None:
    """The version a target of this dialect gets when none is named (its capability's default_target)."""
    field = version_field(d)
    value = d.capability()["default_target"].get(field) if field else None
    return None if value is None else str(value)


def target_forms() -> str:
    """'onnx[:13], openvino[:opset16], directml[:6_4], ...': every registered dialect as a target, for --help
    texts; the version shown is the one used when none is named (the real default, never a stale example)."""
    forms = []
    for d in registry.DIALECTS.values():
        version = default_version(d)
        forms.append(f"{d.name}[:{version}]" if version else d.name)
    return ", ".join(forms)


def default_help() -> str:
    """'default: onnx, openvino, directml (stablehlo on request)' for --help texts."""
    others = [n for n in registry.names() if n not in registry.default_names()]
    return "default: " + ", ".join(registry.default_names()) + (f" ({', '.join(others)} when named)" if others
                                                                 else "")
