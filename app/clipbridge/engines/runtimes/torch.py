"""PyTorch eager: the PyTorch dialect's engine and the chain's source. PyPI's Linux x86-64 torch is the CUDA build;
the CPU index saves several GB (docs/install.md), an option, never a requirement."""

from __future__ import annotations

from clipbridge.engines.runtimes.base import Runtime

TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
RUNTIME = Runtime("torch", "torch", ("torch",), "torch", frozenset({"backend"}),
                  install_note=f"add --extra-index-url {TORCH_INDEX} for the CPU-only build, several GB smaller")
