"""Per-element bounds in OpenVINO: Clamp-1 takes two double attributes, so the clip is written as
Maximum-1(x, min) then Minimum-1(., max) (max wins), or Minimum then Maximum (min wins), with Const bounds.

Maximum-1/Minimum-1 (opset1 onward) broadcast by NumPy's rules (auto_broadcast="numpy") and take every numeric
element type; the Const layers hold the bounds as values of the tensor's type, so no attribute cast applies.
"""

from __future__ import annotations

import base64

import numpy as np

from clipbridge.core.findings import Code, Finding, Notes, Severity
from clipbridge.core.meaning import EngineNote, Meaning, NanBound, NanInput, Order
from clipbridge.dialects.kit.common import Emitted, Mode
from clipbridge.dialects.kit.tensor_bounds import bound_array, scalar_of, tensor_of
from clipbridge.dialects.openvino.dtypes import PRECISION, element_type_name
from clipbridge.dialects.openvino.meaning import LATEST_OPSET, version_openvino
from clipbridge.dialects.openvino.notes import CPU
from clipbridge.dialects.openvino.spec import NAME, OpenVinoTarget

# Observed with openvino 2026.4 on the CPU plugin, which fuses the pair into a clamp (as for the scan's
# Minimum/Maximum pairs): tests/dialects/test_tensor_bounds.py shows both as strict xfails.
NOTE_NAN_OPENVINO = EngineNote(CPU, "A NaN input of the emitted Maximum/Minimum gives, at its position, what the "
                                    "Clamp the CPU plugin fuses them into gives (behaviour rows openvino-clamp-fusion "
                                    "and openvino-clamp-nan-to-lower), and a NaN min element gives the max there, "
                                    "where maximum/minimum propagate NaN (observed with openvino 2026.4)")


def _out_dims(shape: list, *bounds: tuple[int, ...]) -> list[int]:
    """NumPy broadcasting of the input's dims (-1: unknown) with the bounds' shapes."""
    rank = max([len(shape), *(len(b) for b in bounds)])
    dims = [[1] * (rank - len(s)) + list(s) for s in ([(d if isinstance(d, int) else -1) for d in shape],
                                                       *bounds)]
    out = []
    for col in zip(*dims):
        known = [d for d in col if d != 1]
        out.append(-1 if -1 in known else (max(known) if known else 1))
    return out


def build_minmax_ir(m: Meaning, shape: list | None) -> tuple[str, bytes]:
    """IR v11 XML: Parameter -> Maximum/Minimum with Const bounds (m's order) -> Result, and the weights."""
    et = element_type_name(m.out_dtype)
    prec = PRECISION[et]
    lo = m.lower_tensor.array(m.out_dtype) if m.lower_tensor else (
        None if m.lower is None else np.asarray(m.out_dtype.array([m.lower.value])[0]))
    hi = m.upper_tensor.array(m.out_dtype) if m.upper_tensor else (
        None if m.upper is None else np.asarray(m.out_dtype.array([m.upper.value])[0]))
    steps = [("Maximum", lo), ("Minimum", hi)] if m.order is Order.MAX_WINS else [("Minimum", hi), ("Maximum", lo)]
    shape = shape if shape is not None else [None]
    dims = [d if isinstance(d, int) else -1 for d in shape]

    def port(pid: int, ds: list[int], names: str = "") -> str:
        n = f' names="{names}"' if names else ""
        body = "".join(f"\t\t\t\t\t<dim>{d}</dim>\n" for d in ds)
        return f'\t\t\t\t<port id="{pid}" precision="{prec}"{n}>\n{body}\t\t\t\t</port>\n'

    layers = [f'\t\t<layer id="0" name="input" type="Parameter" version="opset1">\n'
              f'\t\t\t<data shape="{",".join(str(d) if d >= 0 else "?" for d in dims)}" element_type="{et}" />\n'
              f'\t\t\t<output>\n{port(0, dims, "input")}\t\t\t</output>\n\t\t</layer>\n']
    edges: list[tuple[int, int, int, int]] = []
    weights = b""
    prev, prev_port, prev_dims, nid = 0, 0, dims, 1
    for op, arr in steps:
        if arr is None:
            continue
        data = np.ascontiguousarray(arr).tobytes()
        cshape = list(arr.shape)
        layers.append(f'\t\t<layer id="{nid}" name="{op.lower()}_bound" type="Const" version="opset1">\n'
                      f'\t\t\t<data element_type="{et}" shape="{",".join(map(str, cshape))}" offset="{len(weights)}" '
                      f'size="{len(data)}" />\n\t\t\t<output>\n{port(0, cshape)}\t\t\t</output>\n\t\t</layer>\n')
        weights += data
        out_dims = _out_dims(prev_dims, tuple(cshape))
        layers.append(f'\t\t<layer id="{nid + 1}" name="{op.lower()}" type="{op}" version="opset1">\n'
                      f'\t\t\t<data auto_broadcast="numpy" />\n\t\t\t<input>\n{port(0, prev_dims)}{port(1, cshape)}'
                      f'\t\t\t</input>\n\t\t\t<output>\n{port(2, out_dims)}\t\t\t</output>\n\t\t</layer>\n')
        edges += [(prev, prev_port, nid + 1, 0), (nid, 0, nid + 1, 1)]
        prev, prev_port, prev_dims, nid = nid + 1, 2, out_dims, nid + 2
    layers.append(f'\t\t<layer id="{nid}" name="output" type="Result" version="opset1">\n'
                  f'\t\t\t<input>\n{port(0, prev_dims)}\t\t\t</input>\n\t\t</layer>\n')
    edges.append((prev, prev_port, nid, 0))
    edge_xml = "".join(f'\t\t<edge from-layer="{a}" from-port="{b}" to-layer="{c}" to-port="{d}" />\n'
                       for a, b, c, d in edges)
    xml = (f'<?xml version="1.0"?>\n<net name="clipbridge" version="11">\n\t<layers>\n{"".join(layers)}'
           f'\t</layers>\n\t<edges>\n{edge_xml}\t</edges>\n</net>\n')
    return xml, weights


def emit_minmax_openvino(src: Meaning, target: OpenVinoTarget, mode: Mode, shape: list | None) -> Emitted:
    """The per-element clip as Maximum-1/Minimum-1 layers with Const bounds (an IR), and what it computes."""
    version_openvino(target.version or f"opset{LATEST_OPSET}")
    dt = src.out_dtype
    if src.scale_bias is not None:
        return Emitted(None, None, [Finding(Code.TENSOR_BOUNDS, Severity.ERROR, "Per-element bounds with ScaleBias "
                                            "are not expressed", "per-element bounds", "not expressible")],
                       unsupported=True)
    notes = Notes()
    lo = bound_array(src, "min", notes, "OpenVINO Maximum/Minimum")
    hi = bound_array(src, "max", notes, "OpenVINO Maximum/Minimum")
    order = Order.MIN_WINS if src.order is Order.MIN_WINS else Order.MAX_WINS
    words = ("Maximum(x, min) then Minimum(., max): max wins" if order is Order.MAX_WINS else
             "Minimum(x, max) then Maximum(., min): min wins")
    meaning = Meaning(
        NAME, "Maximum-1/Minimum-1", dt, scalar_of(src, "min", lo), scalar_of(src, "max", hi), order=order,
        nan_input=NanInput.PROPAGATE, nan_bound=NanBound.PROPAGATE,
        rules=(f"{words}; Const bounds of the element type broadcast to the input (numpy rules)",
               "NaN propagates from the input and from a bound (IEEE maximum/minimum)"),
        engine_notes=(NOTE_NAN_OPENVINO,) if dt.is_float else (),
        lower_tensor=tensor_of(lo, dt), upper_tensor=tensor_of(hi, dt))
    try:
        xml, weights = build_minmax_ir(meaning, shape)
    except ValueError as exc:
        return Emitted(None, None, [Finding(Code.TENSOR_BOUNDS, Severity.ERROR, f"The bounds do not broadcast to "
                                            f"the input's shape {shape}: {exc}")], unsupported=True)
    notes.add(Code.TENSOR_BOUNDS, Severity.INFO, f"OpenVINO Clamp-1 takes scalar attributes: the per-element clip is "
              f"written as {words}")
    spec = {"dialect": NAME, "ir_xml": xml}
    return Emitted(spec, meaning, notes.items, {"ir_xml": xml, "ir_bin": base64.b64encode(weights).decode()})
