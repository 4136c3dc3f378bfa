"""LiteRT (ai-edge-litert): runs the TFLite dialect's artifacts and the chain's .tflite files (XNNPACK or the
builtin kernels, clipbridge.engines.config.litert_settings)."""

from __future__ import annotations

from clipbridge.engines.runtimes.base import Runtime

RUNTIME = Runtime("litert", "ai_edge_litert", ("ai-edge-litert",), "litert", frozenset({"backend"}),
                  table_names=("tflite", "tflite:builtin"))  # the chain's two LiteRT stages
