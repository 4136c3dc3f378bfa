"""Sweep the artifacts clipbridge emits through the installed engines (onnxruntime and openvino, CPU).

Two products, from one sweep over opset x dtype x bounds:

* the **runtime support table** (`app/clipbridge/data/runtime_support.json`, read by clipbridge.dialects.kit.runtime_support): which emitted
  artifacts an engine cannot load or run, with the engine's own reason;
* the **deviation miner**: every artifact that runs is fed the critical inputs (bounds and their neighbours,
  type extremes, zeros, NaN, +-inf, subnormals, integers beyond 2^53) and its outputs are compared with the
  dialect's spec meaning (clipbridge.core.evaluate.evaluate); every difference is a deviation.

    python -m tests.engines.sweep --write      # re-derive the table and write it
    python -m tests.engines.sweep --mine       # list the deviations (tests/engines/test_deviation_miner.py
                                               # fails on any that is not recorded as an engine note)
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from clipbridge.engines import config as engine_config
from clipbridge.dialects.kit import runtime_support
from clipbridge.dialects.onnx.dtypes import onnx_name
from clipbridge.dialects.onnx.meaning import resolve
from clipbridge.dialects.onnx.model import build_model
from clipbridge.dialects.onnx.versions import CLIP_VERSIONS, newest_known_opset, schema_for_opset
from clipbridge.dialects.openvino import ir as ov_ir, meaning as d_ov
from clipbridge.dialects.openvino.dtypes import element_type_name as ov_element_type
from clipbridge.core.drift import critical_points
from clipbridge.core.dtypes import ALL, DType
from clipbridge.core.evaluate import evaluate
from clipbridge.core.meaning import Meaning, State, same_outputs
from clipbridge.dialects.onnx.spec import OnnxSpec
from clipbridge.dialects.openvino.spec import OpenVinoSpec

BOUND_SHAPES = ("none", "min", "max", "both")  # which ONNX bounds are given (Clip-11+ inputs, Clip-1/6 attributes)


# --- engines -----------------------------------------------------------------------------------------------------

def engine_versions() -> dict[str, str]:
    import onnxruntime
    import openvino
    return {"onnxruntime": onnxruntime.__version__, "openvino": openvino.__version__.split("-")[0]}


@lru_cache(maxsize=512)
def _ort_session(raw: bytes) -> Any:
    """The session the app would run (engine_config's options, precision "model": pinned, no graph rewrites)."""
    import onnxruntime as ort
    opts, _ = engine_config.onnxruntime_options("model")
    opts.log_severity_level = 4  # the sweep provokes refusals on purpose: keep their log lines out of the output
    return ort.InferenceSession(raw, opts, providers=["CPUExecutionProvider"])


@lru_cache(maxsize=512)
def _ov_compiled(xml: str, weights: bytes) -> Any:
    """The compiled model the app would run (engine_config, precision "model": the model's own element type)."""
    return engine_config.openvino_compile(engine_config.openvino_read(xml, weights), "model")[0]


def run_onnx(spec: OnnxSpec, x: np.ndarray | None) -> np.ndarray | None:
    """Load the emitted model in onnxruntime (raises what the engine raises); run it on x when given."""
    raw = build_model(spec).SerializeToString()
    session = _ort_session(raw)
    if x is None:
        return None
    return np.asarray(session.run(None, {"input": x})[0])


def run_openvino(spec: OpenVinoSpec, x: np.ndarray | None) -> np.ndarray | None:
    """Compile the emitted IR on the CPU plugin (raises what the engine raises); run it on x when given."""
    import openvino as ov
    xml, weights = ov_ir.build_ir(spec)
    compiled = _ov_compiled(xml, weights)
    if x is None:
        return None
    req = compiled.create_infer_request()
    if x.dtype.name == "bfloat16":  # the Python API has no NumPy bfloat16: hand the bits over
        t = ov.Tensor(ov.Type.bf16, ov.Shape(list(x.shape)))
        t.data.view(np.uint16)[...] = x.view(np.uint16)
        req.infer({0: t})
        return np.array(req.get_output_tensor(0).data.view(np.uint16)).view(x.dtype)
    req.infer({0: ov.Tensor(np.ascontiguousarray(x))})
    return np.array(req.get_output_tensor(0).data)


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text.replace("[ONNXRuntimeError] : ", "")[:240]


# --- what the sweep visits ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Artifact:
    """One emitted artifact: which runtime runs it, the op version and dtype, and the spec it is built from."""

    runtime: str
    op_version: str
    dtype: DType
    bounds: str  # BOUND_SHAPES for ONNX; "both" for OpenVINO (Clamp-1 requires them)
    spec: OnnxSpec | OpenVinoSpec
    opset: int | None = None
    label: str = ""


def onnx_opsets(full: bool) -> list[int]:
    """Every opset (full), else each Clip version's first and last opset (the table's key is the Clip version)."""
    newest = newest_known_opset()
    if full:
        return list(range(1, newest + 1))
    firsts = [s.since for s in CLIP_VERSIONS]
    lasts = [n - 1 for n in firsts[1:]] + [newest]
    return sorted(set(firsts + lasts))


def _small_bounds(dt: DType) -> tuple[Any, Any]:
    return (0.0, 6.0) if dt.is_float else (0, 6)


def support_artifacts(full: bool = False) -> Iterator[Artifact]:
    """Opset x dtype x which bounds are given, for ONNX; dtype x static/dynamic shape, for OpenVINO."""
    for opset in onnx_opsets(full):
        schema = schema_for_opset(opset)
        for dt in schema.dtypes:
            lo, hi = _small_bounds(dt)
            for shape in BOUND_SHAPES:
                spec = OnnxSpec(dialect="onnx", opset=opset, elem_type=onnx_name(dt),
                                min=lo if shape in ("min", "both") else None,
                                max=hi if shape in ("max", "both") else None)
                yield Artifact("onnxruntime", schema.name, dt, shape, spec, opset)
    for dt in ALL:
        lo, hi = _small_bounds(dt)
        for shape in (None, [4]):
            spec = OpenVinoSpec(dialect="openvino", version=f"opset{d_ov.LATEST_OPSET}",
                                element_type=ov_element_type(dt), min=lo, max=hi, shape=shape)
            yield Artifact("openvino", d_ov.CLAMP_VERSION, dt, "both", spec)


def try_artifact(a: Artifact) -> str | None:
    """None when the runtime loads the artifact and runs it on a small input; else the engine's reason."""
    x = a.dtype.array([1, 2, 3, 4])
    try:
        if a.runtime == "onnxruntime":
            if a.dtype.name == "bfloat16":
                run_onnx(a.spec, None)  # onnxruntime's Python API takes no NumPy bfloat16: loading is the check
            else:
                run_onnx(a.spec, x)
        else:
            run_openvino(a.spec, x)
    except Exception as exc:  # the engine refuses: that is what is being measured
        return _reason(exc)
    return None


INF, NAN = math.inf, math.nan
# Non-finite bounds, by value class (a single-sided class gives the other bound 0 or 6): what the type-level
# table above cannot see, since an engine may refuse a value (Clip-6: min > max, NaN) where it runs the type.
NON_FINITE = {"min-inf": (-INF, 6.0), "max+inf": (0.0, INF), "both-inf": (-INF, INF), "min+inf": (INF, 6.0),
              "max-inf": (0.0, -INF), "min-nan": (NAN, 6.0), "max-nan": (0.0, NAN), "both-nan": (NAN, NAN)}


def value_artifacts(full: bool = False) -> Iterator[Artifact]:
    """Every ONNX opset (full; else each Clip version's first and last) x every dtype x each non-finite class
    the spec accepts for it, and OpenVINO Clamp-1 x every dtype x each class its spec accepts (an infinite
    attribute; NaN and min > max are refused by the spec itself). `bounds` holds the class."""
    for opset in onnx_opsets(full):
        schema = schema_for_opset(opset)
        for dt in schema.dtypes:
            for cls, (lo, hi) in NON_FINITE.items():
                try:
                    spec = OnnxSpec(dialect="onnx", opset=opset, elem_type=onnx_name(dt), min=lo, max=hi)
                    resolve(spec)
                except Exception:  # a typed integer bound cannot be non-finite: the spec refuses it
                    continue
                yield Artifact("onnxruntime", schema.name, dt, cls, spec, opset, cls)
    for dt in ALL:
        for cls, (lo, hi) in NON_FINITE.items():
            spec = OpenVinoSpec(dialect="openvino", version=f"opset{d_ov.LATEST_OPSET}",
                                element_type=ov_element_type(dt), min=lo, max=hi)
            try:
                if d_ov.resolve(spec).state is State.REJECTED:
                    continue
            except Exception:  # an infinite attribute the element type refuses
                continue
            yield Artifact("openvino", d_ov.CLAMP_VERSION, dt, cls, spec, None, cls)


def sweep_values(full: bool = False) -> list[dict[str, Any]]:
    """Which non-finite bound classes each runtime refuses, per op version and dtype (refusals only)."""
    versions = engine_versions()
    rows: dict[tuple, dict[str, Any]] = {}
    for a in value_artifacts(full):
        reason = try_artifact(a)
        if reason is None:
            continue
        row = rows.setdefault((a.runtime, a.op_version, a.dtype.name), {
            "runtime": a.runtime, "version": versions[a.runtime], "op_version": a.op_version, "dtype": a.dtype.name,
            "values": [], "reason": reason})
        if a.bounds not in row["values"]:
            row["values"].append(a.bounds)
    for row in rows.values():
        row["values"] = [c for c in NON_FINITE if c in row["values"]]
    return sorted(rows.values(), key=lambda e: (e["runtime"], e["op_version"], e["dtype"]))


def sweep_support(full: bool = False) -> dict[str, Any]:
    """The runtime support table, derived by running every artifact."""
    versions = engine_versions()
    failing: dict[tuple, dict[str, Any]] = {}
    checked: dict[tuple, set] = {}
    for a in support_artifacts(full):
        key = (a.runtime, a.op_version, a.dtype.name)
        checked.setdefault((a.runtime, a.op_version), set()).add(a.dtype.name)
        reason = try_artifact(a)
        if reason is None:
            continue
        entry = failing.setdefault(key, {"runtime": a.runtime, "version": versions[a.runtime], "device": "CPU",
                                         "dialect": "onnx" if a.runtime == "onnxruntime" else "openvino",
                                         "op_version": a.op_version, "dtype": a.dtype.name, "bounds": [],
                                         "opsets": [], "reason": reason})
        if a.bounds not in entry["bounds"]:
            entry["bounds"].append(a.bounds)
        if a.opset is not None and a.opset not in entry["opsets"]:
            entry["opsets"].append(a.opset)
    rows = []
    for entry in failing.values():
        entry["bounds"] = [b for b in BOUND_SHAPES if b in entry["bounds"]]
        entry["opsets"] = sorted(entry["opsets"])
        rows.append(entry)
    return {
        "generated_by": "python -m tests.engines.sweep --write",
        "runtimes": [{"runtime": r, "version": v, "device": "CPU"} for r, v in versions.items()],
        "checked": [{"runtime": r, "op_version": op, "dtypes": sorted(d)} for (r, op), d in sorted(checked.items())],
        "cannot_run": sorted(rows, key=lambda e: (e["runtime"], e["op_version"], e["dtype"])),
        "non_finite_classes": {k: [_json_number(v) for v in pair] for k, pair in NON_FINITE.items()},
        "refuses_non_finite": sweep_values(full),
    }


def _json_number(v: float) -> float | str:
    return v if math.isfinite(v) else ("nan" if math.isnan(v) else ("inf" if v > 0 else "-inf"))


# --- the deviation miner -------------------------------------------------------------------------------------------

BIG = 2**53


def probe(dt: DType, meaning: Meaning) -> np.ndarray:
    """Critical inputs: drift.critical_points plus integers around +-2^53 for the 64-bit types."""
    pts = critical_points(dt, (meaning,))
    if dt.bits == 64 and not dt.is_float:
        extra = [v for v in (BIG - 1, BIG, BIG + 1, -BIG - 1, -BIG, 2**63 - 1, 2**62 + 1) if dt.contains(v)]
        pts = np.concatenate([pts, dt.array(extra)])
    return pts


def _bounds_cases(dt: DType) -> dict[str, tuple[Any, Any]]:
    """Bounds for the miner: ordinary, fractional, at and beyond the type's extremes, NaN, crossed, beyond 2^53."""
    if dt.is_float:
        out = {"small": (0.0, 6.0), "frac": (-1.25, 2.7), "extremes": (dt.lowest(), dt.highest()),
               "inf": (-math.inf, math.inf), "tiny": (-(2.0**-130), 2.0**-130), "equal": (3.0, 3.0),
               "nan-min": (math.nan, 6.0), "crossed": (5.0, 1.0)}
        return out
    lo, hi = dt.lowest(), dt.highest()
    out = {"small": (0, 6) if lo == 0 else (-6, 6), "extremes": (lo, hi), "equal": (3, 3), "crossed": (5, 1),
           "frac": (1.5, 4.5) if lo == 0 else (-1.5, 2.5), "below-range": (-100.7, -1),
           "above-range": (hi + 0.5, hi + 1000.5) if dt.bits < 64 else (float(hi) * 2, float(hi) * 4)}
    if dt.bits == 64:
        out["beyond-2^53"] = (BIG + 1, BIG + 3) if lo == 0 else (-BIG - 1, BIG + 1)
    return out


@dataclass
class Deviation:
    """Inputs where an engine's output differs from the spec meaning of the artifact it ran."""

    runtime: str
    op_version: str
    dtype: str
    case: str
    spec: dict[str, Any]
    inputs: list[Any] = field(default_factory=list)
    expected: list[Any] = field(default_factory=list)
    got: list[Any] = field(default_factory=list)
    notes: tuple[str, ...] = ()  # the engine notes the meaning already carries for this runtime
    artifact: Artifact | None = field(default=None, repr=False)
    meaning: Meaning | None = field(default=None, repr=False)

    def line(self) -> str:
        pairs = ", ".join(f"{i!r}: {g!r} (spec {e!r})" for i, e, g in
                          zip(self.inputs[:4], self.expected[:4], self.got[:4], strict=False))
        return f"{self.runtime} {self.op_version} {self.dtype} [{self.case}] {self.spec}: {pairs}"


def miner_artifacts(full: bool = False) -> Iterator[tuple[Artifact, Meaning]]:
    """Every runnable (per the table) artifact over the miner's bounds, with the meaning it must compute."""
    opsets = onnx_opsets(full) if full else [s.since for s in CLIP_VERSIONS]
    for opset in opsets:
        schema = schema_for_opset(opset)
        for dt in schema.dtypes:
            for case, (lo, hi) in _bounds_cases(dt).items():
                for shape in ("both", "none") if case == "small" else ("both",):
                    try:
                        spec = OnnxSpec(dialect="onnx", opset=opset, elem_type=onnx_name(dt),
                                        min=lo if shape == "both" else None, max=hi if shape == "both" else None)
                        m = resolve(spec)
                    except Exception:  # a bound the typed schema refuses (e.g. -100.7 for an int): not emitted
                        continue
                    if runtime_support.cannot_run("onnxruntime", schema.name, dt.name, shape):
                        continue
                    label = case if shape == "both" else "no-bounds"
                    yield Artifact("onnxruntime", schema.name, dt, shape, spec, opset, label), m
    for dt in ALL:
        for case, (lo, hi) in _bounds_cases(dt).items():
            for shape in (None, [1]):
                spec = OpenVinoSpec(dialect="openvino", version=f"opset{d_ov.LATEST_OPSET}",
                                    element_type=ov_element_type(dt), min=lo, max=hi, shape=shape)
                m = d_ov.resolve(spec)
                if m.state is State.REJECTED:
                    continue
                yield Artifact("openvino", d_ov.CLAMP_VERSION, dt, "both", spec, None,
                               case + ("-static" if shape else "")), m


def _engine_output(a: Artifact, x: np.ndarray) -> np.ndarray:
    if a.runtime == "onnxruntime":
        return run_onnx(a.spec, x)  # type: ignore[arg-type, return-value]
    if a.spec.shape:  # a static shape: feed one element at a time
        return np.concatenate([run_openvino(a.spec, x[i:i + 1]) for i in range(len(x))])  # type: ignore[arg-type]
    return run_openvino(a.spec, x)  # type: ignore[arg-type, return-value]


def mine(full: bool = False) -> list[Deviation]:
    """Every deviation of an installed engine from the spec meaning of the artifact it ran."""
    out = []
    for a, m in miner_artifacts(full):
        if a.runtime == "onnxruntime" and a.dtype.name == "bfloat16":
            continue  # no NumPy bfloat16 input through onnxruntime's Python API
        x = probe(a.dtype, m)
        try:
            got = _engine_output(a, x)
        except Exception:  # value-dependent refusals (Clip-1/6 min > max) are engine notes of their own
            continue
        with np.errstate(all="ignore"):
            want = evaluate(m, x)
        bad = ~same_outputs(want, got.reshape(want.shape).astype(want.dtype))
        if not bad.any():
            continue
        idx = np.flatnonzero(bad)
        dt = a.dtype
        out.append(Deviation(a.runtime, a.op_version, dt.name, a.label, a.spec.model_dump(mode="json",
                                                                                          exclude_none=True),
                             [dt.to_python(x[i]) for i in idx], [dt.to_python(want[i]) for i in idx],
                             [dt.to_python(got.reshape(-1)[i]) for i in idx],
                             tuple(n.text for n in m.engine_notes if n.engine.startswith(a.runtime)), a, m))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--write", action="store_true", help=f"write {runtime_support.TABLE_PATH}")
    p.add_argument("--mine", action="store_true", help="list every deviation from the spec meanings")
    p.add_argument("--full", action="store_true", help="every opset, not one or two per Clip version")
    args = p.parse_args(argv)
    table = sweep_support(full=True)
    text = json.dumps(table, indent=1) + "\n"
    if args.write:
        Path(runtime_support.TABLE_PATH).write_text(text)
        print(f"wrote {runtime_support.TABLE_PATH}: {len(table['cannot_run'])} artifacts an engine cannot run")
    elif not args.mine:
        sys.stdout.write(text)
    if args.mine:
        devs = mine(full=args.full)
        from tests.engines.test_deviation_miner import unexplained
        for d in devs:
            print(("UNRECORDED " if unexplained(d) else "recorded   ") + d.line())
        print(f"{len(devs)} deviations")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
