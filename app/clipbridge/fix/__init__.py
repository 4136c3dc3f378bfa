"""Rewrite a whole ONNX model so that engine B computes what engine A computes, and prove it with a diff: the facts of
each clip, the rules that rewrite it, the rewrite, its replay and proof, the report's pydantic model (`models`) and
its findings view for the output formats (`formats`, written by clipbridge.reports).

Imports diff, scan, the report formats, the engines and core; imported by the API and the CLI, never by a layer
below them (tests/test_architecture.py).
"""
