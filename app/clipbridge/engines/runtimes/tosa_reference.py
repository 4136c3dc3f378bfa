"""The TOSA reference model (tosa-tools): the TOSA dialect's backend."""

from __future__ import annotations

from clipbridge.engines.runtimes.base import Runtime

RUNTIME = Runtime("tosa-reference", "tosa_serializer", ("tosa-tools",), "tosa", frozenset({"backend"}))
