"""A .tflite file as the chain reads it (statically, nothing run): every op with its constant scalar operands,
the activation its converter fused into it, its tensor names, and which tensor is the graph's K-th output.

What litert-torch 0.10.0 writes (measured on tests/chain/models.py, docs/chain.md): tensor names are the torch
module path of the op (`__main__.Block/torch.nn.modules.container.Sequential_dw/torch.nn.modules.activation.
Hardswish_1`), `;`-joined when ops were fused, a graph output is `serving_default_output_K_output`; ReLU6/ReLU
after a convolution or an addition become its fused activation (no op of their own). The interpreter lists the
ops; the fused activation is in the flatbuffer's builtin options, read with the `tflite` package's generated
schema (the TFLite dialect's dependency)."""

from __future__ import annotations

from typing import Any

import numpy as np

# Ops whose builtin options carry a fused activation, and the schema class of those options.
FUSED_OPTIONS = {"CONV_2D": "Conv2DOptions", "DEPTHWISE_CONV_2D": "DepthwiseConv2DOptions", "ADD": "AddOptions",
                 "SUB": "SubOptions", "MUL": "MulOptions", "DIV": "DivOptions",
                 "FULLY_CONNECTED": "FullyConnectedOptions", "AVERAGE_POOL_2D": "Pool2DOptions",
                 "MAX_POOL_2D": "Pool2DOptions", "TRANSPOSE_CONV": "TransposeConvOptions"}
ACTIVATIONS = {1: "RELU", 2: "RELU_N1_TO_1", 3: "RELU6", 4: "TANH", 5: "SIGN_BIT"}  # tflite.ActivationFunctionType
CONVOLUTIONS = ("CONV_2D", "DEPTHWISE_CONV_2D", "TRANSPOSE_CONV")


def flatbuffer(data: bytes) -> tuple[dict[int, str], set[int]]:
    """Subgraph 0 from the flatbuffer: operator index -> the activation fused into it (its builtin options), and
    the tensors that hold data in the file (weights and constants: a buffer with bytes, or an offset past it)."""
    import tflite
    m = tflite.Model.GetRootAs(data, 0)
    sg = m.Subgraphs(0)
    consts = set()
    for j in range(sg.TensorsLength()):
        buf = m.Buffers(sg.Tensors(j).Buffer())
        if buf is not None and (buf.DataLength() > 0 or buf.Offset() > 1):
            consts.add(j)
    names = {v: k for k, v in vars(tflite.BuiltinOperator).items() if not k.startswith("_")}
    out: dict[int, str] = {}
    for i in range(sg.OperatorsLength()):
        op = sg.Operators(i)
        code = m.OperatorCodes(op.OpcodeIndex())
        cls = FUSED_OPTIONS.get(names.get(max(code.BuiltinCode(), code.DeprecatedBuiltinCode()), ""))
        table = op.BuiltinOptions()
        if cls is None or table is None:
            continue
        opts = getattr(tflite, cls)()
        opts.Init(table.Bytes, table.Pos)
        act = ACTIVATIONS.get(opts.FusedActivationFunction())
        if act:
            out[i] = act
    return out, consts


def _scalar(it: Any, details: dict[int, dict], i: int) -> float | None:
    """A constant scalar operand's value (a tensor with a buffer and one element), else None."""
    if i < 0 or int(np.prod(details[i].get("shape", [0]))) > 1:
        return None
    try:
        v = np.asarray(it.get_tensor(int(i)))
    except ValueError:
        return None
    return float(v.reshape(-1)[0]) if v.size == 1 and v.dtype.kind in "fiu" else None


def read(it: Any, data: bytes) -> dict[str, Any]:
    """Every op in execution order: {name, type, tensor (its output), input (None when the op's own input is not
    the clamp's, as for a fused activation), operands, attrs {fused}, names (its output's `;` parts)}."""
    details = {t["index"]: t for t in it.get_tensor_details()}
    fused, consts = flatbuffer(data)
    ops = []
    for op in it._get_ops_details():  # the interpreter's only op listing
        out = int(op["outputs"][0])
        operands = []
        for i in op["inputs"]:
            c = _scalar(it, details, int(i)) if i in consts else None
            operands.append(("const", c) if c is not None else ("tensor", None))
        act = fused.get(int(op["index"]))
        name = details[out]["name"]
        ops.append({"name": name, "type": op["op_name"], "tensor": out, "index": int(op["index"]),
                    "input": None if act else int(op["inputs"][0]), "inputs": [int(i) for i in op["inputs"]],
                    "operands": operands, "attrs": {"fused": act} if act else {},
                    "names": [p for p in name.split(";") if p and not p.isdigit()], "how": "LiteRT tensor names"})
    return {"ops": ops, "inputs": [d["name"] for d in it.get_input_details()],
            "outputs": len(it.get_output_details()), "output_tensors": [int(d["index"]) for d in
                                                                        it.get_output_details()]}

