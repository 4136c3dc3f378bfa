"""The OpenVINO engines' observed deviations from Clamp-1's specification, as engine notes: which apply to an
element type and its attributes, and on which CPUs (the bf16 kernels differ by ISA; docs/host-differences.md)."""

from __future__ import annotations

import math

import numpy as np

from clipbridge import behaviour
from clipbridge.core import exact
from clipbridge.core.dtypes import BFLOAT16, FLOAT32, DType
from clipbridge.core.meaning import EngineNote, NanInput
from clipbridge.engines import config as engine_config

# The CPU plugin's NaN-input rule where Clamp-1 propagates (the first note below; Dialect.engine_nan_input, which
# `basis: engine` applies and tests/test_nan_basis.py checks against the openvino backend).
ENGINE_NAN_INPUT = NanInput.TO_LOWER
NAN_ROW = behaviour.row("openvino-clamp-nan-to-lower")
ENGINE_NOTES_ALL = (
    EngineNote("openvino CPU plugin", f"{NAN_ROW.gives['openvino'][0].upper()}{NAN_ROW.gives['openvino'][1:]}; "
                                      f"{NAN_ROW.source.rpartition('; ')[2]} (behaviour row {NAN_ROW.id})."),
)
ENGINE_NOTES_INT64 = (
    EngineNote("openvino CPU plugin", "i64/u64 Clamp runs in 32-bit integers: values and bounds beyond the int32 "
                                      "range are not preserved (observed with openvino 2026.4)."),
)
CPU = "openvino CPU plugin"
NOTE_F64 = EngineNote(CPU, "f64 Clamp is computed in f32 (single precision): values and bounds beyond float32 "
                           "precision are rounded (observed with openvino 2026.4).")
NOTE_U32 = EngineNote(CPU, "u32 Clamp runs as i32: inputs and bounds above 2^31-1 wrap (observed).")
NOTE_INT_F32 = EngineNote(CPU, "Integer min/max pass through float32: bounds beyond 2^24 are rounded to the "
                               "nearest float32 before the integer conversion (observed).")
NOTE_INT_WRAP = EngineNote(CPU, "Integer min/max at or beyond the int32 range (after float32 rounding) wrap to "
                                "the int32 minimum before saturating to the element type (observed).")
NOTE_F16_ROUNDING = EngineNote(CPU, "f16 bounds are rounded to float32 first, then to f16 (double rounding): a "
                                    "bound just above an f16 halfway point can round the other way (observed).")
NOTE_STATIC_TRUNC = EngineNote(CPU, "With a static input shape, i8/u8 Clamp truncates a fractional min toward "
                                    "zero instead of taking its ceil (observed; dynamic shapes follow the spec).")
# Which ISA the CPU plugin's bf16 kernels use depends on the host (app/clipbridge/engines/config.openvino_bf16_variant, measured
# by capping ONEDNN_MAX_CPU_ISA; docs/host-differences.md): each note names its CPUs and is attached on those only.
NOTE_BF16_FLUSH = EngineNote(CPU, "On CPUs with avx512_bf16 (oneDNN ISA avx512_core_bf16 or newer), bf16 subnormal "
                                  "inputs and min/max are flushed to zero: a subnormal bound acts as -0.0/+0.0 "
                                  "(observed with openvino 2026.4; not on CPUs without avx512_bf16).")
NOTE_BF16_TRUNC = EngineNote(CPU, "On CPUs without AVX-512 (oneDNN ISA AVX2 or lower), bf16 min/max are converted by "
                                  "truncation (double -> f32 -> bf16 toward zero: 2.7 -> 2.6875) instead of to "
                                  "nearest even (observed with openvino 2026.4 on an AMD EPYC without AVX-512 and "
                                  "with ONEDNN_MAX_CPU_ISA=AVX2; the reference evaluator always truncates).")
# On a host none of the measured variants covers (not x86-64), both may apply.
BF16_NOTES = {engine_config.BF16_NATIVE: (NOTE_BF16_FLUSH,), engine_config.BF16_AVX512: (),
              engine_config.BF16_AVX2: (NOTE_BF16_TRUNC,),
              engine_config.BF16_UNKNOWN: (NOTE_BF16_FLUSH, NOTE_BF16_TRUNC)}
NOTE_RANGE_WRAP = EngineNote(CPU, "i16, u16, u32 and u64 Clamp: a min/max outside the element type's range (after "
                                 "ceil/floor) wraps instead of saturating: u16 with min -100.7, max -1 outputs 65535 "
                                 "where the spec saturates both bounds to 0 (observed with openvino 2026.4; found by "
                                 "the deviation miner).")
NOTE_FMA = EngineNote(CPU, "The CPU plugin fuses Multiply+Add into one FMA (one rounding), where the IR's "
                           "Multiply then Add rounds twice: outputs may differ by one ulp (observed).")
ENGINE_NOTES_CROSSED = (
    EngineNote("openvino constant folding", "When ceil(min) > floor(max), Clamp's reference evaluator (constant "
                                            "folding) gives x < min ? min : (x > max ? max : x), not max everywhere "
                                            "as the CPU plugin and the spec formula do."),
)



def cpu_notes_openvino(dt: DType, dmin: float, dmax: float, saturated: bool = False,
                       variant: str | None = None) -> tuple[EngineNote, ...]:
    """The CPU plugin's observed deviations that apply to this element type and these attributes on the host
    variant given (default: this host's, engine_config.openvino_bf16_variant)."""
    notes: list[EngineNote] = []
    finite = [d for d in (dmin, dmax) if math.isfinite(d)]
    if dt.name == "float64":
        notes.append(NOTE_F64)
    elif dt.name == "bfloat16":
        notes.extend(bf16_notes_openvino(finite, variant or engine_config.openvino_bf16_variant()))
    elif dt.name == "float16" and any(FLOAT32.round(d) != d for d in finite):
        notes.append(NOTE_F16_ROUNDING)
    if dt.name == "uint32":
        notes.append(NOTE_U32)
    if saturated and dt.name in ("int16", "uint16", "uint32", "uint64"):
        notes.append(NOTE_RANGE_WRAP)
    if not dt.is_float:
        if any(abs(d) > 2**24 and FLOAT32.round(d) != d for d in finite):
            notes.append(NOTE_INT_F32)
        if any(not -(2**31) <= FLOAT32.round(d) < 2**31 for d in finite):
            notes.append(NOTE_INT_WRAP)
        if dt.name in ("int8", "uint8") and math.isfinite(dmin) and dmin != math.floor(dmin):
            notes.append(NOTE_STATIC_TRUNC)
    return tuple(notes)


def bf16_notes_openvino(finite: list[float], variant: str) -> tuple[EngineNote, ...]:
    """The bf16 notes of a host variant: the flush applies to every bf16 Clamp (any input can be subnormal), the
    truncation only where it changes a bound."""
    out = tuple(n for n in BF16_NOTES[variant] if n is not NOTE_BF16_TRUNC)
    if NOTE_BF16_TRUNC in BF16_NOTES[variant] and any(bf16_truncated_openvino(d) != BFLOAT16.round(d) for d in finite):
        out += (NOTE_BF16_TRUNC,)
    return out


def bf16_truncated_openvino(d: float) -> float:
    """OpenVINO's reference bf16 conversion of a double attribute: to f32 (nearest), then drop the low 16 bits."""
    f32 = exact.to_float32(d)
    if not math.isfinite(f32):
        return f32
    bits = exact.bits_of(f32, np.dtype(np.float32)) & 0xFFFF0000
    return float(np.asarray(bits, dtype=np.uint32).view(np.float32))

