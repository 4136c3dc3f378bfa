"""OpenVINO Clamp-1 (reused by every opsetN): parse compact specs and IR v11 XML, resolve, emit IR.

IR from users is parsed with defusedxml: entity expansion and external entities are refused.
"""

from __future__ import annotations

import base64
import io
import math
import struct
from dataclasses import dataclass, replace
from xml.etree.ElementTree import Element

import defusedxml.ElementTree as SafeET
import numpy as np
from defusedxml import DefusedXmlException
from pydantic import ValidationError

from app.dialects.kit.common import Emitted, LazyArtifacts, Mode, carrier_neighbours, pick_carrier
from app.dialects.kit.spec_base import OpenVinoSpec, OpenVinoTarget, spec_json
from app.core.dtypes import BFLOAT16, BY_OPENVINO, FLOAT32, FLOAT64, DType
from app.core.errors import ArtifactError, SpecError
from app.core.suggest import one_of, shown
from app.core.findings import Code, Finding, Notes, Severity
from app.core.meaning import Bound, EngineNote, Meaning, NanBound, NanInput, Order, ScaleBias, State
from app.engines import config as engine_config
from app.core import exact
from app.dialects.kit import runtime_support
from app.core.numbers import Number, format_number, parse_number, to_double

DIALECT = "openvino"
LATEST_OPSET = 16  # the newest opsetN a translation names by default; Clamp is Clamp-1 in all of them
CLAMP_VERSION = "Clamp-1"
REJECT_MIN_MAX = "Check 'm_min <= m_max' failed: Attribute 'min' must be less or equal than 'max'"
PRECISION = {"f32": "FP32", "f16": "FP16", "bf16": "BF16", "f64": "FP64", "i8": "I8", "i16": "I16", "i32": "I32",
             "i64": "I64", "u8": "U8", "u16": "U16", "u32": "U32", "u64": "U64"}
FROM_PRECISION = {v: k for k, v in PRECISION.items()}

ENGINE_NOTES_ALL = (
    EngineNote("openvino CPU plugin", "A NaN input is clamped to min instead of propagating (observed with "
                                      "openvino 2026.4 compile_model(..., 'CPU'))."),
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
# Which ISA the CPU plugin's bf16 kernels use depends on the host (app/engines/config.openvino_bf16_variant, measured
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


def version_openvino(version: str, loc: str = "version") -> str:
    """Every opsetN (1..LATEST_OPSET) maps Clamp to Clamp-1, the only Clamp version."""
    v = version.strip().lower()
    if not v.startswith("opset") or not v[5:].isdigit() or not 1 <= int(v[5:]) <= LATEST_OPSET:
        digits = "".join(c for c in v if c.isdigit())[:4]
        hint = f". Did you mean 'opset{int(digits)}'?" if digits and 1 <= int(digits) <= LATEST_OPSET else ""
        raise SpecError(f"Unknown OpenVINO version. Got: {shown(version)}. Expected opset1 .. opset{LATEST_OPSET}"
                        + hint, loc)
    return v


def element_type_openvino(name: str, loc: str = "element_type") -> DType:
    """Element type names (f32, f16, bf16, f64, i8..i64, u8..u64); Clamp's T is 'any numeric type'."""
    key = name.strip().lower()
    if key not in BY_OPENVINO:
        raise SpecError(one_of("Unknown element_type", name, BY_OPENVINO), loc)
    return BY_OPENVINO[key]


def attribute_double_openvino(value: Number, side: str) -> tuple[float, tuple[str, ...], bool]:
    """Clamp-1 attributes 'min'/'max' are doubles: the given number's exact value rounded once to a double."""
    d = to_double(value)
    loss = not isinstance(value, float) and d != value  # an int beyond 2^53, or a decimal no double holds
    steps = (f"{side} {format_number(value)} stored as double {format_number(d)}",) if loss else ()
    return d, steps, loss


def round_min_openvino(value: float, dt: DType) -> tuple[Number, bool, bool]:
    """'In case of integral numeric type, ceil is used to convert min from float to T' (saturated to T)."""
    return _integral(math.ceil, value, dt)


def round_max_openvino(value: float, dt: DType) -> tuple[Number, bool, bool]:
    """'... and floor is used to convert max from float to T' (saturated to T)."""
    return _integral(math.floor, value, dt)


def _integral(fn, value: float, dt: DType) -> tuple[int, bool, bool]:
    if math.isinf(value):
        return (dt.lowest() if value < 0 else dt.highest()), False, True  # type: ignore[return-value]
    r = int(fn(value))
    s = dt.saturate(r)
    return s, r != value, s != r


def cast_bound_openvino(value: Number, dt: DType, side: str) -> Bound:
    """One Clamp attribute as the effective bound of a `dt` tensor: the double attribute, then cast to T (a second
    rounding the dialect itself makes: the reference converts the double attribute to T)."""
    d, steps, loss = attribute_double_openvino(value, side)
    if math.isnan(d):
        return Bound(d, value, steps)
    if dt.is_float:
        out = dt.round(d)
        more = (f"cast to {dt.openvino}: {format_number(out)}",) if out != d else ()
        return Bound(out, value, steps + more, precision_loss=loss or (bool(more) and not math.isinf(out)),
                     overflow=math.isinf(out) and not math.isinf(d))
    rule = round_min_openvino if side == "min" else round_max_openvino
    out, rounded, saturated = rule(d, dt)
    more = ()
    if rounded or saturated:
        op = "ceil" if side == "min" else "floor"
        more = (f"{op}({format_number(d)}){' saturated' if saturated else ''} to {dt.openvino}: {out}",)
    return Bound(out, value, steps + more, rounded=rounded, saturated=saturated, precision_loss=loss)


@dataclass(frozen=True)
class Parsed:
    spec: OpenVinoSpec
    layer_name: str = ""


def parse(spec: OpenVinoSpec) -> Parsed:
    if spec.ir_xml is None:
        return Parsed(spec)
    return parse_ir(spec.ir_xml, spec.layer)


def resolve(spec: OpenVinoSpec | Parsed) -> Meaning:
    """The exact function a Clamp-1 computes; min > max (or a NaN attribute) is rejected as OpenVINO does."""
    parsed = spec if isinstance(spec, Parsed) else parse(spec)
    s = parsed.spec
    version = version_openvino(s.version)
    assert s.element_type is not None and s.min is not None and s.max is not None
    dt = element_type_openvino(s.element_type)
    lo = cast_bound_openvino(s.min, dt, "min")
    hi = cast_bound_openvino(s.max, dt, "max")
    notes = ENGINE_NOTES_ALL if dt.is_float else ()
    if dt.name in ("int64", "uint64"):
        notes = notes + ENGINE_NOTES_INT64
    rules = (f"{CLAMP_VERSION} ({version}): min(max(x, min), max) with double attributes",
             "integral T: ceil(min), floor(max), saturated" if not dt.is_float else "floating T: plain cast",
             "min <= max required; NaN input propagates (reference implementation)")
    dmin, dmax = to_double(s.min), to_double(s.max)
    state, reason = State.DEFINED, None
    if math.isnan(dmin) or math.isnan(dmax) or not dmin <= dmax:
        state, reason = State.REJECTED, REJECT_MIN_MAX
    if state is State.DEFINED and not dt.is_float and lo.value > hi.value:
        notes = notes + ENGINE_NOTES_CROSSED
    notes = notes + cpu_notes_openvino(dt, dmin, dmax, lo.saturated or hi.saturated)
    notes = notes + runtime_support.notes_openvino(dt.name, CLAMP_VERSION)
    return Meaning(DIALECT, CLAMP_VERSION, dt, lo, hi, order=Order.MAX_WINS, nan_input=NanInput.PROPAGATE,
                   nan_bound=NanBound.REJECTED, state=state, reason=reason, rules=rules, engine_notes=notes)


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


def normalize(spec: OpenVinoSpec | Parsed) -> dict:
    parsed = spec if isinstance(spec, Parsed) else parse(spec)
    out = spec_json(parsed.spec)
    out["version"] = version_openvino(parsed.spec.version)
    if parsed.spec.element_type:
        out["element_type"] = parsed.spec.element_type.strip().lower()
    return out


# --- emit -----------------------------------------------------------------------------------------------------

def emit(src: Meaning, target: OpenVinoTarget, mode: Mode, shape: list | None) -> Emitted:
    """A Clamp-1 (compact spec and IR v11 XML) computing `src` wherever Clamp can."""
    version = version_openvino(target.version or f"opset{LATEST_OPSET}")
    dt = src.dtype
    notes = Notes()
    assert src.lower is not None and src.upper is not None
    if src.scale_bias is not None and not dt.is_float:
        return Emitted(None, None, [Finding(
            Code.SCALE_BIAS, Severity.ERROR, "ScaleBias on an integer tensor cannot be expressed: DirectML leaves "
            "its rounding undocumented and OpenVINO's Convert of out-of-range floats to integers wraps",
            "x*Scale+Bias before clipping", "not expressible")], unsupported=True)
    if mode is Mode.LITERAL:
        vals = [b.given if b.given is not None else b.value for b in (src.lower, src.upper)]
    else:
        if src.lower.is_nan or src.upper.is_nan:
            f = Finding(Code.NAN_BOUND, Severity.ERROR, "A NaN bound cannot be expressed: Clamp-1 rejects NaN "
                        "attributes (min <= max fails)", f"NaN bound: {src.nan_bound.value}", "rejected")
            return Emitted(None, None, [f], unsupported=True)
        lo_want, hi_want = src.lower.value, src.upper.value
        if src.crossed:
            pick = hi_want if src.order is not Order.MIN_WINS else lo_want
            if src.order is Order.AMBIGUOUS:
                pick = lo_want  # the default reading (current DirectML doc) gives Min
                notes.add(Code.MIN_GREATER_THAN_MAX, Severity.WARNING, "The source's min > max is ambiguous; "
                          "emitted min = max under the default reading")
            else:
                notes.add(Code.MIN_GREATER_THAN_MAX, Severity.INFO, f"min > max emitted as min = max = "
                          f"{format_number(pick)}, the only equivalent Clamp-1 accepts")
            lo_want = hi_want = pick
        vals = []
        for side, want in (("min", lo_want), ("max", hi_want)):
            carrier, got, hit = pick_carrier(want, carrier_neighbours(want, FLOAT64),
                                               lambda c, s=side: cast_bound_openvino(c, dt, s))
            if not hit:
                notes.add(Code.BOUND_PRECISION, Severity.ERROR, f"No double attribute gives {side} = "
                          f"{format_number(want)} on {dt.openvino}; nearest: {format_number(carrier)}")
            vals.append(carrier)
    spec = OpenVinoSpec(dialect="openvino", version=version, element_type=dt.openvino, shape=shape,
                        min=vals[0], max=vals[1])
    meaning = resolve(spec)
    if meaning.state is State.REJECTED:
        return Emitted(normalize(spec), meaning, notes.items + [Finding(
            Code.MIN_GREATER_THAN_MAX if not any(math.isnan(to_double(v)) for v in vals) else Code.NAN_BOUND,
            Severity.ERROR, f"OpenVINO refuses to build this Clamp: {REJECT_MIN_MAX}",
            src.describe(), "rejected")], unsupported=True)
    for side, v in (("min", vals[0]), ("max", vals[1])):
        if isinstance(v, float) and math.isinf(v):
            notes.add(Code.INFINITE_BOUND, Severity.INFO, f"IR attribute {side}={format_number(v)}: OpenVINO "
                      "2026 reads 'inf' back; releases before 2026 did not")
    artifacts = LazyArtifacts(lambda: _ir_artifacts(spec, src.scale_bias))
    if src.scale_bias is not None:  # build_ir writes the ScaleBias constants into ir_bin
        meaning = replace(meaning, scale_bias=replace(src.scale_bias, precision=FLOAT32, fused=False),
                          engine_notes=meaning.engine_notes + (NOTE_FMA,))
        notes.add(Code.SCALE_BIAS, Severity.INFO, "ScaleBias emitted as Convert(f32) -> Multiply -> Add -> "
                  "Convert before Clamp; the constants are in ir_bin")
    return Emitted(normalize(spec), meaning, notes.items, artifacts)


def ir_double(value: Number) -> str:
    """A double as IR writes it: %.17g (round-trips), 'inf'/'-inf' for infinities."""
    d = to_double(value)
    if math.isinf(d):
        return "inf" if d > 0 else "-inf"
    if math.isnan(d):
        return "nan"
    return "%.17g" % d


def _dims_xml(shape: list, indent: str) -> str:
    return "".join(f"{indent}<dim>{d if isinstance(d, int) else -1}</dim>\n" for d in shape)


def _ir_artifacts(spec: OpenVinoSpec, scale_bias: ScaleBias | None) -> dict[str, str]:
    xml, weights = build_ir(spec, scale_bias)
    return {"ir_xml": xml, "ir_bin": base64.b64encode(weights).decode()} if weights else {"ir_xml": xml}


def build_ir(spec: OpenVinoSpec, scale_bias: ScaleBias | None = None) -> tuple[str, bytes]:
    """IR v11 XML for Parameter -> [Convert/Multiply/Add/Convert] -> Clamp -> Result, and its weights."""
    assert spec.element_type is not None
    et = spec.element_type
    prec = PRECISION[et]
    shape = spec.shape if spec.shape is not None else [None]
    shape_attr = ",".join(str(d) if isinstance(d, int) else "?" for d in shape)
    layers: list[str] = []
    edges: list[tuple[int, int, int, int]] = []
    weights = b""

    def port(pid: int, p: str, names: str = "") -> str:
        n = f' names="{names}"' if names else ""
        return f'\t\t\t\t<port id="{pid}" precision="{p}"{n}>\n{_dims_xml(shape, chr(9) * 5)}\t\t\t\t</port>\n'

    layers.append(f'\t\t<layer id="0" name="input" type="Parameter" version="opset1">\n'
                  f'\t\t\t<data shape="{shape_attr}" element_type="{et}" />\n'
                  f'\t\t\t<output>\n{port(0, prec, "input")}\t\t\t</output>\n\t\t</layer>\n')
    prev, prev_port, nid = 0, 0, 1
    if scale_bias is not None:
        weights = struct.pack("<ff", scale_bias.scale, scale_bias.bias)
        if et != "f32":
            layers.append(f'\t\t<layer id="{nid}" name="scale_bias_to_f32" type="Convert" version="opset1">\n'
                          f'\t\t\t<data destination_type="f32" />\n\t\t\t<input>\n{port(0, prec)}\t\t\t</input>\n'
                          f'\t\t\t<output>\n{port(1, "FP32")}\t\t\t</output>\n\t\t</layer>\n')
            edges.append((prev, prev_port, nid, 0))
            prev, prev_port, nid = nid, 1, nid + 1
        for op, offset in (("Multiply", 0), ("Add", 4)):
            const_id, op_id = nid, nid + 1
            layers.append(f'\t\t<layer id="{const_id}" name="{op.lower()}_const" type="Const" version="opset1">\n'
                          f'\t\t\t<data element_type="f32" shape="" offset="{offset}" size="4" />\n'
                          f'\t\t\t<output>\n\t\t\t\t<port id="0" precision="FP32" />\n\t\t\t</output>\n'
                          f'\t\t</layer>\n')
            layers.append(f'\t\t<layer id="{op_id}" name="scale_bias_{op.lower()}" type="{op}" version="opset1">\n'
                          f'\t\t\t<data auto_broadcast="numpy" />\n\t\t\t<input>\n{port(0, "FP32")}'
                          f'\t\t\t\t<port id="1" precision="FP32" />\n\t\t\t</input>\n'
                          f'\t\t\t<output>\n{port(2, "FP32")}\t\t\t</output>\n\t\t</layer>\n')
            edges += [(prev, prev_port, op_id, 0), (const_id, 0, op_id, 1)]
            prev, prev_port, nid = op_id, 2, nid + 2
        if et != "f32":
            layers.append(f'\t\t<layer id="{nid}" name="scale_bias_to_{et}" type="Convert" version="opset1">\n'
                          f'\t\t\t<data destination_type="{et}" />\n\t\t\t<input>\n{port(0, "FP32")}'
                          f'\t\t\t</input>\n\t\t\t<output>\n{port(1, prec)}\t\t\t</output>\n\t\t</layer>\n')
            edges.append((prev, prev_port, nid, 0))
            prev, prev_port, nid = nid, 1, nid + 1
    clamp = nid
    layers.append(f'\t\t<layer id="{clamp}" name="clamp" type="Clamp" version="opset1">\n'
                  f'\t\t\t<data min="{ir_double(spec.min)}" max="{ir_double(spec.max)}" />\n'
                  f'\t\t\t<input>\n{port(0, prec)}\t\t\t</input>\n'
                  f'\t\t\t<output>\n{port(1, prec, "output")}\t\t\t</output>\n\t\t</layer>\n')
    edges.append((prev, prev_port, clamp, 0))
    layers.append(f'\t\t<layer id="{clamp + 1}" name="output" type="Result" version="opset1">\n'
                  f'\t\t\t<input>\n{port(0, prec)}\t\t\t</input>\n\t\t</layer>\n')
    edges.append((clamp, 1, clamp + 1, 0))
    edge_xml = "".join(f'\t\t<edge from-layer="{a}" from-port="{b}" to-layer="{c}" to-port="{d}" />\n'
                       for a, b, c, d in edges)
    xml = (f'<?xml version="1.0"?>\n<net name="clipbridge" version="11">\n\t<layers>\n{"".join(layers)}'
           f'\t</layers>\n\t<edges>\n{edge_xml}\t</edges>\n</net>\n')
    return xml, weights


# --- the IR form ---------------------------------------------------------------------------------------------

MAX_IR_DEPTH = 128  # elements deep; a real IR nests net/layers/layer/body a few times (~20 deep)
IR_BYTES_PER_ELEMENT = 12  # an IR may hold one element per 12 bytes of XML on average (real ones: ~30)
IR_ELEMENTS_FREE = 4096  # ... plus this many, so that tiny IRs are never refused for density
SHARED_VALUE_CHARS = 16  # attribute values and texts up to this long are shared
SHARED_VALUES_MAX = 4096  # distinct values one parse remembers for sharing; then it starts again
# Runtime annotations no reader here looks at (often a third of a real IR's elements): dropped as parsed.
UNREAD_ELEMENTS = frozenset({"rt_info", "meta_data", "quantization_parameters"})


def share(memo: dict[str, str], value: str) -> str:
    """The one string of this parse equal to `value`. A memo of the parse, never sys.intern: the process-wide
    intern table only grows, and its resize (up to 8 MB at 130 000 entries) lands in whichever scan crosses the
    threshold, so a scan's peak depended on what the process had interned before. Bounded: past
    SHARED_VALUES_MAX distinct values (unique ids and names) the memo starts again; the few repeated values
    come back at their next use."""
    got = memo.get(value)
    if got is not None:
        return got
    if len(memo) >= SHARED_VALUES_MAX:
        memo.clear()
    memo[value] = value
    return value


def _compact(el: Element, memo: dict[str, str]) -> None:
    """Share repeated attribute values ("FP32", "opset1", "0", a dim): the parser makes a new string for each,
    and an IR repeats a few values thousands of times (part of keeping the scan's peak near 8x the upload)."""
    for key, value in el.items():
        if len(value) <= SHARED_VALUE_CHARS:
            el.set(key, share(memo, value))


def _compact_text(el: Element, memo: dict[str, str]) -> None:
    """Indentation (text and tail of whitespace only) is dropped and short texts (<dim>) shared, once the
    element is complete; nothing reads whitespace, and a pretty-printed IR has two such strings per element."""
    if el.text is not None:
        if not el.text.strip():
            el.text = None
        elif len(el.text) <= SHARED_VALUE_CHARS:
            el.text = share(memo, el.text)
    for child in el:  # a child's tail is only complete once its parent ends
        if child.tail is not None and not child.tail.strip():
            child.tail = None
    for child in [c for c in el if c.tag in UNREAD_ELEMENTS]:
        el.remove(child)


def read_ir(xml: str | bytes, loc: str = "ir_xml") -> Element:
    """The IR's root element, parsed by defusedxml (DTDs and entities refused) incrementally: the depth and the
    element count are checked as elements open, before a deep or dense document is built or recursed into."""
    data = xml.encode("utf-8") if isinstance(xml, str) else xml
    limit = IR_ELEMENTS_FREE + len(data) // IR_BYTES_PER_ELEMENT
    depth = count = 0
    root: Element | None = None
    memo: dict[str, str] = {}
    try:
        for event, el in SafeET.iterparse(io.BytesIO(data), events=("start", "end"), forbid_dtd=True):
            if event == "end":
                depth -= 1
                _compact_text(el, memo)
                continue
            root = el if root is None else root
            depth += 1
            count += 1
            _compact(el, memo)
            if depth > MAX_IR_DEPTH:
                raise ArtifactError(f"IR XML nests deeper than {MAX_IR_DEPTH} elements", loc)
            if count > limit:
                raise ArtifactError(f"IR XML has more than {limit} elements for {len(data)} bytes (at most one "
                                    f"per {IR_BYTES_PER_ELEMENT} bytes, plus {IR_ELEMENTS_FREE})", loc)
    except DefusedXmlException as exc:
        raise ArtifactError(f"IR XML refused: {type(exc).__name__} (DTDs and entities are not allowed)",
                            loc) from None
    except SafeET.ParseError as exc:
        raise ArtifactError(f"IR XML is not well-formed: {exc}", loc) from None
    if root is None or root.tag != "net":
        raise ArtifactError(f"IR XML root must be <net>, got <{'' if root is None else root.tag[:40]}>", loc)
    return root


def _ir_attr_number(text: str | None, what: str) -> float:
    """An IR attribute as OpenVINO reads it: the double nearest the decimal text."""
    if text is None:
        raise ArtifactError(f"Clamp layer has no {what} attribute", "ir_xml")
    try:
        return to_double(parse_number(text))
    except SpecError:
        raise ArtifactError(f"Clamp {what}={text[:40]!r} is not a number", "ir_xml") from None


def parse_ir(xml: str, layer: str | int | None) -> Parsed:
    """The Clamp layer of an IR (by id or name; may be omitted when there is one) in the compact form."""
    root = read_ir(xml)
    version = root.get("version")
    if version not in ("10", "11"):
        raise ArtifactError(f"IR version {version!r} is not supported; expected 11 (or 10)", "ir_xml")
    clamps = [el for el in root.iter("layer") if el.get("type") == "Clamp"]
    if not clamps:
        raise ArtifactError("the IR has no Clamp layer", "ir_xml")
    if layer is None:
        if len(clamps) > 1:
            raise SpecError(f"the IR has {len(clamps)} Clamp layers; name one with 'layer' (id or name)", "layer")
        el = clamps[0]
    else:
        key = str(layer)
        found = [c for c in clamps if c.get("id") == key or c.get("name") == key]
        if not found:
            raise SpecError(f"no Clamp layer with id or name {key!r}", "layer")
        el = found[0]
    return clamp_layer_openvino(el)


def clamp_layer_openvino(el: Element) -> Parsed:
    """One Clamp <layer> element in the compact form (min/max from <data>, type from input port 0)."""
    data = el.find("data")
    if data is None:
        raise ArtifactError("Clamp layer has no <data> element", "ir_xml")
    lo = _ir_attr_number(data.get("min"), "min")
    hi = _ir_attr_number(data.get("max"), "max")
    port = el.find("input/port")
    if port is None:
        raise ArtifactError("Clamp layer has no input port", "ir_xml")
    prec = (port.get("precision") or "").upper()
    if prec not in FROM_PRECISION:
        raise ArtifactError(f"Clamp input precision {prec[:16]!r} is unknown", "ir_xml")
    dims: list = []
    for d in port.findall("dim"):
        try:
            v = int((d.text or "").strip())
        except ValueError:
            raise ArtifactError(f"dim {str(d.text)[:20]!r} is not an integer", "ir_xml") from None
        dims.append(v if v >= 0 else None)
    opset = el.get("version") or "opset1"
    try:
        spec = OpenVinoSpec(dialect="openvino", version=opset if opset.startswith("opset") else "opset1",
                            element_type=FROM_PRECISION[prec], shape=dims, min=lo, max=hi)
    except ValidationError as exc:  # the IR's own values break a rule of the compact form (a shape, say)
        e = exc.errors()[0]
        raise ArtifactError(f"the Clamp layer cannot be read: {e['loc'][0]}: {e['msg']}", "ir_xml") from None
    return Parsed(spec, el.get("name") or el.get("id") or "")
