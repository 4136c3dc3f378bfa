"""The .tflite artifact: a model with one clip, written with the `tflite` package's generated schema builders and
`flatbuffers` (both optional: imported inside functions).

No hand-written encoder: every table and vector goes through the builders generated from TFLite's schema.fbs
(tflite 2.18). The graph is one input tensor, the clip (RELU6 / RELU_N1_TO_1 / RELU_0_TO_1 / RELU, or MINIMUM
then MAXIMUM with two constant scalar bounds, the order the converter gives tf.clip_by_value), and one output.
Quantized tensors (uint8, int8, int16) carry one scale and zero point, the same on input and output.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from clipbridge.core.meaning import Meaning
from clipbridge.dialects.tflite.quant import scale_tflite
from clipbridge.dialects.tflite.spec import MINMAX

# The opcode numbers of schema.fbs (tflite.BuiltinOperator); RELU_0_TO_1 (152) is past the int8
# deprecated_builtin_code, which then holds PLACEHOLDER_FOR_GREATER_OP_CODES (127).
OPCODES = {"RELU": 19, "RELU_N1_TO_1": 20, "RELU6": 21, "MAXIMUM": 55, "MINIMUM": 57, "RELU_0_TO_1": 152}
PLACEHOLDER_FOR_GREATER_OP_CODES = 127
TENSOR_TYPES = {"float32": 0, "int32": 2, "uint8": 3, "int64": 4, "int16": 7, "int8": 9}  # tflite.TensorType
SCHEMA_VERSION = 3


@dataclass(frozen=True)
class Graph:
    """What the model computes: `op` (a fixed-range op or MINIMUM_MAXIMUM), bounds for the latter (values of
    the tensor type, as stored), the tensor type, its shape (-1: unknown) and quantization (scale, zp) or None."""

    op: str
    dtype: str
    shape: tuple[int, ...]
    lo: float | int | None = None
    hi: float | int | None = None
    quantization: tuple[float, int] | None = None


# The builders below are called in one fixed order (buffers, tensors, opcodes, operators, subgraph, model): the
# order decides the bytes, and the emitted artifact must stay byte-identical.

def _vector(builder, start, items: list[int], prepend) -> int:
    start(builder, len(items))
    for item in reversed(items):
        prepend(item)
    return builder.EndVector()


def _buffers(b: Any, g: Graph) -> list[int]:
    """Buffer 0, the empty sentinel every schema-3 model has; then the bound constants (hi, lo) as raw bytes."""
    import tflite
    np_dtype = np.dtype(g.dtype)
    datas = []
    for value in ([] if g.op != MINMAX else [g.hi, g.lo]):
        raw = np.asarray([value], dtype=np_dtype).tobytes()
        b.StartVector(1, len(raw), 16)
        for byte in reversed(raw):
            b.PrependUint8(byte)
        datas.append(b.EndVector())
    buffers = []
    for data in [None, *datas]:
        tflite.BufferStart(b)
        if data is not None:
            tflite.BufferAddData(b, data)
        buffers.append(tflite.BufferEnd(b))
    return buffers


def _quantization(b: Any, g: Graph) -> int | None:
    """The tensor's QuantizationParameters (one scale, one zero point), written once per tensor."""
    import tflite
    if g.quantization is None:
        return None
    scale = _vector(b, tflite.QuantizationParametersStartScaleVector, [g.quantization[0]], b.PrependFloat32)
    zp = _vector(b, tflite.QuantizationParametersStartZeroPointVector, [g.quantization[1]], b.PrependInt64)
    tflite.QuantizationParametersStart(b)
    tflite.QuantizationParametersAddScale(b, scale)
    tflite.QuantizationParametersAddZeroPoint(b, zp)
    return tflite.QuantizationParametersEnd(b)


def _tensor(b: Any, g: Graph, name: str, shape: tuple[int, ...], buffer: int) -> int:
    import tflite
    nm = b.CreateString(name)
    sh = _vector(b, tflite.TensorStartShapeVector, [max(d, 1) for d in shape], b.PrependInt32)
    sig = None
    if any(d < 0 for d in shape):  # unknown sizes: 1 in `shape`, -1 in `shape_signature` (schema.fbs)
        sig = _vector(b, tflite.TensorStartShapeSignatureVector, list(shape), b.PrependInt32)
    q = _quantization(b, g)
    tflite.TensorStart(b)
    tflite.TensorAddShape(b, sh)
    tflite.TensorAddType(b, TENSOR_TYPES[g.dtype])
    tflite.TensorAddBuffer(b, buffer)
    tflite.TensorAddName(b, nm)
    if q is not None:
        tflite.TensorAddQuantization(b, q)
    if sig is not None:
        tflite.TensorAddShapeSignature(b, sig)
    return tflite.TensorEnd(b)


def _tensors_and_ops(b: Any, g: Graph) -> tuple[list[int], list[tuple[str, list[int], list[int]]], int]:
    """The tensors, the operators as (opcode name, inputs, outputs), and the output tensor's index."""
    if g.op == MINMAX:
        # x, hi, t = MINIMUM(x, hi), lo, y = MAXIMUM(t, lo): tf.clip_by_value's order (clip_ops.py).
        tensors = [_tensor(b, g, "x", g.shape, 0), _tensor(b, g, "hi", (), 1), _tensor(b, g, "t", g.shape, 0),
                   _tensor(b, g, "lo", (), 2), _tensor(b, g, "y", g.shape, 0)]
        return tensors, [("MINIMUM", [0, 1], [2]), ("MAXIMUM", [2, 3], [4])], 4
    return [_tensor(b, g, "x", g.shape, 0), _tensor(b, g, "y", g.shape, 0)], [(g.op, [0], [1])], 1


def _operator_codes(b: Any, names: list[str]) -> list[int]:
    import tflite
    codes = []
    for name in names:
        code = OPCODES[name]
        tflite.OperatorCodeStart(b)
        tflite.OperatorCodeAddDeprecatedBuiltinCode(b, min(code, PLACEHOLDER_FOR_GREATER_OP_CODES))
        tflite.OperatorCodeAddBuiltinCode(b, code)
        tflite.OperatorCodeAddVersion(b, 1)
        codes.append(tflite.OperatorCodeEnd(b))
    return codes


def _operators(b: Any, ops: list[tuple[str, list[int], list[int]]], names: list[str]) -> list[int]:
    import tflite
    operators = []
    for name, ins, outs in ops:
        iv = _vector(b, tflite.OperatorStartInputsVector, ins, b.PrependInt32)
        ov = _vector(b, tflite.OperatorStartOutputsVector, outs, b.PrependInt32)
        tflite.OperatorStart(b)
        tflite.OperatorAddOpcodeIndex(b, names.index(name))
        tflite.OperatorAddInputs(b, iv)
        tflite.OperatorAddOutputs(b, ov)
        operators.append(tflite.OperatorEnd(b))
    return operators


def _subgraph(b: Any, tensors: list[int], operators: list[int], out: int) -> int:
    import tflite
    tv = _vector(b, tflite.SubGraphStartTensorsVector, tensors, b.PrependUOffsetTRelative)
    inv = _vector(b, tflite.SubGraphStartInputsVector, [0], b.PrependInt32)
    outv = _vector(b, tflite.SubGraphStartOutputsVector, [out], b.PrependInt32)
    opv = _vector(b, tflite.SubGraphStartOperatorsVector, operators, b.PrependUOffsetTRelative)
    sg_name = b.CreateString("main")
    tflite.SubGraphStart(b)
    tflite.SubGraphAddTensors(b, tv)
    tflite.SubGraphAddInputs(b, inv)
    tflite.SubGraphAddOutputs(b, outv)
    tflite.SubGraphAddOperators(b, opv)
    tflite.SubGraphAddName(b, sg_name)
    return tflite.SubGraphEnd(b)


def build_model(g: Graph) -> bytes:
    """The serialized flatbuffer (file identifier TFL3)."""
    import flatbuffers
    import tflite

    b = flatbuffers.Builder(1024)
    buffers = _buffers(b, g)
    tensors, ops, out = _tensors_and_ops(b, g)
    names = list(dict.fromkeys(op for op, _, _ in ops))
    codes = _operator_codes(b, names)
    sg = _subgraph(b, tensors, _operators(b, ops, names), out)
    codes_v = _vector(b, tflite.ModelStartOperatorCodesVector, codes, b.PrependUOffsetTRelative)
    sgs = _vector(b, tflite.ModelStartSubgraphsVector, [sg], b.PrependUOffsetTRelative)
    bufs = _vector(b, tflite.ModelStartBuffersVector, buffers, b.PrependUOffsetTRelative)
    desc = b.CreateString("clipbridge")
    tflite.ModelStart(b)
    tflite.ModelAddVersion(b, SCHEMA_VERSION)
    tflite.ModelAddOperatorCodes(b, codes_v)
    tflite.ModelAddSubgraphs(b, sgs)
    tflite.ModelAddDescription(b, desc)
    tflite.ModelAddBuffers(b, bufs)
    b.Finish(tflite.ModelEnd(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def read_back(data: bytes) -> dict:
    """The model read with the same generated bindings: opcodes in order and the tensor types (for tests)."""
    import tflite
    m = tflite.Model.GetRootAs(data, 0)
    sg = m.Subgraphs(0)
    ops = [m.OperatorCodes(sg.Operators(i).OpcodeIndex()).BuiltinCode() for i in range(sg.OperatorsLength())]
    return {"version": m.Version(), "opcodes": ops,
            "types": [sg.Tensors(i).Type() for i in range(sg.TensorsLength())]}


# --- a resolved spec as a model -----------------------------------------------------------------------------------

def graph_of(spec: Any, m: Meaning, shape: list | tuple | None) -> Graph:
    """What build_model writes for a resolved spec: the op, the stored bounds, quantization, and the shape (an
    unknown size is -1: written 1 with shape_signature -1)."""
    dims = tuple(d if isinstance(d, int) and d <= 2**31 - 1 else -1 for d in (shape if shape is not None else [None]))
    q = None
    if spec.quantization is not None:
        q = (scale_tflite(spec.quantization), spec.quantization.zero_point)
    lo = hi = None
    if spec.op.strip().upper() == MINMAX:
        lo, hi = m.lo, m.hi
    return Graph(spec.op.strip().upper(), m.dtype.name, dims, lo, hi, q)


def model_bytes(spec: Any, m: Meaning, shape: list | tuple | None = None) -> bytes:
    return build_model(graph_of(spec, m, spec.shape if shape is None else shape))
