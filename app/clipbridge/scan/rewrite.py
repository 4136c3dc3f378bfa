"""Rewrite every Clip of an ONNX model with explicit, typed bounds (Clip-11+ inputs), so that no default,
attribute cast or version-specific rule is left for a converter to read differently.

Decisions (README, "Model scan"):
- Each rewritten Clip computes exactly what the original computes per the ONNX spec: its bounds are the
  original's *effective* bounds as values of T (Clip-6's float attributes cast, Clip-11+'s defaults
  lowest()/max() written out). Where an engine departs from the spec (onnxruntime keeps +-inf for an absent
  float16 bound), the rewrite follows the spec; that is the point of making the bound explicit.
- A model below opset 11 is first converted with onnx.version_converter (the opset applies to every node).
- onnx's checker and converter are C++ that an upload can crash: both run in a sandbox worker (app/clipbridge/engines/native.py),
  so a crash answers 422 naming the stage and the server stays up (docs/isolation.md).
- Dynamic bounds, Clips in model-local functions, and Clips whose bound is external data are left as they are
  and reported as skipped. A model whose weights are external is rewritten without them (issue 46): its
  locations are detached while native code runs and put back as they were (clipbridge.scan.detach), so the
  rewritten .onnx sits beside the same data file; no file is opened.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import numpy_helper

from clipbridge.dialects.onnx.dtypes import onnx_name
from clipbridge.dialects.onnx.meaning import resolve
from clipbridge.dialects.onnx.model import Parsed, default_opset, ir_version_for
from clipbridge.dialects.onnx.versions import newest_known_opset
from clipbridge.dialects.kit.common import Mode
from clipbridge.core.errors import ArtifactError, UnsupportedTarget
from clipbridge.core.meaning import Bound, Meaning, Order
from clipbridge.engines.native import ConversionRefused, check_model, convert_version
from clipbridge.scan.detach import detach, reattach
from clipbridge.scan.onnx_scan import scan_onnx, scan_onnx_model
from clipbridge.scan.report import sniff, target_from_text
from clipbridge.scan.sites import Site
from clipbridge.scan.patterns import find
from clipbridge.scan.wire import Light, load_light
from clipbridge.dialects.onnx.spec import OnnxSpec
from clipbridge.service.translate import Resolved, translate_one


@dataclass
class Rewritten:
    model_bytes: bytes
    opset: int
    done: list[dict] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)

    def headers(self) -> dict[str, str]:
        return {"X-Clipbridge-Opset": str(self.opset), "X-Clipbridge-Rewritten": str(len(self.done)),
                "X-Clipbridge-Skipped": str(len(self.skipped)),
                "Content-Disposition": 'attachment; filename="rewritten.onnx"'}


def explicit_bounds_onnx(m: Meaning, opset: int) -> Meaning:
    """The meaning of a Clip-`opset` (>= 11) whose min/max inputs are m's effective bounds, typed as T."""
    spec = OnnxSpec(dialect="onnx", opset=opset, elem_type=onnx_name(m.dtype), min=m.lo, max=m.hi)
    return resolve(Parsed(spec))


def _same(a: Meaning, b: Meaning) -> bool:
    def v(x: Bound | None) -> object:
        return None if x is None else ("nan" if x.is_nan else x.value)
    crossed = a.crossed
    return (a.dtype is b.dtype and v(a.lower) == v(b.lower) and v(a.upper) == v(b.upper)
            and (not crossed or (a.order is b.order is Order.MAX_WINS)) and a.scale_bias is None)


def rewrite(data, target_text: str, opset: int | None = None) -> Rewritten:
    """The model with each Clip rewritten to explicit typed bounds; a per-clip report of before/after status."""
    target = target_from_text(target_text, "target")
    if sniff(data) != "onnx":
        raise ArtifactError("rewrite takes an ONNX model (an IR is read by /v1/models/inspect)", "model")
    light = load_light(data)  # checks the framing, and refuses a location outside the model's folder
    find(light.model)  # every clip-like node's bounds through the checked reader: a wrong type is a 400 naming it
    model = onnx.ModelProto()
    try:
        model.ParseFromString(bytes(data))
    except Exception:
        raise ArtifactError("the model is not an ONNX ModelProto (protobuf decoding failed)", "model") from None
    detached = detach(model)  # issue 46: external weights need not come; native code never sees their location
    valid_before = check_model(model) is None
    current = default_opset(model)
    want = opset if opset is not None else max(current, 11)
    if want < 11:
        raise UnsupportedTarget("rewrite writes Clip-11+ (typed bound inputs); choose opset >= 11", "opset")
    if want > newest_known_opset():
        raise UnsupportedTarget(f"opset {want} is newer than this onnx package knows "
                                f"({newest_known_opset()}); the rewritten model could not be checked",
                                "opset")
    # What each Clip computes is read before conversion: onnx.version_converter turns Clip-6's FLT_MAX
    # defaults into Clip-11's lowest()/max(), which differ for float16 (inf vs 65504) and double.
    originals = [s for s in scan_onnx(Light(model)) if s.pattern.startswith("Clip")]
    if want != current:
        try:
            model = convert_version(model, want)
        except ConversionRefused as exc:
            raise UnsupportedTarget(f"onnx.version_converter cannot take this model from opset {current} to "
                                    f"{want}: {exc.text}", "opset") from None
    model.ir_version = max(model.ir_version, ir_version_for(want))  # IR 3 would need inits as inputs
    sites, scanned = scan_onnx_model(Light(model))
    sites = [s for s in sites if s.pattern.startswith("Clip")]
    if scanned is not model:  # the sites point into a shape-inferred copy: edit that, with the value_info back
        _restore_value_info(scanned.graph, model.graph)
        model = scanned
    if len(sites) != len(originals):
        raise ArtifactError(f"onnx.version_converter changed the number of Clip nodes ({len(originals)} -> "
                            f"{len(sites)}); the model is not rewritten", "model")
    out = Rewritten(b"", want)
    taken = _names(model)
    for site, original in zip(sites, originals):  # the walk order is the node order, which conversion keeps
        # The converted Clip gives only its place and type: its bounds are replaced (version_converter writes
        # FLOAT Constants for a float16 Clip-6, which the rewrite then fixes).
        reason = _skip_reason(original) or _place_reason(site)
        if not reason and original.dtype is not site.dtype:
            reason = "onnx.version_converter changed its element type"
        if reason:
            out.skipped.append({"path": site.path, "node": site.node, "reason": reason})
            continue
        assert original.resolved is not None and site.ref is not None
        m = original.resolved.meaning
        new = explicit_bounds_onnx(m, want)
        if not _same(m, new):
            out.skipped.append({"path": site.path, "node": site.node,
                                "reason": f"{m.describe()} has no Clip-{want} form with explicit bounds"})
            continue
        before = translate_one(original.resolved, target, Mode.PRESERVE).status
        after = translate_one(Resolved("onnx", new, {}, site.shape), target, Mode.PRESERVE).status
        node, graph = site.ref
        names = []
        for side, value in (("min", new.lo), ("max", new.hi)):
            name = _fresh(f"{site.node.lstrip('#') or 'clip'}_{side}_clipbridge", taken)
            arr = np.asarray(m.dtype.array([value])[0], dtype=m.dtype.np_dtype).reshape(())
            graph.initializer.append(numpy_helper.from_array(arr, name))
            names.append(name)
        del node.input[1:]
        node.input.extend(names)
        for a in [a for a in node.attribute if a.name in ("min", "max")]:
            node.attribute.remove(a)
        out.done.append({"path": site.path, "node": site.node, "before": before, "after": after,
                         "bounds": [str(new.lo), str(new.hi)]})
    if valid_before:  # a model that was invalid already is not ours to judge
        verdict = check_model(model)
        if verdict is not None:
            raise ArtifactError(f"the rewritten model fails onnx.checker: {verdict}", "model")
    reattach(model, detached)  # the sender's own locations, as they were: the rewritten model sits beside its data
    out.model_bytes = model.SerializeToString()
    return out


def _graphs(g: onnx.GraphProto):
    """g and every subgraph in it, in node order (the same for a model and its shape-inferred copy)."""
    yield g
    for n in g.node:
        for a in n.attribute:
            for sub in ([a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)):
                yield from _graphs(sub)


def _restore_value_info(inferred: onnx.GraphProto, original: onnx.GraphProto) -> None:
    """Undo what shape inference added or refined, so that the rewrite changes nothing but the Clips."""
    for gi, go in zip(_graphs(inferred), _graphs(original), strict=True):
        for name in ("value_info", "input", "output"):
            field = getattr(gi, name)
            del field[:]
            field.extend(getattr(go, name))


def _place_reason(site: Site) -> str:
    if site.ref is None:
        return site.error or "not resolved"
    if site.ref[1] is None:
        return "inside a model-local function (rewrite the function body by hand)"
    return ""


def _skip_reason(site: Site) -> str:
    if site.error:
        return site.error
    if site.resolved is None or site.ref is None:
        return "not resolved"
    if site.ref[1] is None:
        return "inside a model-local function (rewrite the function body by hand)"
    if site.resolved.meaning.dynamic:
        return "its bounds are computed at run time"
    return ""


def _names(model: onnx.ModelProto) -> set[str]:
    names: set[str] = set()

    def walk(g: onnx.GraphProto) -> None:
        names.update(i.name for i in g.initializer)
        names.update(i.name for i in g.input)
        for n in g.node:
            names.update(n.output)
            names.update(n.input)
            for a in n.attribute:
                for sub in ([a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)):
                    walk(sub)
    walk(model.graph)
    return names


def _fresh(base: str, taken: set[str]) -> str:
    name, k = base, 1
    while name in taken:
        k += 1
        name = f"{base}_{k}"
    taken.add(name)
    return name
