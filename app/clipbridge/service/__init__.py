"""The use cases over the dialect registry: translate (resolve, emit, compare, the memo), execute (the kernels or an
engine backend), the spec unions (specs), /v1/dialects' capabilities and the field names of validation errors.

Imports core, the kernels, the engines, the dialect kit and the dialects (through clipbridge.dialects.registry), never
scan, lint, diff, fix or the top; names no dialect in code except the declared exceptions in
tests/test_architecture.py. Imported by scan, lint, the API and the CLI.
"""
