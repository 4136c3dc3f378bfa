"""Models for the diff tests: MobileNetV2/V3-style blocks written in torch (torchvision does not import with
the CPU torch) and exported with torch.onnx.export, plus hand-built ONNX graphs."""

from __future__ import annotations

import io

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F32 = TensorProto.FLOAT
IR = 8  # onnxruntime and OpenVINO both read IR 8 with every opset used here


def _torch_blocks():
    import torch
    from torch import nn

    class ConvBNAct(nn.Sequential):
        def __init__(self, cin: int, cout: int, k: int = 3, s: int = 1, groups: int = 1, act=nn.ReLU6) -> None:
            super().__init__(nn.Conv2d(cin, cout, k, s, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout),
                             act())

    class InvertedResidual(nn.Module):
        """MobileNetV2: expand 1x1 (ReLU6), depthwise 3x3 (ReLU6), project 1x1 (linear), residual when it fits."""

        def __init__(self, cin: int, cout: int, s: int, expand: int) -> None:
            super().__init__()
            mid = cin * expand
            self.res = s == 1 and cin == cout
            self.body = nn.Sequential(ConvBNAct(cin, mid, 1), ConvBNAct(mid, mid, 3, s, groups=mid),
                                      nn.Conv2d(mid, cout, 1, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            return x + self.body(x) if self.res else self.body(x)

    class SqueezeExcite(nn.Module):
        """MobileNetV3: global pool, 1x1 (ReLU), 1x1 (Hardsigmoid), scale."""

        def __init__(self, c: int) -> None:
            super().__init__()
            self.fc1, self.fc2 = nn.Conv2d(c, max(8, c // 4), 1), nn.Conv2d(max(8, c // 4), c, 1)

        def forward(self, x):
            s = torch.nn.functional.adaptive_avg_pool2d(x, 1)
            return x * torch.nn.functional.hardsigmoid(self.fc2(torch.relu(self.fc1(s))))

    class MobileNetV2Like(nn.Module):
        def __init__(self, classes: int = 1000) -> None:
            super().__init__()
            self.features = nn.Sequential(ConvBNAct(3, 16, 3, 2), InvertedResidual(16, 16, 1, 1),
                                          InvertedResidual(16, 24, 2, 6), InvertedResidual(24, 24, 1, 6),
                                          InvertedResidual(24, 32, 2, 6), ConvBNAct(32, 128, 1))
            self.head = nn.Linear(128, classes)

        def forward(self, x):
            return self.head(self.features(x).mean((2, 3)))

    class MobileNetV3Like(nn.Module):
        def __init__(self, classes: int = 100) -> None:
            super().__init__()
            self.stem = ConvBNAct(3, 16, 3, 2, act=nn.Hardswish)
            self.se = SqueezeExcite(16)
            self.tail = ConvBNAct(16, 48, 1, act=nn.Hardswish)
            self.head = nn.Linear(48, classes)

        def forward(self, x):
            return self.head(self.tail(self.se(self.stem(x))).mean((2, 3)))

    return MobileNetV2Like, MobileNetV3Like


def _export(module, shape: tuple[int, ...]) -> bytes:
    import torch
    torch.manual_seed(0)
    m = module()
    for p in m.modules():  # random but non-trivial BatchNorm statistics, so the folded Convs are not identities
        if isinstance(p, torch.nn.BatchNorm2d):
            p.running_mean.uniform_(-0.1, 0.1)
            p.running_var.uniform_(0.5, 1.5)
    m.eval()
    buf = io.BytesIO()
    torch.onnx.export(m, (torch.randn(*shape),), buf, input_names=["image"], output_names=["logits"],
                      opset_version=17, dynamo=False)
    return buf.getvalue()


def mobilenet_v2(size: int = 32) -> bytes:
    return _export(_torch_blocks()[0], (1, 3, size, size))


def mobilenet_v3(size: int = 32) -> bytes:
    return _export(_torch_blocks()[1], (1, 3, size, size))


def graph(nodes, inits=(), shape=(4,), opset: int = 13, elem: int = F32, inputs=None) -> bytes:
    """x -> nodes -> y (hand-built)."""
    ins = inputs or [helper.make_tensor_value_info("x", elem, list(shape))]
    g = helper.make_graph(list(nodes), "g", ins, [helper.make_tensor_value_info("y", elem, list(shape))],
                          list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=IR)
    onnx.checker.check_model(m)
    return m.SerializeToString()


def const(name: str, value, dtype=np.float32) -> TensorProto:
    return numpy_helper.from_array(np.array(value, dtype=dtype), name)


def relu_chain() -> bytes:
    """x -> Mul(2) -> Relu -> Add(1) -> y: the Relu is the first clip-like node after the input."""
    return graph([helper.make_node("Mul", ["x", "two"], ["a"], name="scale"),
                  helper.make_node("Relu", ["a"], ["r"], name="relu_1"),
                  helper.make_node("Add", ["r", "one"], ["y"], name="shift")],
                 [const("two", 2.0), const("one", 1.0)])


def hardsigmoid_chain() -> bytes:
    return graph([helper.make_node("Mul", ["x", "two"], ["a"], name="scale"),
                  helper.make_node("HardSigmoid", ["a"], ["h"], name="hsig_1", alpha=1 / 6, beta=0.5),
                  helper.make_node("Add", ["h", "one"], ["y"], name="shift")],
                 [const("two", 2.0), const("one", 1.0)])


def clip_chain(lo: float | None = 0.0, hi: float | None = 6.0) -> bytes:
    ins = ["a", "lo" if lo is not None else "", "hi" if hi is not None else ""]
    inits = [const("two", 2.0)] + [const(n, v) for n, v in (("lo", lo), ("hi", hi)) if v is not None]
    return graph([helper.make_node("Mul", ["x", "two"], ["a"], name="scale"),
                  helper.make_node("Clip", [i for i in ins], ["y"], name="clip_1")], inits)


def plain_chain() -> bytes:
    """No clip-like op at all: engines agree on every input the generator makes."""
    return graph([helper.make_node("Mul", ["x", "two"], ["a"], name="scale"),
                  helper.make_node("Add", ["a", "two"], ["y"], name="shift")], [const("two", 2.0)])
