"""JAX on XLA's CPU: the StableHLO dialect's backend."""

from __future__ import annotations

from clipbridge.engines.runtimes.base import Runtime

RUNTIME = Runtime("jax", "jax", ("jax",), "jax", frozenset({"backend"}))
