"""Whole-model diff: run a model on real engines and explain every difference by its clip (docs/diff.md): the inputs,
the runs in a child process, the comparison, the causes, the report and its pydantic model (`models`), its findings
view for the CI formats (`formats`, written by clipbridge.reports) and the repro bundle.

Imports scan (the clip-like patterns), the report formats, the engines and core; imported by fix, the API and the
CLI, never by scan, lint, the service or the dialects (tests/test_architecture.py).
"""
