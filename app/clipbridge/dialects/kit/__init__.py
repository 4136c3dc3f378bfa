"""The dialect kit: what every dialect is built from. base.py is the Dialect interface (so nothing else names a
dialect); spec_base.py the pydantic pieces of every wire spec; common.py the emit result, the mode and the
preserve search; tensor_bounds.py the shared per-element bound rules; crossed.py min > max in preserve mode (both
bounds written as the value the source gives); runtime_support.py the table of what the engines cannot run
(app/clipbridge/data/runtime_support.json).

Imports only core and itself (tests/test_architecture.py). Imported by the dialects, the service, scan, lint, the
API and the CLI.
"""
