"""The foundation: exact arithmetic and numbers (exact, numbers), dtypes, the Meaning data model (meaning) and its
evaluation (evaluate), the comparison of two meanings with its witnesses (drift, critical), findings and errors,
and the shared plumbing of settings, the memo, tensors on the wire, JSON depth and suggestions.

Imports only itself (tests/test_architecture.py), and names no dialect in code except the declared exceptions
there. Imported by every other package of app/.
"""
