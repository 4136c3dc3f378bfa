"""TensorRT kCLIP's artifacts: the network-definition API calls (Python and C++) that build the layer."""

from __future__ import annotations

import math

from clipbridge.dialects.tensorrt.spec import NAME_OF, TRT_NAME
from clipbridge.core.meaning import Meaning


def _py_float(v: float) -> str:
    if math.isnan(v):
        return 'float("nan")'
    if math.isinf(v):
        return 'float("inf")' if v > 0 else '-float("inf")'
    return repr(v)  # exact: the attribute is a float32 value, which this double decimal names


def _cpp_float(v: float) -> str:
    if math.isnan(v):
        return "std::numeric_limits<float>::quiet_NaN()"
    if math.isinf(v):
        return ("" if v > 0 else "-") + "std::numeric_limits<float>::infinity()"
    text = repr(v)
    return (text if "." in text or "e" in text else text + ".0") + "F"


def _attrs(m: Meaning) -> tuple[float, float]:
    """The float attributes that give the meaning's bounds (for int8 the integers themselves, exact in float)."""
    return float(m.lo), float(m.hi)  # type: ignore[arg-type]


def python_api(m: Meaning) -> str:
    """The TensorRT Python API calls that build this layer."""
    a, b = _attrs(m)
    int8 = ("# int8: the input needs a scale (Q/DQ or set_dynamic_range); alpha/beta act on dequantized values,\n"
            "# so with scale s the stored-integer bounds are round(alpha / s), round(beta / s)\n"
            if not m.dtype.is_float else "")
    return (f"{int8}layer = network.add_activation(x, trt.ActivationType.CLIP)  # x: {TRT_NAME[NAME_OF[m.dtype.name]]}"
            f"\nlayer.alpha = {_py_float(a)}\nlayer.beta = {_py_float(b)}\n")


def cpp_api(m: Meaning) -> str:
    """The TensorRT C++ API calls that build this layer."""
    a, b = _attrs(m)
    return (f"nvinfer1::IActivationLayer* layer = network->addActivation(*x, nvinfer1::ActivationType::kCLIP);\n"
            f"layer->setAlpha({_cpp_float(a)});\nlayer->setBeta({_cpp_float(b)});\n")
