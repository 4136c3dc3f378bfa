"""Run an ONNX model (bytes) on one engine, with chosen tensors marked as outputs. Runs in a sandbox child.

Marking is done on the ONNX graph (extra graph outputs), so that every engine sees the same marked model. Each
engine is loaded and run through its entry in the engine registry (clipbridge.engines.runtimes: one module per
engine, OpenVINO's kernel read-back included); this module owns what the diff adds around them: the marks, the
refusals (not installed, device absent, cannot load) and the bound on what one run returns.
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib.util import find_spec
from typing import Any

import numpy as np
import onnx

from clipbridge.engines.extras import DIFF_INSTALL, INSTALL_HINT
from clipbridge.engines import heap
from clipbridge.engines.errors import reduced
from clipbridge.engines.runtimes import registry
from clipbridge.engines.runtimes.gpu import DeviceUnavailable
from clipbridge.engines.runtimes.names import parse_engine_name
from clipbridge.diff import child
from clipbridge.diff.child import model_errors
from clipbridge.core.errors import BackendUnavailable, ClipBridgeError
from clipbridge.core.ondisk import folder_of, like



class EngineCannotLoad(ClipBridgeError):
    """An engine refused the model; the message quotes the engine's own words."""

    status = 422
    title = "An engine cannot load the model"


class EngineNotInstalled(BackendUnavailable):
    """An engine the diff needs is not installed here: the install's fault, never the model's (issue 37)."""

    title = "An engine is not installed"


def installed(engine: str) -> bool:
    """Whether the engine's module is on the path (its registry entry; an unknown name: a module of that name)."""
    rt = registry.get(engine)
    if rt is not None:
        return rt.installed()
    try:
        return find_spec(engine) is not None
    except (ImportError, ValueError):  # a broken or half-removed install
        return False


def not_installed(names: Iterable[str], loc: str = "engine") -> EngineNotInstalled:
    """The 422 naming the one-step install command, for engines that cannot be imported."""
    names = list(dict.fromkeys(names))
    extras = {rt.extra for n in names if (rt := registry.get(n)) is not None}
    how = (f"{DIFF_INSTALL} installs the diff's engines, onnxruntime and OpenVINO (from a checkout: "
           f"{INSTALL_HINT['diff']})") if extras <= {"onnxruntime", "openvino", ""} else \
        "; ".join(f"{n}: {rt.install_hint()}" for n in names if (rt := registry.get(n)) is not None)
    return EngineNotInstalled(f"{' and '.join(names)} {'is' if len(names) == 1 else 'are'} not installed: "
                              f"{how}; the model was not run", loc)


def require(names: Iterable[str], loc: str = "engine") -> None:
    """Refuse, before any work, a diff or fix whose engines are not all installed, or whose device is absent here
    (a GPU entry: no GPU, no provider), `loc` naming the option."""
    known = [e for e in names if registry.get(e) is not None]
    absent = [e for e in known if not installed(e)]
    if absent:
        raise not_installed(absent, loc)
    for e in known:
        if (why := registry.get(e).unavailable()) is not None:  # type: ignore[union-attr]
            raise DeviceUnavailable(f"{why}; the model was not run", loc)


def check_names(names: Iterable[str], allowed: tuple[str, ...], loc: str) -> None:
    """Refuse a name the diff cannot run, through the one parser (unknown, device, pin, precision): a pinned
    release is fleet's, NAME@f16 the precision trace's (clipbridge.diff.trace), a device spelt as registered."""
    for e in names:
        spec = parse_engine_name(e, loc)
        if spec.label != e and not spec.pinned and spec.key in allowed:
            raise ClipBridgeError(f"engine {e[:40]!r}: write {spec.label!r}", loc)
        if spec.pinned or spec.key not in allowed:
            raise ClipBridgeError(f"engine {e[:40]!r} cannot be diffed here (a pinned release runs in `clipbridge "
                                  f"fleet run`); choose from {', '.join(allowed)}", loc)


class ResultTooLarge(ClipBridgeError):
    """A marked run's results pass its share of the diff's memory budget (counted in the child, before anything
    is sent): tensors shape inference could not size (clipbridge.diff.passes sizes the others before the run)."""

    status = 422
    title = "The model's tensors are too large to diff"


@model_errors
def with_outputs(model_bytes: bytes, names: list[str], dtypes: dict[str, str] | None = None) -> bytes:
    """The model with `names` appended as graph outputs, typed from `dtypes` (the plan's, read once by the
    diff's prepare) or else by shape inference; an untyped output is still read by the engines. Skipping a
    second inference matters on large models (a 21 MB model: ~0.2 s of the diff)."""
    m = onnx.load_from_string(model_bytes)
    have = {o.name for o in m.graph.output}
    wanted = [n for n in dict.fromkeys(names) if n and n not in have]
    if not wanted:
        return model_bytes
    if dtypes is not None:
        typed = {n: onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtypes[n])) for n in wanted if n in dtypes}
        return child.appended(model_bytes, outputs=[onnx.helper.make_tensor_value_info(n, typed[n], None) if n in typed
                                                    else onnx.helper.make_empty_tensor_value_info(n) for n in wanted])
    try:
        inferred = {v.name: v for v in onnx.shape_inference.infer_shapes(model_bytes, strict_mode=False).graph.value_info}
    except Exception:  # inference is a best effort; an untyped output is still read by the engines
        inferred = {}
    return child.appended(model_bytes, outputs=[inferred.get(n) or onnx.helper.make_empty_tensor_value_info(n)
                                                for n in wanted])


def _load_error(engine: str, exc: Exception, model_bytes: bytes = b"") -> ClipBridgeError:
    """The engine's refusal, reduced (clipbridge.engines.errors: its own text may quote what it read)."""
    if isinstance(exc, ImportError):  # found on the path but not importable: the install, not the model
        return not_installed([engine])
    return reduced(EngineCannotLoad, engine, "cannot load the model", exc, model_bytes)


def version(engine: str) -> str:
    rt = registry.get(engine)
    return (rt.ran_version() if rt is not None else None) or "absent"


def _ran(engine: str, model_bytes: bytes, feeds: dict[str, np.ndarray], precision: str,
         kernels: bool) -> tuple[dict, dict]:
    """Load and run on the engine's registry entry: a refusal to load quotes the engine (EngineCannotLoad)."""
    rt = registry.get(engine)
    if rt is None or rt.load is None:  # run.Options.check refuses these first; a direct caller gets the same words
        raise ClipBridgeError(f"unknown engine {engine[:40]!r}; choose from {', '.join(registry.names('diff'))}",
                              "engine")
    if folder_of(model_bytes) is not None:  # a model whose weights are large: the last engine's pages back first
        heap.before(engine)
    try:
        session = rt.load(model_bytes, precision)
    except DeviceUnavailable:
        raise
    except Exception as exc:  # each engine raises its own types (Fail, RuntimeError, ...): the user's model
        raise _load_error(engine, exc, model_bytes) from None
    try:
        return session.run(feeds, kernels)
    finally:
        del session  # before the next session loads: one copy of a large model's weights at a time


def run(engine: str, model_bytes: bytes, feeds: dict[str, np.ndarray], marks: list[str],
        precision: str = "model", kernels: bool = True, limit: tuple[int, str] | None = None) -> dict[str, Any]:
    """Run `engine` on the model with `marks` added as outputs. Module-level, so that a sandbox child runs it.
    `limit`: (bytes, the setting naming them) the results may hold, a diff's marked runs' share of its budget.

    Returns {"values": {tensor: array}, "precision": as it ran, "kernels": {...}, "version": ...}."""
    require([engine])  # here too, for every caller (fix, bundles): a missing engine is never the model's fault
    marked = like(model_bytes, with_outputs(model_bytes, marks)) if marks else model_bytes
    try:
        # The runtime model's kernels are read where the walk uses them (the marked run), not in a plain run.
        values, info = _ran(engine, marked, feeds, precision, kernels)
    except ClipBridgeError:
        raise
    except Exception as exc:  # the engine loaded the model but failed running it: its own words, a 4xx
        raise reduced(EngineCannotLoad, engine, "failed running the model", exc, marked) from None
    held = sum(int(np.asarray(v).nbytes) for v in values.values())
    if limit is not None and held > limit[0]:
        raise ResultTooLarge(f"{engine}'s results hold {held} bytes (limit {limit[0]} bytes per engine run, its "
                             f"share of the diff's memory budget): raise {limit[1]}", limit[1])
    return {"values": {k: np.asarray(v) for k, v in values.items()}, **info, "version": version(engine)}
