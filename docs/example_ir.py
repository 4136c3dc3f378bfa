"""Build docs/example.xml + docs/example.bin, the OpenVINO IR the README's IR scan example reads.

python docs/example_ir.py (needs the `engines` extra: openvino). Three clips: a float32 Clamp (Relu6), an
int8 Clamp with fractional bounds (OpenVINO ceils min and floors max; DirectML truncates), and Relu6 as
Minimum(Maximum(x, 0), 6) with its bounds as Const layers in the .bin.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset13 as ops


def build() -> ov.Model:
    x = ops.parameter([1, 16], ov.Type.f32, name="x")
    q = ops.parameter([1, 16], ov.Type.i8, name="q")
    relu6 = ops.clamp(x, 0.0, 6.0, name="relu6")
    q_clamp = ops.clamp(q, -0.5, 100.7, name="q_clamp")
    floor = ops.maximum(x, ops.constant(np.float32(0.0), name="zero"), name="relu6_max")
    pair = ops.minimum(floor, ops.constant(np.float32(6.0), name="six"), name="relu6_min")
    outputs = [ops.result(n, name=f"{n.get_friendly_name()}_out") for n in (relu6, q_clamp, pair)]
    return ov.Model(outputs, [x, q], "clipbridge-example-ir")


if __name__ == "__main__":
    ov.save_model(build(), Path(__file__).with_name("example.xml"), compress_to_fp16=False)
