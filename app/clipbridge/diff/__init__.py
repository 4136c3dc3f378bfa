"""Whole-model diff: run a model on real engines and explain every difference by its clip (docs/diff.md): the
inputs, the runs in a child process, the comparison, the causes, the report, its output formats (reusing
clipbridge.lint's SARIF, GitHub and Markdown pieces) and the repro bundle.

Imports scan (the clip-like patterns), lint, the engines and core; imported by fix, the API and the CLI, never by
scan, lint, the service or the dialects (tests/test_architecture.py).
"""
