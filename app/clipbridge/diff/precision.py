"""`inference-precision` where an engine ran the model's float type at another precision, wider included.

causes.narrower names an engine that ran a node narrower than the model (bf16 for float32). The other way also
parts engines (issue 44): OpenVINO's CPU plugin computes a float16 model in f32 on a CPU without native float16
(no avx512_fp16/AMX-FP16; it reports f32 as its compiled INFERENCE_PRECISION_HINT), so a float16 MatMul that
overflows to inf on onnxruntime holds 76800 there: `isinf(h).any()` is true on one engine and false on the
other, though the captured h (rounded to float16 on the way out) agrees. The precision is read from what each
engine reported it ran at, never assumed from the CPU.
"""

from __future__ import annotations

from collections.abc import Iterable

SHORT = {"float16": "f16", "float32": "f32", "float64": "f64", "bfloat16": "bf16"}


def float_type(dtypes: Iterable[str]) -> str | None:
    """The first float type among a node's tensor types (an IsInf's input, where its output is bool)."""
    return next((d for d in dtypes if d in SHORT), None)


def other(precisions: dict[str, str], dtype: str | None) -> str | None:
    """The engine that computed a `dtype` tensor at another float precision than the model's, naming both (and
    what the other engines ran at); None when every engine ran the model's own type."""
    want = SHORT.get(dtype or "")
    if want is None:
        return None
    for engine, p in precisions.items():
        # Only OpenVINO reports an inference precision (its compiled hint); onnxruntime's and onnx.reference's
        # "precision" is their outputs' float types, and they compute each node in its declared type.
        if engine.startswith("openvino") and p in SHORT.values() and p != want:
            others = ", ".join(f"{e} ran {q}" for e, q in precisions.items() if e != engine)
            return (f"{engine} ran it in {p} (its reported inference precision); the model's type is {dtype}"
                    + (f", {others}" if others else ""))
    return None
