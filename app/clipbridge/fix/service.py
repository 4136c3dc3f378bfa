"""POST /v1/models/fix and `clipbridge fix`: write the fixed model, prove it, measure its cost, advise.

Every step that touches the uploaded model in native code (parse + shape inference + checker, each engine run,
the timing) runs in a sandboxed child (clipbridge.engines.sandbox.run_isolated); the server only moves bytes and arrays.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from clipbridge.diff.isolated import bounded
from clipbridge.diff.run import Execute, Memory, direct
from clipbridge.core.errors import ArtifactError, ClipBridgeError, UnsupportedTarget
from clipbridge.core.ondisk import like
from clipbridge.fix import apply, engines, found, overflow, proof
from clipbridge.fix.facts import ENGINES, openvino_setting
from clipbridge.engines.sandbox import run_isolated

PRECISIONS = ("model", "deployed")
NARROW = ("bf16", "f16")


@dataclass
class Fixed:
    """What a fix returns: the written model and the JSON body (rules_applied, advice, proof, cost, model)."""

    model: bytes
    body: dict[str, Any] = field(default_factory=dict)


def check_engines(reference: str, target: str, precision: str) -> None:
    for loc, name in (("reference", reference), ("target", target)):
        if name not in ENGINES:
            raise UnsupportedTarget(f"unknown engine {name[:40]!r}; one of {', '.join(ENGINES)}", loc)
    if reference == target:
        raise UnsupportedTarget("reference and target are the same engine: there is nothing to fix", "target")
    if precision not in PRECISIONS:
        raise UnsupportedTarget(f"precision is one of {', '.join(PRECISIONS)}", "precision")


def advice(proof_body: dict, float32: bool) -> list[dict]:
    """`inference-precision`: a difference no graph rewrite removes, with the exact engine setting that does."""
    out = []
    for role, row in zip(("reference", "target"), proof_body["engines"]):
        narrow = str(row.get("precision"))
        if row.get("name") == "openvino" and float32 and narrow in NARROW:
            out.append({"code": "inference-precision", "engine": "openvino", "role": role,
                        "ran_in": narrow, "setting": openvino_setting(narrow),
                        "alternative": {"EXECUTION_MODE_HINT": "ACCURACY"},
                        "message": f"OpenVINO ran this float32 model in {narrow} (its default on this CPU); "
                                   f"no graph rewrite changes that: compile with INFERENCE_PRECISION_HINT=f32 "
                                   f"(or EXECUTION_MODE_HINT=ACCURACY)"})
    return out


def _write(execute: Execute, model: bytes, reference: str, target: str,
           allowed: dict[str, list[str]] | None = None) -> dict:
    try:
        w = execute("fix-write", apply.write_checked, model, reference, target, allowed)
    except ClipBridgeError:
        raise
    except Exception as exc:  # the child re-raises onnx's own errors: the model is what is wrong
        raise ArtifactError(f"the model cannot be rewritten: {' '.join(str(exc).split())[:300]}", "model") from None
    # The rewrite keeps the stubs of weights left in their files (an OnDisk model): so does the written model's
    # folder, for the proof's and the timing's engines (clipbridge.core.ondisk.like).
    return {**w, "model": like(model, w["model"])}


def proof_body(original: bytes, written: bytes, npz: bytes | None, reference: str, target: str,
               precision: str, memory: Memory | None = None) -> dict:
    """The proof's diff body computed in this process: a sandbox child runs it for the server, so that the
    engines' tensors are compared where they were computed and only the body crosses (clipbridge.diff.isolated)."""
    return bounded(proof.prove(direct, original, written, npz, reference, target, precision, memory))


def fix(model: bytes, npz: bytes | None, reference: str, target: str, precision: str = "model",
        rounds: int = 30, execute: Execute = run_isolated, memory: Memory | None = None) -> Fixed:
    """Write the model for `target` to compute what `reference` computes, prove it and measure its cost.
    `execute` runs each native step: the sandbox for uploads, in-process (clipbridge.diff.run.direct) for the CLI.
    An OnDisk model (the CLI's, its weights in their files) gives an OnDisk written model naming the same files;
    its caller writes them beside it (clipbridge.scan.external_out). `memory`: the diffs' budget and the setting
    that names it (the server's, as its diff route gives; None: the defaults, clipbridge.diff.run.Options)."""
    if target.endswith("@f16"):  # a float16 overflow: the precision trace's fix (app/clipbridge/fix/overflow.py)
        written, body = overflow.fix(execute, model, npz, reference, target, precision, rounds)
        return Fixed(written, body)
    check_engines(reference, target, precision)
    allowed = found.causes_found(execute, model, npz, reference, target, precision, memory)  # rules only where found
    w = _write(execute, model, reference, target, allowed)
    try:
        clean = proof.clean_feeds(w["inputs"])
    except ValueError as exc:
        raise ClipBridgeError(str(exc), "inputs") from None
    proven = execute("fix-proof", proof_body, model, w["model"], npz, reference, target, precision, memory)
    generated = execute("fix-proof", proof_body, model, w["model"], None, reference, target, precision, memory) \
        if npz else None
    cost = execute("fix-cost", engines.time_pair, target, model, w["model"], clean, precision, rounds)
    body = {"reference": reference, "target": target, "precision": precision,
            # The given inputs decide when there are any: generated +-inf through a Conv can differ at the Conv
            # (inf - inf summed in another order), which is the original model's own and is in proof_generated.
            # The verdict is the proof's, in the diff's words (issue 44: exit 0 exactly when the proof is `equal`);
            # whether clean outputs stay bit-identical on the target is reported beside it (cost.clean_identical,
            # None where the target cannot run the original at all).
            "verdict": proof.verdict(proven),
            "rules_applied": w["rules_applied"], "skipped": w["skipped"],
            "advice": advice(proven, w["float32"]),
            "compared": {reference: "the original model", target: "the written model"},
            "proof": proven, "proof_generated": generated,
            "cost": cost,
            "model": {"bytes": len(w["model"]), "opset": w["opset"], "ir_version": w["ir_version"],
                      "opset_before": w["opset_before"], "ir_version_before": w["ir_version_before"],
                      "opset_note": w["opset_note"], "node_names_kept": w["names_kept"]}}
    return Fixed(w["model"], body)
