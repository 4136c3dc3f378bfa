"""The `clipbridge` command: main.py parses the arguments and runs serve, translate, scan, dialects and schemas;
lint.py the linter's commands (scan, lint, explain, probe, bundle) and output.py their formats and tables; diff.py
`clipbridge diff` and fix.py its --fix.

Part of the top (docs/architecture.md): may import every layer below it; imported only by app/clipbridge/__main__.py and the
`clipbridge` entry point. It imports the server's modules only inside `clipbridge serve` (a declared exception).
"""
