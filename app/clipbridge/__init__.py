"""clipbridge: translate the Clip/Clamp operator between ten ML dialects, and report where the meaning drifts.

The layers, from the bottom: core (exact, numbers, errors, dtypes, meaning, findings, ...), the dialects
(app/clipbridge/dialects/), the service (translate, execute, specs, capabilities), scan/lint/diff/fix, and the top (api/,
cli.py, main.py, serving.py, client.py). Imports run downward only; docs/architecture.md draws them and
tests/test_architecture.py enforces them."""

__version__ = "0.1.0"
