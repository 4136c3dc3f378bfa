"""The chain's test models, built here with torch.export and saved with torch.export.save (run as a script to write
them: `python -m tests.chain.models OUT_DIR`).

- `clamps`: every clamp form the converters lower differently, each fed the input directly (so NaN, +-inf and
  FLT_MAX reach it): ReLU6, Hardtanh, Hardswish, HardSigmoid, clamp with float and int literals, one-sided clamps
  (float and int), a constant min > max clamp; one output per form.
- `clamp_min_int`: `torch.clamp_min(x, 0)` with an int literal (Core ML's converter refuses it).
- `mobilenet`: a MobileNetV2/V3-style block (conv, ReLU6, depthwise conv, Hardswish, SE with HardSigmoid).
- `inf_bounds`: clamps with an infinite bound (torch.clamp(x, -inf, 6), torch.clamp(x, 0, inf), hardtanh(x, -inf,
  2)): litert-torch keeps the infinite constant.
- `conv_hardswish`: a convolution straight into Hardswish: an inf input reaches a convolution with no activation
  fused into it (LiteRT's builtin CONV_2D saturates it, `conv-saturates-inf`).
- `root_clamps`: functional clamps in the root module's own `forward` that the model does not return (LiteRT names
  their tensors by the root module only: found by their predicted lowering), one after an unfused convolution,
  one two-sided, one fused into a MUL.
- `conv_relu`: a convolution with ReLU fused into it (CONV_2D (fused RELU)): the builtin kernels saturate inf there.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import torch
from torch import nn

# (output name, the torch form): the forms of converter-chain-notes.md's lowering table.
FORMS = ("relu6", "hardtanh", "hardswish", "hardsigmoid", "clamp_float", "clamp_int", "min_float", "min_int",
         "max_float", "max_int", "min_gt_max")


class Clamps(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.relu6, self.hardtanh, self.hardswish = nn.ReLU6(), nn.Hardtanh(-1.0, 1.0), nn.Hardswish()
        self.hardsigmoid = nn.Hardsigmoid()

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return (self.relu6(x), self.hardtanh(x), self.hardswish(x), self.hardsigmoid(x),
                torch.clamp(x, -2.0, 2.0), torch.clamp(x, -2, 2), torch.clamp(x, min=0.0), torch.clamp(x, min=0),
                torch.clamp(x, max=6.0), torch.clamp(x, max=6), torch.clamp(x, 1.0, -1.0))


class ClampMinInt(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.clamp_min(x, 0) + 1.0


class MobileBlock(nn.Module):
    """Expand (1x1 conv, ReLU6), depthwise 3x3 (Hardswish), squeeze-excite (HardSigmoid), project."""

    def __init__(self, c: int = 16, e: int = 64) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, c, 3, padding=1), nn.ReLU6())
        self.expand = nn.Sequential(nn.Conv2d(c, e, 1), nn.ReLU6())
        self.dw = nn.Sequential(nn.Conv2d(e, e, 3, padding=1, groups=e), nn.Hardswish())
        self.se = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(e, 16, 1), nn.ReLU(), nn.Conv2d(16, e, 1),
                                nn.Hardsigmoid())
        self.project = nn.Conv2d(e, c, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = self.stem(x)
        y = self.dw(self.expand(s))
        return self.project(y * self.se(y)) + s


class InfBounds(nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        inf = float("inf")
        return torch.clamp(x, -inf, 6.0), torch.clamp(x, 0.0, inf), nn.functional.hardtanh(x, -inf, 2.0)


class ConvHardswish(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv, self.act = nn.Conv2d(3, 4, 3, padding=1), nn.Hardswish()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.conv(x))


class RootClamps(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        a = torch.clamp(self.conv(x), max=6.0)  # an unfused CONV_2D, then MINIMUM
        b = torch.clamp(x, -2.0, 2.0) * 3.0  # MAXIMUM -> MINIMUM
        c = torch.clamp(x * 2.0, 0.0, 6.0)  # MUL with RELU6 fused
        return a + 1.0, b + c


class ConvRelu(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.block = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.block(x)


def _save(module: nn.Module, shape: tuple[int, ...]) -> bytes:
    torch.manual_seed(0)
    ep = torch.export.export(module.eval(), (torch.randn(*shape),))
    buf = io.BytesIO()
    torch.export.save(ep, buf)
    return buf.getvalue()


def clamps() -> bytes:
    return _save(Clamps(), (1, 64))


def clamp_min_int() -> bytes:
    return _save(ClampMinInt(), (1, 16))


def mobilenet(size: int = 32, channels: int = 16, expand: int = 64) -> bytes:
    return _save(MobileBlock(channels, expand), (1, 3, size, size))


def inf_bounds() -> bytes:
    return _save(InfBounds(), (1, 8))


def conv_hardswish() -> bytes:
    return _save(ConvHardswish(), (1, 3, 8, 8))


def root_clamps() -> bytes:
    return _save(RootClamps(), (1, 3, 8, 8))


def conv_relu() -> bytes:
    return _save(ConvRelu(), (1, 3, 8, 8))


MODELS = {"clamps": clamps, "clamp_min_int": clamp_min_int, "mobilenet": mobilenet, "inf_bounds": inf_bounds,
          "conv_hardswish": conv_hardswish, "root_clamps": root_clamps, "conv_relu": conv_relu}


if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    out.mkdir(parents=True, exist_ok=True)
    for name, build in MODELS.items():
        (out / f"{name}.pt2").write_bytes(build())
        print(out / f"{name}.pt2")
