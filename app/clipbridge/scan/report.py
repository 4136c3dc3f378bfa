"""Scan a model: find its clips, translate each to every target as /v1/translate does, summarize."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from clipbridge.dialects.kit.common import Mode
from clipbridge.dialects import registry
from clipbridge.scan.patterns import describe, find, readings
from clipbridge.core.errors import ArtifactError, ClipBridgeError, UnsupportedTarget
from clipbridge.service.field_errors import field_errors
from clipbridge.core.findings import Severity
from clipbridge.core.meaning import State
from clipbridge.core.numbers import wire_number
from clipbridge.scan.ir_scan import scan_ir
from clipbridge.scan.onnx_scan import scan_onnx
from clipbridge.scan.sites import Site
from clipbridge.scan.detach import detach
from clipbridge.scan.wire import load_light
from clipbridge.core.suggest import one_of
from clipbridge.service.translate import Translation, translate_one

if TYPE_CHECKING:  # annotations only: the unions import every dialect (app/clipbridge/service/specs.py)
    from clipbridge.service.specs import AnyTarget

STATUSES = ("exact", "drift", "unsupported")
SEVERITY_RANK = {Severity.INFO: 0, Severity.WARNING: 1, Severity.ERROR: 2}


def target_from_text(text: str, loc: str = "target") -> AnyTarget:
    """'onnx', 'onnx:11', 'openvino', 'openvino:opset13', 'directml', 'directml:5_0' -> a target."""
    name, _, version = text.strip().partition(":")
    name = name.strip().lower()
    d = registry.DIALECTS.get(name)
    if d is None:
        examples = ", ".join(x.version_example for x in registry.DIALECTS.values())
        raise UnsupportedTarget(one_of(f"A target is a dialect with an optional :version ({examples}); "
                                       "unknown dialect", name, registry.names()), loc)
    try:
        # The version is checked here, once, so a bad one is an error about this target even in a clip-less model.
        return d.target(d.check_version(version) if version else None)
    except ValidationError as exc:
        raise UnsupportedTarget(field_errors(exc.errors())[0]["msg"], loc) from None
    except ClipBridgeError as exc:
        raise UnsupportedTarget(exc.message, loc) from None


def expand_targets(texts: list[str] | None) -> list[str]:
    """The scan's columns: each item may list several targets ('onnx,stablehlo:1'); 'default' stands for the
    default columns (the registry's in_defaults dialects), 'all' for every registered dialect. None or nothing:
    the default columns. Defaults stay the in_defaults dialects so existing reports, baselines and CI keep their
    columns; another dialect is a column when asked for (--target default,stablehlo)."""
    out: list[str] = []
    for text in texts or []:
        for part in (p.strip() for p in text.split(",")):
            key = part.lower()
            names = registry.default_names() if key == "default" else registry.names() if key == "all" else [part]
            out += [n for n in names if n]  # a column asked for twice is two columns (as before)
    return out or list(registry.default_names())


SCANNED_AS_SITES = ("clip", "max-constant", "min-constant")  # already clips of the scan, with their findings


@dataclass
class ScanResult:
    format: str
    model: dict[str, Any]
    targets: list[tuple[str, AnyTarget]]
    sites: list[Site]
    translations: list[list[tuple[str, Translation]]] = field(default_factory=list)
    clip_like: list[dict[str, Any]] = field(default_factory=list)  # Relu, HardSigmoid, ... (app/clipbridge/scan/patterns.py)
    readings: dict[str, list[dict[str, str]]] = field(default_factory=dict)  # node -> its engine readings

    def to_json(self) -> dict[str, Any]:
        clips = []
        counts = {label: dict.fromkeys(STATUSES, 0) for label, _ in self.targets}
        worst: tuple[int, dict] | None = None
        for i, (site, trs) in enumerate(zip(self.sites, self.translations)):
            m = site.resolved.meaning if site.resolved else None
            clips.append({
                "id": i, "path": site.path, "node": site.node, "pattern": site.pattern,
                "nodes": [n for n in site.nodes if n], "input": site.input, "output": site.output,
                "dtype": site.dtype.name if site.dtype else None, "shape": site.shape,
                "spec": site.resolved.normalized if site.resolved else None,
                "meaning": m.to_json() if m else None, "scale_bias": _wire_sb(site.scale_bias),
                "findings": [f.to_json() for f in site.findings], "error": site.error,
                "translations": [{"label": label, "target": t.target, "status": t.status,
                                  "findings": [f.to_json() for f in t.findings]} for label, t in trs],
                "engine_readings": [r for n in dict.fromkeys(site.nodes) if n for r in self.readings.get(n, [])]})
            for label, t in trs:
                counts[label][t.status] += 1
                for f in t.findings:
                    rank = SEVERITY_RANK[f.severity]
                    if worst is None or rank > worst[0]:
                        worst = (rank, {**f.to_json(), "clip": i, "label": label})
        unresolved = sum(1 for s in self.sites if s.error)
        return {"format": self.format, "model": self.model,
                "targets": [{"label": label, "target": t.model_dump(mode="json", exclude_none=True)}
                            for label, t in self.targets],
                "clips": clips,
                "summary": {"clips": len(self.sites), "unresolved": unresolved,
                            "targets": [{"label": label, **counts[label]} for label, _ in self.targets],
                            "worst": worst[1] if worst else None},
                "clip_like": self.clip_like}


def _wire_sb(sb: dict | None) -> dict | None:
    if sb is None:
        return None
    return {"scale": wire_number(sb["scale"]), "bias": wire_number(sb["bias"]), "nodes": sb["nodes"]}


def sniff(data) -> str:
    """'openvino-ir' for XML, else 'onnx' (protobuf has no magic number; a failed parse says so)."""
    head = bytes(data[:64]).lstrip(b"\xef\xbb\xbf \t\r\n")
    return "openvino-ir" if head.startswith(b"<") else "onnx"


def scan(data, weights=None, targets: list[str] | None = None, mode: Mode = Mode.PRESERVE) -> ScanResult:
    """Every clip of an ONNX model or OpenVINO IR (bytes-like; an mmap keeps weights out of memory)."""
    labels = expand_targets(targets)
    tlist = [(label.strip(), target_from_text(label, f"target[{i}]")) for i, label in enumerate(labels)]
    fmt = sniff(data)
    if fmt == "onnx":
        if weights is not None:
            raise ArtifactError("'weights' is for an OpenVINO IR's .bin; an ONNX model carries its own", "weights")
        light = _load_onnx(data)
        detach(light.model)  # shape inference (native) sees no location of the upload's: clipbridge.scan.detach
        sites = scan_onnx(light)
        m = light.model
        info: dict[str, Any] = {
            "bytes": len(data), "ir_version": int(m.ir_version), "producer": m.producer_name or None,
            "opsets": {(i.domain or "ai.onnx"): int(i.version) for i in m.opset_import},
            "graph": m.graph.name, "nodes": len(m.graph.node), "functions": len(m.functions),
            "tensors_not_read": len(light.stubbed), "external_tensors": sorted(light.external)[:100]}
    else:
        sites = scan_ir(bytes(data), weights)
        info = {"bytes": len(data), "weights_bytes": len(weights) if weights is not None else None}
    result = ScanResult(fmt, info, tlist, sites)
    if fmt == "onnx":
        # Ops that clip without being a Clip (each engine's NaN rule differs): listed, not translated.
        likes = find(light.model)
        result.clip_like = [describe(c) for c in likes.values() if c.pattern not in SCANNED_AS_SITES]
        result.readings = {name: readings(c) for name, c in likes.items()}
    memo: dict[Any, Translation] = {}
    for site in sites:
        row: list[tuple[str, Translation]] = []
        r = site.resolved
        if r is not None and r.meaning.state is State.REJECTED:
            site.error = f"{r.dialect} refuses to build this clip: {r.meaning.reason}"
        elif r is not None and site.error is None:
            for label, target in tlist:
                key = (r.meaning, tuple(r.shape) if r.shape is not None else None, label, mode)
                if key not in memo:
                    memo[key] = translate_one(r, target, mode)
                row.append((label, memo[key]))
        result.translations.append(row)
    return result


def _load_onnx(data: Any) -> Any:
    """load_light, with what to send instead when the upload is no model at all (a JSON spec, an image, text)."""
    if bytes(data[:64]).lstrip()[:1] in (b"{", b"["):  # never the first byte of a ModelProto (wire type 3)
        raise ArtifactError("the model is JSON (a clip spec?), not an ONNX model or an OpenVINO IR: send a spec to "
                            "/v1/translate (clipbridge translate)", "model")
    try:
        return load_light(data)
    except ArtifactError as exc:
        if exc.message.startswith("the model is not"):  # the framing is wrong from the start: not a model file
            raise ArtifactError(f"{exc.message}: send an ONNX model (.onnx) or an OpenVINO IR (.xml, with its "
                                ".bin as 'weights')", exc.loc) from None
        raise


def worst_status(result: ScanResult) -> str:
    """'unsupported' when any clip cannot be translated (or read), else 'drift' if any drifts, else 'exact'."""
    statuses = {t.status for row in result.translations for _, t in row}
    if "unsupported" in statuses or any(s.error for s in result.sites):
        return "unsupported"
    return "drift" if "drift" in statuses else "exact"
