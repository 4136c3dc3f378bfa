"""Core ML (coremltools): builds the Core ML dialect's MIL program and the chain's .mlpackage on Linux; runs them only
on Apple devices."""

from __future__ import annotations

from clipbridge.engines.runtimes.base import Runtime

RUNTIME = Runtime("coreml", "coremltools", ("coremltools",), "coreml")
