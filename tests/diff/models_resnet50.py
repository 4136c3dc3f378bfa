"""ResNet-50 as published (He et al. 2015; torchvision's definition: bottleneck blocks [3, 4, 6, 3], width 64,
expansion 4, stride on the 3x3), seeded weights, exported at 224x224: the model issue 46 could not diff (77 MB of
captured tensors against the old fixed 64 MiB cap). Written here because torchvision does not install with the
CPU torch of this environment."""

from __future__ import annotations

import io


def _module():
    import torch
    from torch import nn

    class Bottleneck(nn.Module):
        def __init__(self, cin: int, width: int, stride: int) -> None:
            super().__init__()
            cout = width * 4
            self.c1, self.b1 = nn.Conv2d(cin, width, 1, bias=False), nn.BatchNorm2d(width)
            self.c2, self.b2 = nn.Conv2d(width, width, 3, stride, 1, bias=False), nn.BatchNorm2d(width)
            self.c3, self.b3 = nn.Conv2d(width, cout, 1, bias=False), nn.BatchNorm2d(cout)
            self.down = None if stride == 1 and cin == cout else nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            y = torch.relu(self.b1(self.c1(x)))
            y = torch.relu(self.b2(self.c2(y)))
            y = self.b3(self.c3(y))
            return torch.relu(y + (x if self.down is None else self.down(x)))

    class ResNet50(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                                      nn.MaxPool2d(3, 2, 1))
            blocks, cin = [], 64
            for width, count, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
                for k in range(count):
                    blocks.append(Bottleneck(cin, width, stride if k == 0 else 1))
                    cin = width * 4
            self.layers = nn.Sequential(*blocks)
            self.fc = nn.Linear(2048, 1000)

        def forward(self, x):
            return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(self.layers(self.stem(x)), 1), 1))
    return torch, nn, ResNet50()


def resnet50() -> bytes:
    """ONNX bytes (opset 17), batch 1, 3x224x224, seeded weights and BatchNorm statistics."""
    import torch
    torch.manual_seed(0)  # before the module: its weights are drawn when it is built
    torch, nn, module = _module()
    for m in module.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.1, 0.1)
            m.running_var.uniform_(0.5, 1.5)
    module.eval()
    buf = io.BytesIO()
    with torch.no_grad():
        torch.onnx.export(module, (torch.randn(1, 3, 224, 224),), buf, input_names=["image"], output_names=["out"],
                          opset_version=17, dynamo=False)
    return buf.getvalue()


if __name__ == "__main__":  # python -m tests.diff.models_resnet50 OUT.onnx
    import sys
    from pathlib import Path
    Path(sys.argv[1]).write_bytes(resnet50())
