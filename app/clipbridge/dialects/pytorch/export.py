"""What torch.onnx.export writes for a PyTorch clamp, predicted (TorchScript, opset 17; dynamo, opset 18), the
findings that tell where the export changes the call, and the real exported model in the same notation. The
predictions are checked against the real exporters of torch 2.13.0 in the tests (tests/dialects/test_pytorch.py)
and by tests/data/torch_exports/make.py; running an export costs about 1 s (dynamo) plus torch's import, so
emit() predicts and engine.export_onnx runs the exporter only when asked.
"""

from __future__ import annotations

from functools import lru_cache

from clipbridge.core import exact
from clipbridge.core.dtypes import BY_NUMPY, DType
from clipbridge.core.findings import Code, Finding, Severity, Witness
from clipbridge.core.evaluate import evaluate
from clipbridge.core.meaning import Meaning
from clipbridge.core.numbers import Number, format_number
from clipbridge.dialects.kit.common import number_key

TS_OPSET, DYNAMO_OPSET = 17, 18


def _typed(v: Number, dt: DType) -> str:
    return _typed_by_key(number_key(v), dt)


@lru_cache(maxsize=4096)  # both exports write the same constants; 0, 6, 1 come back in every request
def _typed_by_key(key: tuple[type, Number, bool], dt: DType) -> str:
    return f"{dt.name}:{format_number(dt.to_python(dt.array([key[1]])[0]))}"


def _ts_cast(v: Number, dt: DType) -> str:
    """The TorchScript exporter's constant: the bound cast to the input dtype (truncation on integers)."""
    if dt.is_float:
        return _typed(v, dt)
    if exact.is_nan(v) or exact.is_inf(v):
        return f"{dt.name}:<{format_number(v)} cast: implementation-defined>"
    return f"{dt.name}:{dt.saturate(exact.trunc_exact(v))}"


def predict_export(m: Meaning, dynamo: bool) -> str:
    """The node list torch 2.13's exporter writes for this clamp (one line per node; 'elem' is the output)."""
    dt, out_dt = m.dtype, m.out_dtype
    if m.has_tensor_bounds:
        nodes, cur = [], "x"
        if m.lower_tensor is not None:
            nodes.append(f"Max({cur}, {dt.name}{list(m.lower_tensor.shape)})")
            cur = "max_out"
        if m.upper_tensor is not None:
            nodes.append(f"Min({cur}, {dt.name}{list(m.upper_tensor.shape)})")
        return "\n".join(nodes) + f"\n-> {dt.name}"
    assert m.lower is not None and m.upper is not None
    sides = [None if b.default else b.value for b in (m.lower, m.upper)]
    if not dynamo:
        ins = ["''" if v is None else _ts_cast(v, dt) for v in sides]
        return f"Clip(x, {ins[0]}, {ins[1]})\n-> {dt.name}"
    nodes, cur = [], "x"
    if out_dt != dt:
        nodes.append("Cast(x, to=FLOAT)")
        cur = "x_float"
    ins = ["''" if v is None else _typed(v, out_dt) for v in sides]
    if not out_dt.is_float and (sides[0] is None or sides[1] is None):
        nodes.append(f"Max({cur}, {ins[0]})" if sides[1] is None else f"Min({cur}, {ins[1]})")
    elif sides[1] is None:
        nodes.append(f"Clip({cur}, {ins[0]})")
    else:
        nodes.append(f"Clip({cur}, {ins[0]}, {ins[1]})")
    return "\n".join(nodes) + f"\n-> {out_dt.name}"


def export_notes(m: Meaning) -> list[Finding]:
    """What torch.onnx.export changes (emit findings about the artifact, INFO: the call itself is exact): the
    TorchScript exporter drops the promotion; the witness is the exported Clip's output on an int input."""
    if m.result_dtype is None or m.result_dtype == m.dtype or m.lower is None or m.upper is None:
        return []
    given = [b.value for b in (m.lower, m.upper) if not b.default]
    if any(exact.is_nan(v) or exact.is_inf(v) for v in given):
        return [Finding(Code.DTYPE_PROMOTION, Severity.INFO, "torch.onnx.export(dynamo=False) casts a "
                        f"non-finite float bound to {m.dtype.name} (implementation-defined; torch 2.13 wrote "
                        "INT_MIN for NaN on int32); torch.clamp returns float32. dynamo=True keeps the promotion")]
    trunc = [None if b.default else exact.trunc_exact(b.value) for b in (m.lower, m.upper)]
    x = _witness_input(m, trunc)
    y = float(evaluate(m, m.dtype.array([x]))[0])
    lo_t = m.dtype.lowest() if trunc[0] is None else trunc[0]
    hi_t = m.dtype.highest() if trunc[1] is None else trunc[1]
    yt = min(max(x, lo_t), hi_t)
    return [Finding(Code.DTYPE_PROMOTION, Severity.INFO, f"torch.onnx.export(dynamo=False) casts the bounds to "
                    f"{m.dtype.name} (truncation) and keeps the {m.dtype.name} output; torch.clamp returns "
                    f"{m.out_dtype.name}. dynamo=True writes Cast(x, to=FLOAT) then Clip: the promotion is kept",
                    f"torch.clamp: {m.describe()}", f"exported Clip on {m.dtype.name} to [{lo_t}, {hi_t}]",
                    Witness(x, y, yt))]


def _witness_input(m: Meaning, trunc: list[Number | None]) -> int:
    """An input where the truncated bounds give another output: at a bound (its fraction lost)."""
    for b, t in zip((m.lower, m.upper), trunc):
        if b is not None and t is not None and b.value != t:
            return int(m.dtype.saturate(int(t)))
    return 0


def onnx_summary(model_bytes: bytes) -> str:
    """The real exported model in predict_export's notation (constants inlined with their dtype)."""
    import onnx
    from onnx import numpy_helper
    m = onnx.load_from_string(model_bytes)
    vals = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    lines, renames = [], {m.graph.input[0].name: "x"}
    for n in m.graph.node:
        if n.op_type == "Constant":
            vals[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
            continue
        ins = []
        for i in n.input:
            if i in vals:
                a = vals[i]
                dt = BY_NUMPY[a.dtype]
                ins.append(f"{dt.name}{list(a.shape)}" if a.ndim else _typed(a.item(), dt))
            else:
                ins.append(renames.get(i, "''" if not i else i))
        if n.op_type == "Cast":
            lines.append(f"Cast({ins[0]}, to=FLOAT)")
            renames[n.output[0]] = "x_float"
            continue
        renames[n.output[0]] = "max_out" if n.op_type == "Max" else n.output[0]
        lines.append(f"{n.op_type}({', '.join(ins)})")
    out_dt = BY_NUMPY[onnx.helper.tensor_dtype_to_np_dtype(m.graph.output[0].type.tensor_type.elem_type)]
    return "\n".join(lines) + f"\n-> {out_dt.name}"
